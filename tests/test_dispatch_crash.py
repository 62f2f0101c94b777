"""A bug in omcm itself (not in a plugin) fails open, except at a configured guard's gate: denied.

The bug is planted by a real installed plugin whose import replaces the core's merge with one that
raises, so the crash happens inside ``dispatch.handle`` of a real ``omcm hook`` process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from omcm_core.testing import install_plugin_module, post_tool_payload, pre_tool_payload, run_hook

BREAKS_MERGE = """
from omcm_core import hookimpl
from omcm_core._runtime import merge


def _broken(event_name, answers):
    raise RuntimeError("a bug in omcm's merge")


merge.merge = _broken


@hookimpl
def pre_tool(event):
    return None


@hookimpl
def post_tool(event):
    return None
"""


@pytest.fixture
def env(tmp_path):
    site = tmp_path / "site"
    install_plugin_module(site, "mergebug", BREAKS_MERGE)
    home = tmp_path / "home"
    return {"PYTHONPATH": str(site), "OMCM_HOME": str(home), "OMCM_LOAD_PLUGINS": "mergebug"}


def _guarded(env: dict) -> dict:
    os.makedirs(env["OMCM_HOME"], mode=0o700, exist_ok=True)
    (Path(env["OMCM_HOME"]) / "config.toml").write_text('[core]\nfail_closed = ["bash-guard"]\n')
    return env


def log_events(env: dict) -> list[dict]:
    path = Path(env["OMCM_HOME"]) / "logs" / "omcm.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_crash_answers_nothing_when_no_guard_is_configured(env):
    proc = run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env, event="PreToolUse", strict=False)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert [e["event"] for e in log_events(env) if "crash" in e["event"]] == ["dispatch_crashed"]


def test_a_crash_at_a_guarded_gate_denies(env):
    proc = run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=_guarded(env), event="PreToolUse", strict=False)
    assert proc.returncode == 0
    specific = json.loads(proc.stdout)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "the bash-guard guard is unavailable" in specific["permissionDecisionReason"]
    events = [e["event"] for e in log_events(env) if "crash" in e["event"]]
    assert events == ["dispatch_crashed", "crash_denied"]


def test_a_crash_after_the_tool_ran_still_answers_nothing(env):
    proc = run_hook(post_tool_payload("Bash", {"command": "ls"}, {"stdout": ""}), env=_guarded(env), strict=False)
    assert (proc.returncode, proc.stdout) == (0, b"")


def test_a_crash_at_a_guarded_gate_denies_in_the_agents_form(env):
    payload = pre_tool_payload("run_shell_command", {"command": "ls"}, hook_event_name="BeforeTool")
    proc = run_hook(payload, env={**_guarded(env), "OMCM_AGENT": "gemini"}, event="BeforeTool", strict=False)
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert out["decision"] == "deny" and "guard is unavailable" in out["reason"]
