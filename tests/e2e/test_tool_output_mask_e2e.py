"""[core] mask_tool_output in the real client: a secret a Bash command prints never reaches the model.

A Bash tool prints a GitHub token; with the setting on, the model's next
request holds the masked text (PostToolUse ``updatedToolOutput``); with it off
(the default), the model gets the token as printed.
"""

import pytest
from e2e_harness import DEFAULT_CONFIG
from fake_anthropic import bash, text

pytestmark = pytest.mark.e2e

TOKEN = "gh" + "p_" + "Zr8kQ2mV9xLp4Tn7Wc1bYd5Hs3Jf6aB0cD9e"


def _session(harness):
    call = bash(f"echo 'deploy token: {TOKEN}'")
    run = harness.session([[call], [text("done")]], prompt="print the token")
    return run.tool_result(call["id"])[0], run


def test_on_the_model_sees_the_output_masked(e2e_factory):
    harness = e2e_factory(config=DEFAULT_CONFIG.replace("[core]\n", "[core]\nmask_tool_output = true\n", 1))
    seen, run = _session(harness)
    assert "deploy token: [REDACTED:github-token]" in seen
    assert TOKEN not in run.main_requests[1].all_text()


def test_off_by_default_the_model_sees_what_the_tool_printed(e2e):
    seen, _run = _session(e2e)
    assert TOKEN in seen
