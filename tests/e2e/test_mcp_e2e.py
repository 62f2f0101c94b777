"""The real client starts ``omcm mcp`` (registered by ``omcm install``), the model calls its tools, the answer reaches it."""

from __future__ import annotations

import json

import pytest
from fake_anthropic import bash, text, tool_use

pytestmark = pytest.mark.e2e


def test_the_model_searches_what_omcm_recorded_through_mcp(e2e_factory):
    e2e = e2e_factory(mcp=True)
    state = json.loads((e2e.home / ".claude.json").read_text())
    assert state["mcpServers"]["omcm"]["args"][-1] == "mcp"  # written by the harness's `omcm install`
    marker = "zebra-marker-4711"
    search = tool_use("mcp__omcm__search", {"query": marker})
    run = e2e.session([[bash(f"echo {marker}")], [search], [text("found it")]], prompt="what did echo print?")
    assert run.returncode == 0, run.explain()
    answer, is_error = run.tool_result(search["id"])
    assert not is_error, answer
    hits = json.loads(answer)["hits"]
    assert hits and marker in hits[0]["what"] and hits[0]["tool"] == "Bash"
    # The answer is what the model read next.
    assert marker in run.main_requests[2].tool_results()[search["id"]][0]
