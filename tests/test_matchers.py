"""Tool matchers from what plugins declare (``handles_tools``), and ``omcm install`` registering them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from omcm_core._cli.matchers import declared, for_events, place, union

HOOK_OF = {"PreToolUse": "pre_tool", "PostToolUse": "post_tool", "PermissionRequest": "permission_request"}


@pytest.mark.parametrize(
    ("value", "hook", "expected"),
    [
        (None, "pre_tool", None),
        (("Bash", "Edit"), "pre_tool", ("Bash", "Edit")),
        ({"pre_tool": ["Bash"]}, "pre_tool", ("Bash",)),
        ({"pre_tool": ["Bash"]}, "post_tool", None),  # a hook left out wants every tool
        ("Bash", "pre_tool", None),  # a string where a list belongs: every tool, never B|a|s|h
        ((), "pre_tool", None),
        (("Bash", 3), "pre_tool", None),
        (("Bash", "*"), "pre_tool", None),
        ((" Read ",), "pre_tool", ("Read",)),
        (42, "pre_tool", None),
    ],
)
def test_declared(value, hook, expected):
    assert declared(value, hook) == expected


@pytest.mark.parametrize(
    ("declarations", "expected"),
    [
        ([], None),
        ([None], None),
        ([("Bash",), None], None),  # one plugin wants every tool: no matcher
        ([("Edit", "Bash"), ("Bash", "Write")], "Bash|Edit|Write"),
        ([("Edit",), ("mcp__github__.*",)], "^(?:Edit|mcp__github__.*)$"),
        ([("mcp__my-server__get",), ("Bash",)], "^(?:Bash|mcp__my-server__get)$"),
    ],
)
def test_union(declarations, expected):
    assert union(declarations) == expected


def test_for_events_only_tool_events():
    guide = SimpleNamespace(handles_tools={"pre_tool": ("Bash", "Edit")})
    everything = SimpleNamespace()
    plugins = {"pre_tool": [guide], "post_tool": [guide, everything], "session_start": [guide]}
    events = ["PreToolUse", "PostToolUse", "SessionStart"]
    assert for_events(events, {**HOOK_OF, "SessionStart": "session_start"}, plugins) == {"PreToolUse": "Bash|Edit"}


def test_place_only_touches_a_group_holding_our_handler_alone():
    ours, theirs = {"command": "omcm"}, {"command": "theirs"}
    groups = [{"hooks": [theirs]}, {"hooks": [ours]}]
    assert place(groups, ours, "Bash") and groups[1] == {"matcher": "Bash", "hooks": [ours]}
    assert not place(groups, ours, "Bash")
    assert place(groups, ours, None) and groups[1] == {"hooks": [ours]}
    shared = [{"matcher": "*", "hooks": [ours, theirs]}]
    assert not place(shared, ours, "Bash") and shared[0]["matcher"] == "*"


def test_install_registers_the_union_and_updates_it(tmp_path):
    settings = tmp_path / "settings.json"
    env = {**os.environ, "OMCM_HOME": str(tmp_path / "home"), "OMCM_NATIVE_CLIENT": "0"}

    def install(plugins: str) -> dict:
        proc = subprocess.run(
            [sys.executable, "-m", "omcm_core", "install", "--settings", str(settings)],
            capture_output=True,
            text=True,
            env={**env, "OMCM_LOAD_PLUGINS": plugins},
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(settings.read_text())["hooks"]

    def matcher(hooks: dict, event: str) -> str | None:
        (group,) = hooks[event]
        return group.get("matcher")

    hooks = install("pre-tool-guide")  # declares Bash and the file tools for pre_tool
    assert matcher(hooks, "PreToolUse") == "Bash|Edit|MultiEdit|NotebookEdit|Write"
    assert matcher(hooks, "PostToolUse") is None  # it learns from every call
    hooks = install("pre-tool-guide,post-tool-observer")  # the observer wants every tool
    assert matcher(hooks, "PreToolUse") is None
    hooks = install("pre-tool-guide")
    assert matcher(hooks, "PreToolUse") == "Bash|Edit|MultiEdit|NotebookEdit|Write"
    assert len(hooks["PreToolUse"]) == 1  # rewritten in place, not doubled
