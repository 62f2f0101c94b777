"""The shipped plugins, judged by the real Claude Code client: what reaches the model, what runs."""

from __future__ import annotations

import json

import pytest
from fake_anthropic import bash, read, text

pytestmark = pytest.mark.e2e


def test_tool_counter_suggestion_reaches_the_model(e2e):
    files = []
    for n in range(5):
        path = e2e.project / f"f{n}.txt"
        path.write_text(f"file {n}\n")
        files.append(path)
    reads = [read(path) for path in files]
    run = e2e.session([[call] for call in reads] + [[text("read them all")]], prompt="read the five files")
    assert run.returncode == 0, run.explain()
    assert run.turns_served == 6
    suggestion = "5 consecutive Read calls detected. The Glob or Grep tools can explore files more efficiently."
    # Said exactly when the run reaches 5: the request after the fifth Read carries it, not the one before.
    assert suggestion not in run.main_requests[4].all_text()
    after_fifth = run.main_requests[5]
    assert suggestion in after_fifth.all_text(), run.explain()
    assert after_fifth.all_text().count(suggestion) == 1
    assert run.tool_result(reads[4]["id"]) == ("1\tfile 4\n2\t", False)
