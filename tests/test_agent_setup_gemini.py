"""`omcm install|uninstall|doctor --agent gemini`: Gemini CLI's settings.json, exactly added and exactly removed."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli.agent_setup import gemini, gemini_doctor
from omcm_core._cli.doctor.records import Probe
from omcm_core._cli.invocation import Invocation
from omcm_core._cli.main import run
from omcm_core.events import EVENTS

#: A user's own Gemini CLI settings: 4-space indent, their own hook and MCP server, keys in their order.
THEIRS = (
    json.dumps(
        {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "my.sh"}]}]},
            "mcpServers": {"theirs": {"command": "their-server"}},
            "ui": {"theme": "Dracula"},
        },
        indent=4,
    )
    + "\n"
)


def _env(tmp_path: Path, site: Path | None = None, plugins: str = "bash-guard,tool-counter", **extra) -> dict:
    env = {
        "HOME": str(tmp_path / "home"),
        "OMCM_HOME": str(tmp_path / "omcm-home"),
        "OMCM_LOAD_PLUGINS": plugins,
        "OMCM_NATIVE_CLIENT": "0",  # the Python client: no C build per test
        "PATH": os.environ.get("PATH", ""),
        **extra,
    }
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return env


def _omcm(env: dict, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed omcm, as a user runs it (a real subprocess)."""
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _hooks(plugins: str, env: dict) -> set[str]:
    from omcm_core._runtime.manager import Manager

    return {h for info in Manager.from_environment({**env, "OMCM_LOAD_PLUGINS": plugins}).enabled() for h in info.hooks}


def _settings(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".gemini" / "settings.json"


@pytest.mark.parametrize(
    ("hooks", "pairs", "skipped"),
    [
        ({"pre_tool"}, [("PreToolUse", "BeforeTool"), ("PostToolUse", "AfterTool")], []),  # AfterTool: held context
        ({"post_tool"}, [("PostToolUse", "AfterTool")], []),  # PostToolUseFailure: AfterTool covers failures
        ({"user_prompt_submit"}, [("UserPromptSubmit", "BeforeAgent")], []),
        ({"stop"}, [("Stop", "AfterAgent")], ["SubagentStop"]),
        ({"session_start", "session_end"}, [("SessionStart", "SessionStart"), ("SessionEnd", "SessionEnd")], []),
        ({"pre_compact"}, [], ["PreCompact"]),
        ({"permission_request"}, [], ["PermissionRequest"]),
        (set(), [], []),
    ],
)
def test_plan_maps_omcms_events_to_geminis_and_says_what_it_leaves_out(hooks, pairs, skipped):
    got_pairs, got_skipped = gemini.plan(hooks)
    assert got_pairs == pairs
    assert [event for event, _why in got_skipped] == skipped
    assert all(why for _event, why in got_skipped)


def test_a_handler_is_geminis_shape_named_omcm_in_milliseconds_as_geminis_agent():
    entry = gemini.handler("PreToolUse", ["/x/omcm-hook"], guard=True)
    assert entry["name"] == "omcm" and entry["type"] == "command"
    assert entry["timeout"] == int(EVENTS["PreToolUse"].timeout_s * 1000)  # the event table's seconds, in ms
    words = shlex.split(entry["command"])
    assert words == ["OMCM_AGENT=gemini", "/x/omcm-hook", "hook", "PreToolUse", "fail-closed"]
    assert "onFailure" not in entry  # Claude Code's key; Gemini CLI does not know it
    post = shlex.split(gemini.handler("PostToolUse", ["/x/omcm-hook"], guard=True)["command"])
    assert post[-1] == "PostToolUse"  # only the guarded event keeps guarding


def test_install_then_uninstall_restores_the_users_bytes(tmp_path, bash_guard_site):
    settings = _settings(tmp_path)
    settings.parent.mkdir(parents=True)
    settings.write_text(THEIRS)
    env = _env(tmp_path, bash_guard_site)
    done = _omcm(env, "install", "--agent", "gemini")
    assert done.returncode == 0, done.stderr
    assert "omcm installed for Gemini CLI" in done.stdout and "BeforeTool" in done.stdout
    assert "trusts" in done.stderr  # the folder-trust note
    data = json.loads(settings.read_text())
    assert list(data) == ["security", "hooks", "mcpServers", "ui"]  # the user's order kept
    assert settings.read_text().startswith('{\n    "security"')  # and indentation
    assert data["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "my.sh"  # theirs first, untouched
    ours = {event: groups[-1]["hooks"][0] for event, groups in data["hooks"].items()}
    assert set(ours) == {event for _e, event in gemini.plan(_hooks("bash-guard,tool-counter", env))[0]}
    assert {"BeforeTool", "AfterTool"} <= set(ours) and "PreToolUse" not in data["hooks"]
    for entry in ours.values():
        words = shlex.split(entry["command"])
        assert words[0] == "OMCM_AGENT=gemini" and entry["name"] == "omcm", entry
        assert entry["timeout"] >= 1000  # milliseconds
    assert shlex.split(ours["BeforeTool"]["command"])[-1] == "PreToolUse"  # omcm's name: the fallback knows it
    manifests = gemini.manifests(tmp_path / "omcm-home")
    assert len(manifests) == 1 and manifests[0]["agent"] == "gemini"
    # Idempotent: nothing doubled, the bytes unchanged.
    before = settings.read_bytes()
    again = _omcm(env, "install", "--agent", "gemini")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert settings.read_bytes() == before
    gone = _omcm(env, "uninstall", "--agent", "gemini")
    assert gone.returncode == 0, gone.stderr
    assert "restored as it was before omcm" in gone.stdout
    assert settings.read_text() == THEIRS
    assert gemini.manifests(tmp_path / "omcm-home") == []


def test_uninstall_after_the_user_edited_removes_only_omcms_entries_and_server(tmp_path, monkeypatch):
    home = tmp_path / "omcm-home"
    settings = _settings(tmp_path)
    settings.parent.mkdir(parents=True)
    settings.write_text(THEIRS)
    handlers = {"BeforeTool": gemini.handler("PreToolUse", ["/x/omcm"], False)}
    server = {"command": "/x/omcm", "args": ["mcp"]}
    result = gemini.write(home, settings, handlers, server)
    assert [a["event"] for a in result["added"]] == ["BeforeTool", "mcpServers"]
    data = json.loads(settings.read_text())
    assert data["mcpServers"] == {"theirs": {"command": "their-server"}, "omcm": server}
    data["ui"]["theme"] = "GitHub"  # the user changes something afterwards
    data["hooks"]["AfterTool"] = [{"hooks": [{"type": "command", "command": "after.sh"}]}]
    settings.write_text(json.dumps(data, indent=4) + "\n")
    gemini.remove(home, settings)
    left = json.loads(settings.read_text())
    assert left["ui"]["theme"] == "GitHub"
    assert left["mcpServers"] == {"theirs": {"command": "their-server"}}
    assert left["hooks"] == {
        "BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "my.sh"}]}],
        "AfterTool": [{"hooks": [{"type": "command", "command": "after.sh"}]}],
    }


def test_a_moved_omcm_is_rewritten_in_place_not_doubled(tmp_path):
    home, settings = tmp_path / "omcm-home", tmp_path / "gemini" / "settings.json"
    old = {"BeforeTool": gemini.handler("PreToolUse", ["/old/omcm"], False)}
    gemini.write(home, settings, old, None)
    new = {"BeforeTool": gemini.handler("PreToolUse", ["/new/omcm"], False)}
    result = gemini.write(home, settings, new, None)
    assert result["added"] == [] and [r["event"] for r in result["rewritten"]] == ["BeforeTool"]
    groups = json.loads(settings.read_text())["hooks"]["BeforeTool"]
    assert len(groups) == 1 and "/new/omcm" in groups[0]["hooks"][0]["command"]
    gemini.remove(home, settings)
    assert not settings.exists()  # omcm made it: gone


def test_a_server_named_omcm_that_omcm_did_not_write_is_kept(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text('{"mcpServers": {"omcm": {"command": "their-own-omcm"}}}\n')
    handlers = {"BeforeTool": gemini.handler("PreToolUse", ["/x/omcm"], False)}
    result = gemini.write(tmp_path / "h", settings, handlers, {"command": "/x/omcm", "args": ["mcp"]})
    assert result["mcp_kept"]
    assert json.loads(settings.read_text())["mcpServers"]["omcm"] == {"command": "their-own-omcm"}
    gemini.remove(tmp_path / "h", settings)
    assert json.loads(settings.read_text()) == {"mcpServers": {"omcm": {"command": "their-own-omcm"}}}


@pytest.mark.parametrize(
    "text",
    ['{"hooks": []}\n', '{"hooks": {"BeforeTool": {}}}\n', '{"mcpServers": [1]}\n', "// a comment\n{}\n", "[1]\n"],
)
def test_a_file_omcm_cannot_edit_safely_is_left_alone_with_a_clear_message(tmp_path, text):
    settings = _settings(tmp_path)
    settings.parent.mkdir(parents=True)
    settings.write_text(text)
    done = _omcm(_env(tmp_path, plugins="tool-counter,notepad"), "install", "--agent", "gemini")
    assert done.returncode == 2 and str(settings) in done.stderr and "Traceback" not in done.stderr
    assert settings.read_text() == text


def test_fresh_home_install_registers_the_mcp_server_and_uninstall_leaves_nothing(tmp_path):
    env = _env(tmp_path, plugins="tool-counter,notepad")
    (tmp_path / "home").mkdir()
    done = _omcm(env, "install", "--agent", "gemini")
    assert done.returncode == 0 and "MCP server (omcm mcp) registered" in done.stdout
    assert "mcpServers" not in done.stdout.splitlines()[0]  # an event list names events only
    data = json.loads(_settings(tmp_path).read_text())
    assert data["mcpServers"]["omcm"]["args"][-1] == "mcp" and "type" not in data["mcpServers"]["omcm"]
    assert _settings(tmp_path).stat().st_mode & 0o077 == 0
    done = _omcm(env, "uninstall", "--agent", "gemini")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "home" / ".gemini").exists()


def test_scope_project_writes_the_projects_gemini_settings_and_refuses_a_link(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    env = _env(tmp_path, plugins="tool-counter")
    assert _omcm(env, "install", "--agent", "gemini", "--scope", "project", cwd=project).returncode == 0
    assert "BeforeTool" in json.loads((project / ".gemini" / "settings.json").read_text())["hooks"]
    assert _omcm(env, "uninstall", "--agent", "gemini", "--scope", "project", cwd=project).returncode == 0
    assert not (project / ".gemini").exists()
    (project / ".gemini").symlink_to(tmp_path / "elsewhere")
    done = _omcm(env, "install", "--agent", "gemini", "--scope", "project", cwd=project)
    assert done.returncode == 2 and "link" in done.stderr and not (tmp_path / "elsewhere").exists()
    local = _omcm(env, "install", "--agent", "gemini", "--scope", "local", cwd=project)
    assert local.returncode == 2 and "no local settings file" in local.stderr


def test_install_says_when_gemini_would_not_run_the_hooks(tmp_path):
    settings = _settings(tmp_path)
    settings.parent.mkdir(parents=True)
    settings.write_text('{"hooksConfig": {"enabled": false, "disabled": ["omcm"]}}\n')
    done = _omcm(_env(tmp_path, plugins="tool-counter"), "install", "--agent", "gemini")
    assert done.returncode == 0
    assert "hooksConfig.enabled is false" in done.stderr and 'hooksConfig.disabled lists "omcm"' in done.stderr
    assert json.loads(settings.read_text())["hooksConfig"] == {"enabled": False, "disabled": ["omcm"]}  # never flipped


def test_a_claude_manifest_names_no_agent_and_a_gemini_one_registers_again_as_gemini(tmp_path):
    from omcm_core._cli.settings_file import reinstall_argv

    home, settings = tmp_path / "omcm-home", tmp_path / "settings.json"
    gemini.write(home, settings, {"BeforeTool": gemini.handler("PreToolUse", ["/x/omcm"], False)}, None)
    assert reinstall_argv(home, settings) == ["install", "--settings", str(settings), "--agent", "gemini"]
    other = tmp_path / "claude.json"
    assert reinstall_argv(home, other) == ["install", "--settings", str(other)]


# --- doctor --------------------------------------------------------------------------------------


def _probe(tmp_path: Path, env: dict, project: Path | None = None) -> Probe:
    from omcm_core._runtime.manager import Manager

    return Probe(Path(env["OMCM_HOME"]), project, env, manager=Manager.from_environment(env))


def _checks(tmp_path: Path, env: dict, project: Path | None = None) -> dict:
    return {c.id: c for c in gemini_doctor.checks(_probe(tmp_path, env, project))}


def test_doctor_before_and_after_install(tmp_path):
    env = _env(tmp_path, plugins="tool-counter")
    (tmp_path / "home").mkdir()
    probe = _probe(tmp_path, env)
    assert not gemini.installed(probe)
    assert _checks(tmp_path, env)["gemini.none"].level == "error"
    assert run(["install", "--agent", "gemini"], Invocation(env, cwd=str(tmp_path))) == 0
    assert gemini.installed(probe)
    checks = _checks(tmp_path, env)
    assert checks["gemini.registered"].level == "ok" and "BeforeTool" in checks["gemini.registered"].message
    assert checks["gemini.context_moves"].level == "info"
    assert not [c for c in checks.values() if c.level == "error"], checks


def test_doctor_finds_what_keeps_gemini_from_running_omcm(tmp_path):
    env = _env(tmp_path, plugins="tool-counter")
    settings = _settings(tmp_path)
    settings.parent.mkdir(parents=True)
    handlers = {
        "BeforeTool": gemini.handler("PreToolUse", [str(tmp_path / "gone" / "omcm")], False),
        "BeforeAgent": {"type": "command", "command": f"{tmp_path}/bin/omcm hook UserPromptSubmit"},  # no agent
    }
    gemini.write(Path(env["OMCM_HOME"]), settings, handlers, None)
    data = json.loads(settings.read_text())
    data["hooksConfig"] = {"enabled": False}
    settings.write_text(json.dumps(data))
    project = tmp_path / "project"
    project.mkdir()
    (settings.parent / "trustedFolders.json").write_text(json.dumps({str(project): "DO_NOT_TRUST"}))
    checks = _checks(tmp_path, env, project)
    assert checks["gemini.hooks_disabled"].level == "error"
    assert checks["gemini.stale.BeforeTool"].level == "error"
    assert checks["gemini.claude_form.BeforeAgent"].level == "warning"
    assert checks["gemini.missing.AfterTool"].level == "error"  # tool-counter answers PostToolUse too
    assert checks["gemini.context_lost"].level == "warning"
    assert checks["gemini.trust"].level == "warning" and "you chose so" in checks["gemini.trust"].message


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ({}, None),
        ({"{p}": "TRUST_FOLDER"}, True),
        ({"{p}/sub": "TRUST_FOLDER"}, None),
        ({"{p}/child": "TRUST_PARENT"}, True),
        ({"{up}": "TRUST_FOLDER", "{p}": "DO_NOT_TRUST"}, False),
        ({"{up}": "DO_NOT_TRUST", "{p}": "TRUST_FOLDER"}, True),
        ({"{up}": "DO_NOT_TRUST"}, False),  # a parent's "do not trust" covers the folders below it
        ({"{p}": "SOMETHING_ELSE"}, None),
    ],
)
def test_trust_verdict_as_gemini_cli_decides(tmp_path, rules, expected):
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    text = json.dumps({k.format(p=project, up=project.parent): v for k, v in rules.items()})
    (tmp_path / "trusted.json").write_text(text)
    assert gemini_doctor.trusted(project, tmp_path / "trusted.json") is expected


def test_claudes_doctor_leaves_a_gemini_settings_file_to_geminis_section(tmp_path):
    from omcm_core._cli.doctor.registration import _settings_files

    env = _env(tmp_path, plugins="tool-counter")
    settings = tmp_path / "elsewhere" / "settings.json"
    gemini.write(Path(env["OMCM_HOME"]), settings, {"BeforeTool": gemini.handler("PreToolUse", None, False)}, None)
    assert settings.exists() and settings not in _settings_files(_probe(tmp_path, env))


def test_the_re_registration_that_repair_and_update_run_keeps_geminis_form(tmp_path):
    """`omcm update` and the background repair run reinstall_argv(...): for Gemini's file, Gemini's entries."""
    from omcm_core._cli.settings_file import reinstall_argv

    env = _env(tmp_path, plugins="tool-counter")
    (tmp_path / "home").mkdir()
    assert _omcm(env, "install", "--agent", "gemini").returncode == 0
    settings = _settings(tmp_path)
    before = settings.read_bytes()
    again = _omcm(env, *reinstall_argv(Path(env["OMCM_HOME"]), settings))
    assert again.returncode == 0 and "already installed for Gemini CLI" in again.stdout, again.stderr
    assert settings.read_bytes() == before and "PreToolUse" not in json.loads(before)["hooks"]
