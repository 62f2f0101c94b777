"""PostModelSwitch in the interactive client: the plugin's context reaches the next request the new model serves.

In ``-p`` mode ``/model haiku`` fires PreModelSwitch and PostModelSwitch but the
run then ends with no request (and the switch holds for that run only), so the
context can only be seen here. The plugin is tests/events/plugin: its
post_model_switch answers ``now <to_model> (was <from_model>)``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from api_messages import text
from claude_client import CLIENT_VERSION
from conftest import LATEST_CLIENT, client_or_skip
from e2e_harness import Harness
from fake_anthropic import FakeAnthropic
from interactive import PROMPT, Interactive

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(tmp_path, every_event_site, request):
    if shutil.which("tmux") is None and not Path("/usr/bin/tmux").exists():
        if os.environ.get("CI"):
            pytest.fail("tmux is not installed (CI is set, so this fails): apt-get install tmux")
        pytest.skip("tmux is not installed (apt-get install tmux)")
    claude = client_or_skip(request.node.callspec.params["version"])
    harness = Harness(
        tmp_path / "world",
        claude,
        extra_env={
            "PATH": f"{claude.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": str(every_event_site),
            "OMCM_LOAD_PLUGINS": "every-event",
        },
    )
    try:
        yield harness
    finally:
        harness.close()


@pytest.mark.parametrize("version", [CLIENT_VERSION, LATEST_CLIENT])
def test_interactive_post_model_switch_context_reaches_the_new_models_first_request(world, version):
    with (
        FakeAnthropic([[text("switched and ready")]], final_text="Done.") as api,
        Interactive(world, api, args=("--permission-mode", "default"), name="model") as tui,
    ):
        tui.wait_for(lambda s: PROMPT in s, 90, "the input prompt")
        tui.type("/model haiku")
        tui.wait_for(lambda s: "Set model to" in s, 60, "the model switch")
        tui.type("hello")
        tui.wait_for(lambda s: "switched and ready" in s, 60, "the first turn on the new model")
        request = api.main_requests[-1]
        body = json.dumps(request.body)
        assert "haiku" in str(request.body.get("model")), request.body.get("model")
        assert "now claude-haiku" in body, request.all_text()[-2000:]
