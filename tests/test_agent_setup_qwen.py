"""`omcm install|uninstall|doctor --agent qwen`, run as a user runs them: `omcm ...` processes on a fresh HOME.

Qwen Code 0.24 reads ``~/.qwen/settings.json`` in Claude Code's format; the real CLI running what
this writes is tests/e2e/test_qwen_e2e.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli.agent_setup import qwen
from omcm_core._cli.settings_file import _manifest_path, agent_of, reinstall_argv

pytest.importorskip("omcm_tool_counter", reason="omcm install needs a plugin's hooks")

#: A user's own file: four-space indent, a hook of theirs, other settings.
ORIGINAL = (
    b'{\n    "model": {"name": "qwen3-coder"},\n    "hooks": {"Stop": [{"hooks": '
    b'[{"type": "command", "command": "echo mine"}]}]}\n}\n'
)


@pytest.fixture
def user(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMCM_", "CLAUDE_", "QWEN_"))}
    env.update(HOME=str(home), OMCM_HOME=str(tmp_path / "omcm"), OMCM_DAEMON="0", OMCM_NATIVE_CLIENT="0")
    return home, env


def omcm(env, *argv, ok=True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", *map(str, argv)], capture_output=True, text=True, env=env, timeout=120
    )
    assert (proc.returncode == 0) == ok, f"omcm {argv}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def hooks_of(path: Path) -> dict[str, list[str]]:
    data = json.loads(path.read_text())
    return {e: [h["command"] for g in groups for h in g["hooks"]] for e, groups in data.get("hooks", {}).items()}


def test_install_writes_qwens_file_with_the_agent_named_and_uninstall_restores_its_bytes(user):
    home, env = user
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(ORIGINAL)
    out = omcm(env, "install", "--agent", "qwen").stdout
    assert f"omcm installed for Qwen Code in {settings}" in out
    hooks = hooks_of(settings)
    assert hooks["Stop"][0] == "echo mine"  # theirs first, kept
    ours = {e: [c for c in cs if "fast_hook.py" in c] for e, cs in hooks.items()}
    assert ours["PreToolUse"] and ours["PostToolUse"]  # tool-counter, the observer
    assert all(c.startswith("OMCM_AGENT=qwen ") for cs in ours.values() for c in cs)
    from omcm_core.agents.qwen import FIRES

    assert set(hooks) <= FIRES, set(hooks) - FIRES
    assert json.loads(settings.read_text())["model"] == {"name": "qwen3-coder"}
    assert agent_of(Path(env["OMCM_HOME"]), settings) == "qwen"
    # Claude Code's settings are not touched.
    assert not (home / ".claude").exists()
    again = omcm(env, "install", "--agent", "qwen").stdout
    assert "already installed" in again and hooks_of(settings) == hooks
    omcm(env, "uninstall", "--agent", "qwen")
    assert settings.read_bytes() == ORIGINAL
    assert not _manifest_path(Path(env["OMCM_HOME"]), settings).exists()


def test_a_hook_command_written_for_qwen_answers_in_qwens_terms(user, tmp_path):
    """The registered command itself, run through a shell as Qwen Code runs it: the Qwen edge is on."""
    home, env = user
    omcm(env, "install", "--agent", "qwen")
    command = hooks_of(home / ".qwen" / "settings.json")["UserPromptSubmit"][0]
    tick = {"session_id": "s1", "transcript_path": "", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"}
    proc = subprocess.run(
        command,
        shell=True,
        input=json.dumps({**tick, "prompt": ""}),
        capture_output=True,
        text=True,
        env={**env, "OMCM_LOG_LEVEL": "debug"},
    )
    assert (proc.returncode, proc.stdout) == (0, "")
    log = (Path(env["OMCM_HOME"]) / "logs" / "omcm.jsonl").read_text()
    assert '"agent_call_dropped"' in log  # Qwen Code's empty-prompt tick, dropped at the Qwen edge


def test_uninstall_after_the_user_edited_the_file_removes_only_omcms_entries(user):
    home, env = user
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(ORIGINAL)
    omcm(env, "install", "--agent", "qwen")
    data = json.loads(settings.read_text())
    data["ui"] = {"theme": "dark"}
    settings.write_text(json.dumps(data, indent=4))
    omcm(env, "uninstall", "--agent", "qwen")
    after = json.loads(settings.read_text())
    assert after["ui"] == {"theme": "dark"} and after["model"] == {"name": "qwen3-coder"}
    assert hooks_of(settings) == {"Stop": ["echo mine"]}
    assert "mcpServers" not in after


def test_omcm_mcp_is_registered_in_qwens_settings_and_a_users_own_server_is_kept(user):
    home, env = user
    env = {**env, "OMCM_LOAD_PLUGINS": "tool-counter,notepad"}  # notepad gives MCP tools
    settings = home / ".qwen" / "settings.json"
    out = omcm(env, "install", "--agent", "qwen").stdout
    assert "omcm mcp registered with Qwen Code" in out
    server = json.loads(settings.read_text())["mcpServers"]["omcm"]
    assert server["args"][-1] == "mcp" and "type" not in server
    omcm(env, "uninstall", "--agent", "qwen")
    assert not settings.exists() and not settings.parent.exists()  # omcm made both
    # A server of the user's own named "omcm" is theirs: never replaced, never removed.
    settings.parent.mkdir()
    mine = {"mcpServers": {"omcm": {"command": "/opt/my-omcm", "args": ["serve"]}}}
    settings.write_text(json.dumps(mine))
    assert "kept your own MCP server" in omcm(env, "install", "--agent", "qwen").stdout
    omcm(env, "uninstall", "--agent", "qwen")
    assert json.loads(settings.read_text()) == mine


def test_qwen_home_and_an_explicit_settings_file_are_honoured(user, tmp_path):
    home, env = user
    elsewhere = tmp_path / "qwen-home"
    omcm({**env, "QWEN_HOME": str(elsewhere)}, "install", "--agent", "qwen")
    assert hooks_of(elsewhere / "settings.json") and not (home / ".qwen").exists()
    explicit = tmp_path / "project" / ".qwen" / "settings.json"
    omcm(env, "install", "--agent", "qwen", "--settings", explicit)
    assert hooks_of(explicit)
    # What a re-registration (repair, `omcm plugins install`) replays keeps the agent.
    omcm_home = Path(env["OMCM_HOME"])
    assert reinstall_argv(omcm_home, explicit) == ["install", "--settings", str(explicit), "--agent", "qwen"]
    omcm(env, *reinstall_argv(omcm_home, explicit))
    assert all(c.startswith("OMCM_AGENT=qwen ") for cs in hooks_of(explicit).values() for c in cs)


def test_doctor_has_a_qwen_section_that_says_what_is_off(user):
    home, env = user
    out = json.loads(omcm(env, "doctor", "--agent", "qwen", "--json", ok=False).stdout)
    section = {s["name"]: s for s in out["sections"]}["Qwen Code"]
    assert [c["id"] for c in section["checks"]] == ["qwen.registered"] and not section["checks"][0]["ok"]
    # A plain doctor shows no Qwen section while omcm is not registered there.
    plain = json.loads(omcm(env, "doctor", "--json", ok=False).stdout)
    assert "Qwen Code" not in [s["name"] for s in plain["sections"]]
    omcm(env, "install", "--agent", "qwen")
    plain = json.loads(omcm(env, "doctor", "--json", ok=False).stdout)
    checks = {c["id"]: c for c in {s["name"]: s for s in plain["sections"]}["Qwen Code"]["checks"]}
    assert checks["qwen.registered"]["ok"] and "PreToolUse" in checks["qwen.registered"]["message"]
    assert {"qwen.sessions", "qwen.transcript"} <= set(checks)
    assert not {"qwen.stale", "qwen.missing", "qwen.unnamed", "qwen.held_context"} & set(checks)
    # The Claude registration section does not take Qwen's file for a Claude Code settings file.
    registration = {s["name"]: s for s in plain["sections"]}["Registration in Claude Code settings"]
    assert ".qwen" not in json.dumps(registration)
    # Stale: a client that is gone; unnamed: a command without OMCM_AGENT; PostToolUse gone: held context lost.
    settings = home / ".qwen" / "settings.json"
    data = json.loads(settings.read_text())
    pre = data["hooks"]["PreToolUse"][0]["hooks"][0]
    pre["command"] = pre["command"].replace("OMCM_AGENT=qwen ", "").replace("fast_hook.py", "gone/fast_hook.py")
    del data["hooks"]["PostToolUse"]
    settings.write_text(json.dumps(data))
    out = json.loads(omcm(env, "doctor", "--agent", "qwen", "--json", ok=False).stdout)
    checks = {c["id"]: c for c in {s["name"]: s for s in out["sections"]}["Qwen Code"]["checks"]}
    assert checks["qwen.stale"]["level"] == "error" and "gone/fast_hook.py" in checks["qwen.stale"]["message"]
    assert checks["qwen.unnamed"]["level"] == "warning" and "PreToolUse" in checks["qwen.unnamed"]["message"]
    assert checks["qwen.missing"]["level"] == "error" and "PostToolUse" in checks["qwen.missing"]["message"]
    assert checks["qwen.held_context"]["level"] == "warning"
    assert checks["qwen.missing"]["fix"] == "omcm install --agent qwen"


def test_doctor_checks_the_mcp_server_registered_with_qwen(user, tmp_path):
    home, env = user
    env = {**env, "OMCM_LOAD_PLUGINS": "tool-counter,notepad"}  # notepad gives MCP tools
    settings = home / ".qwen" / "settings.json"

    def mcp_check() -> dict:
        out = json.loads(omcm(env, "doctor", "--agent", "qwen", "--json", ok=False).stdout)
        return {c["id"]: c for c in {s["name"]: s for s in out["sections"]}["Qwen Code"]["checks"]}["qwen.mcp"]

    omcm(env, "install", "--agent", "qwen")
    assert mcp_check()["level"] == "ok"
    data = json.loads(settings.read_text())
    data["mcpServers"]["omcm"]["command"] = str(tmp_path / "gone" / "omcm")
    settings.write_text(json.dumps(data))
    gone = mcp_check()
    assert gone["level"] == "error" and "gone" in gone["message"] and gone["fix"] == "omcm install --agent qwen"
    omcm(env, "install", "--agent", "qwen")  # the fix: omcm's own entry is written again
    assert mcp_check()["level"] == "ok"
    del data["mcpServers"]
    settings.write_text(json.dumps(data))
    assert mcp_check()["level"] == "warning"


@pytest.mark.parametrize(
    ("hooks", "events", "lacking"),
    [
        ({"pre_tool", "post_tool"}, ["PreToolUse", "PostToolUse", "PostToolUseFailure"], []),
        ({"cwd_changed", "session_start"}, ["SessionStart"], ["CwdChanged"]),
        ({"worktree_create", "task_created", "setup"}, [], ["Setup", "WorktreeCreate", "TaskCreated"]),
        ({"stop", "permission_request"}, ["Stop", "SubagentStop", "PermissionRequest"], []),
    ],
)
def test_plan_registers_only_the_events_qwen_fires(hooks, events, lacking):
    assert qwen.plan(hooks) == (events, lacking)


def test_notes_name_what_is_left_out_and_held_context_without_post_tool():
    assert qwen.notes([], ["PreToolUse", "PostToolUse"]) == []
    lacking, held = qwen.notes(["CwdChanged"], ["PreToolUse"])
    assert "CwdChanged" in lacking and "PostToolUse" in held


def test_install_with_no_hook_qwen_fires_registers_nothing(user):
    home, env = user
    proc = omcm({**env, "OMCM_LOAD_PLUGINS": "none-such"}, "install", "--agent", "qwen", ok=False)
    assert proc.returncode == 1 and "nothing to register" in proc.stderr
    assert not (home / ".qwen").exists()


def test_a_broken_or_linked_settings_file(user, tmp_path):
    """Bad JSON is refused with the reason and left as it is; a dotfiles link is written through and stays a link."""
    home, env = user
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"model": ')
    proc = omcm(env, "install", "--agent", "qwen", ok=False)
    assert proc.returncode == 2 and "is not valid JSON" in proc.stderr
    assert settings.read_bytes() == b'{"model": '
    settings.unlink()
    target = tmp_path / "dotfiles" / "qwen-settings.json"
    target.parent.mkdir()
    target.write_bytes(ORIGINAL)
    settings.symlink_to(target)
    omcm(env, "install", "--agent", "qwen")
    assert settings.is_symlink() and "PreToolUse" in hooks_of(target)
    omcm(env, "uninstall", "--agent", "qwen")
    assert settings.is_symlink() and target.read_bytes() == ORIGINAL


def test_project_scope_writes_the_projects_qwen_settings_and_refuses_a_link(user, tmp_path):
    home, env = user
    project = tmp_path / "project"
    project.mkdir()
    omcm(env, "install", "--agent", "qwen", "--scope", "project", "--project-dir", project)
    assert hooks_of(project / ".qwen" / "settings.json") and not (home / ".qwen").exists()
    omcm(env, "uninstall", "--agent", "qwen", "--scope", "project", "--project-dir", project)
    assert not (project / ".qwen").exists()  # omcm made the folder and the file: both gone
    (tmp_path / "secret").mkdir()
    (project / ".qwen").symlink_to(tmp_path / "secret")
    proc = omcm(env, "install", "--agent", "qwen", "--scope", "project", "--project-dir", project, ok=False)
    assert proc.returncode == 2 and "is a link" in proc.stderr and not any((tmp_path / "secret").iterdir())
    local = omcm(env, "install", "--agent", "qwen", "--scope", "local", ok=False)
    assert "no local settings file" in local.stderr
