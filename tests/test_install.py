"""install adds exactly omcm's entries; uninstall takes exactly those away."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import omcm_core
from omcm_core._cli.install import InstallError, install, installed_commands, uninstall

EVENTS = ["PreToolUse", "PostToolUse", "SessionEnd"]
BASE = ["/opt/omcm env/bin/omcm"]  # a path with a space must be quoted

THEIRS = """{
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/.claude/guard.sh", "timeout": 5}]}
        ]
    },
    "permissions": {"allow": ["Bash(ls:*)"]}
}
"""


def test_install_then_uninstall_restores_the_exact_bytes(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text(THEIRS)
    result = install(tmp_path / "home", settings, EVENTS, BASE)
    assert [a["event"] for a in result["added"]] == EVENTS
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(ls:*)"]}
    pre = data["hooks"]["PreToolUse"]
    assert pre[0]["hooks"][0]["command"] == "~/.claude/guard.sh"  # theirs first, untouched
    assert pre[1]["hooks"][0]["command"] == "'/opt/omcm env/bin/omcm' hook PreToolUse"
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] <= 1.5
    assert settings.read_text().startswith('{\n    "model"')  # their 4-space indent kept
    uninstall(tmp_path / "home", settings)
    assert settings.read_text() == THEIRS


def test_install_is_idempotent(tmp_path):
    settings = tmp_path / "settings.json"
    install(tmp_path / "home", settings, EVENTS, BASE)
    once = settings.read_bytes()
    assert install(tmp_path / "home", settings, EVENTS, BASE)["added"] == []
    assert settings.read_bytes() == once


def test_uninstall_after_user_edits_removes_only_ours(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text(THEIRS)
    install(tmp_path / "home", settings, EVENTS, BASE)
    data = json.loads(settings.read_text())
    data["theme"] = "dark"
    data["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "say done"}]}]
    settings.write_text(json.dumps(data, indent=4))
    result = uninstall(tmp_path / "home", settings)
    assert len(result["removed"]) == 3
    after = json.loads(settings.read_text())
    assert after == {
        **json.loads(THEIRS),
        "theme": "dark",
        "hooks": {**json.loads(THEIRS)["hooks"], "Stop": data["hooks"]["Stop"]},
    }
    assert installed_commands(settings) == []


def test_install_into_missing_file_and_uninstall_removes_it(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    install(tmp_path / "home", settings, EVENTS, BASE)
    assert {e for e, _ in installed_commands(settings)} == set(EVENTS)
    uninstall(tmp_path / "home", settings)
    assert not settings.exists()


def test_refuses_to_touch_invalid_settings(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text("{ not json")
    with pytest.raises(InstallError):
        install(tmp_path / "home", settings, EVENTS, BASE)
    assert settings.read_text() == "{ not json"


def test_cli_install_registers_the_events_installed_plugins_use(tmp_path, bash_guard_site):
    settings = tmp_path / "settings.json"
    # The Python client's command (the native one has tests/test_native_client.py).
    env = {
        **os.environ,
        "OMCM_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_NATIVE_CLIENT": "0",
    }

    def omcm(*args, **extra):
        return subprocess.run(
            [sys.executable, "-m", "omcm_core", *args, "--settings", str(settings)],
            capture_output=True,
            env={**env, **extra},
            text=True,
        )

    proc = omcm("install", OMCM_LOAD_PLUGINS="")
    assert proc.returncode == 1 and "nothing to register" in proc.stderr and not settings.exists()
    client = Path(omcm_core.__file__).resolve().parent / "_runtime" / "client.py"
    bytecode = Path(importlib.util.cache_from_source(str(client)))
    bytecode.unlink(missing_ok=True)
    proc = omcm("install", OMCM_LOAD_PLUGINS="bash-guard", PYTHONDONTWRITEBYTECODE="1")  # implements pre_tool only
    assert proc.returncode == 0, proc.stderr
    # fast_hook.py loads the client from its bytecode: install writes it, even where Python would not.
    assert bytecode.stat().st_mtime >= client.stat().st_mtime
    (command,) = [c for e, c in installed_commands(settings) if e == "PreToolUse"]
    assert {e for e, _ in installed_commands(settings)} == {"PreToolUse"}
    # The fast form: this interpreter, without site, running the thin client, all quoted.
    assert command.startswith(f"{sys.executable} -S ") and command.endswith("fast_hook.py PreToolUse")
    payload = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "cwd": str(tmp_path),
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf /"},
        }
    )
    ran = subprocess.run(
        command,
        shell=True,
        input=payload,
        capture_output=True,
        text=True,
        env={**env, "OMCM_LOAD_PLUGINS": "bash-guard", "OMCM_DAEMON": "0"},
    )
    assert json.loads(ran.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert omcm("uninstall").returncode == 0 and not settings.exists()


def test_install_run_for_another_environment_edits_that_home_only(tmp_path, monkeypatch, bash_guard_site):
    # In-process runs (tests, wrappers) pass their own HOME: this process's own
    # ~/.claude/settings.json must stay untouched (it once collected every test run's hooks).
    from omcm_core._cli.invocation import Invocation
    from omcm_core._cli.main import run

    own_home, their_home = tmp_path / "own", tmp_path / "theirs"
    own_home.mkdir()
    their_home.mkdir()
    monkeypatch.setenv("HOME", str(own_home))
    env = {
        "HOME": str(their_home),
        "OMCM_HOME": str(their_home / ".omcm"),
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_LOAD_PLUGINS": "bash-guard",
    }
    monkeypatch.syspath_prepend(str(bash_guard_site))
    assert run(["install"], Invocation(env, cwd=str(tmp_path))) == 0
    assert "PreToolUse" in json.loads((their_home / ".claude" / "settings.json").read_text())["hooks"]
    assert not (own_home / ".claude").exists()
