"""What the real client does with a plugin's hooks.json that names an event it does not know.

The plugin route registers every event the bundled plugins use (SubagentStart,
StopFailure too), with no `claude --version` check to gate them as `omcm install`
does. That is safe only if a client meeting an unknown event name in a plugin's
hooks.json ignores that entry and keeps the rest of the plugin: measured here on
the pinned client (the oldest omcm supports) and the latest.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import LATEST_CLIENT, client_or_skip
from e2e_harness import Harness
from fake_anthropic import text

pytestmark = pytest.mark.e2e


def noting_plugin(folder: Path, note: Path) -> Path:
    """A plugin whose hooks note their event; one of them is an event no client has."""
    (folder / ".claude-plugin").mkdir(parents=True)
    manifest = {"name": "probe", "version": "0.1.0", "description": "notes its hooks", "hooks": "./hooks.json"}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    market = {"name": "probe", "owner": {"name": "t"}, "plugins": [{"name": "probe", "source": "./"}]}
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(market))
    hooks = {
        event: [{"hooks": [{"type": "command", "command": f"cat >/dev/null; echo {event} >> '{note}'"}]}]
        for event in ("NoSuchEventYet", "SessionStart", "UserPromptSubmit", "SubagentStart", "StopFailure")
    }
    (folder / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return folder


@pytest.mark.parametrize("version", ["pinned", "latest"])
def test_an_unknown_event_in_a_plugins_hooks_is_ignored_and_the_rest_runs(tmp_path, claude_binary, version):
    binary = claude_binary if version == "pinned" else client_or_skip(LATEST_CLIENT)
    note = tmp_path / "note"
    plugin = noting_plugin(tmp_path / "probe", note)
    harness = Harness(tmp_path / "world", binary, install_hooks=False)
    try:
        for args in (("marketplace", "add", str(plugin)), ("install", "probe@probe")):
            done = subprocess.run(
                [str(binary), "plugin", *args], env=harness.env(), capture_output=True, text=True, timeout=120
            )
            assert done.returncode == 0, done.stdout + done.stderr
        run = harness.session([[text("hello")]], prompt="hi")
        assert run.returncode == 0 and run.turns_served == 1, run.explain()
        ran = note.read_text().split() if note.exists() else []
        # The plugin was loaded: its known events ran; the unknown one was skipped, not fatal.
        assert "SessionStart" in ran and "UserPromptSubmit" in ran, (ran, run.explain())
        assert "NoSuchEventYet" not in ran
        log = run.debug_log.read_text(errors="replace")
        said = [line for line in log.splitlines() if "NoSuchEventYet" in line]
        print(f"client {version}: hooks that ran {ran}; debug lines naming the unknown event: {said[:3]}")
    finally:
        harness.close()
