"""install adds exactly omcm's entries; uninstall takes exactly those away."""

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import omcm_core
from omcm_core._cli.install import InstallError, hook_command, install, installed_commands, uninstall

EVENTS = ["PreToolUse", "PostToolUse", "SessionEnd"]
FAST_HOOK = Path(omcm_core.__file__).resolve().parent / "fast_hook.py"
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
    words = shlex.split(command)
    assert words[:3] == [sys.executable, "-S", "-c"] and words[4:] == [str(FAST_HOOK), "PreToolUse"]
    assert "\n" not in command  # the client logs (and /hooks shows) one line per command
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


def _run(command: str, payload: dict, home: Path, **env) -> subprocess.CompletedProcess:
    base = {"HOME": str(home), "OMCM_HOME": str(home / ".omcm"), "PATH": "/usr/bin:/bin", "OMCM_DAEMON": "0"}
    return subprocess.run(
        command, shell=True, input=json.dumps(payload), capture_output=True, text=True, env={**base, **env}
    )


@pytest.fixture
def bare_venv(tmp_path):
    """A real interpreter with no omcm: what a reinstall under another Python leaves the old path's python as."""
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(tmp_path / "bare")
    return tmp_path / "bare" / "bin" / "python"


def test_a_registered_command_whose_omcm_is_gone_never_exits_2(tmp_path, bare_venv):
    """`uv tool install --reinstall --python X` / `pipx reinstall`: the interpreter is there, omcm's file is not.

    `python -S .../fast_hook.py` exited 2 there (can't open file), which Claude Code
    takes for a blocking error: every prompt refused.
    """
    gone = str(tmp_path / "old" / "lib" / "python3.11" / "site-packages" / "omcm_core" / "fast_hook.py")
    registered = hook_command("UserPromptSubmit").replace(str(FAST_HOOK), gone).replace(sys.executable, str(bare_venv))
    assert gone in registered
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "hi"}
    first = _run(registered, prompt, tmp_path)
    assert first.returncode == 0, first.stderr
    told = json.loads(first.stdout)["systemMessage"]
    assert "omcm doctor" in told and gone in told
    again = _run(registered, prompt, tmp_path)  # once per session
    assert (again.returncode, again.stdout) == (0, "")
    other = _run(registered, {**prompt, "session_id": "s2"}, tmp_path)
    assert other.returncode == 0 and "omcm doctor" in json.loads(other.stdout)["systemMessage"]
    marker = tmp_path / ".omcm" / ".broken-install-told"
    assert marker.stat().st_mode & 0o077 == 0
    # Interpreter gone too (the whole venv removed): the shell's 127, non-blocking.
    assert (
        _run(registered.replace(str(bare_venv), str(tmp_path / "nope" / "python")), prompt, tmp_path).returncode == 127
    )


def test_a_moved_omcm_still_answers_through_the_interpreters_site_packages(tmp_path, bash_guard_site):
    """Same interpreter path, omcm now elsewhere in its site-packages (a reinstall): hooks keep working."""
    gone = str(tmp_path / "moved" / "omcm_core" / "fast_hook.py")
    registered = hook_command("PreToolUse").replace(str(FAST_HOOK), gone)
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "cwd": str(tmp_path)}
    payload["tool_input"] = {"command": "rm -rf /"}
    ran = _run(registered, payload, tmp_path, PYTHONPATH=str(bash_guard_site), OMCM_LOAD_PLUGINS="bash-guard")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_fail_closed_guard_keeps_guarding_when_omcm_is_gone(tmp_path, bare_venv):
    gone = str(tmp_path / "gone" / "omcm_core" / "fast_hook.py")
    for event, decision in (("PreToolUse", "permissionDecision"), ("PermissionRequest", "decision")):
        command = hook_command(event, fail_closed=True).replace(str(FAST_HOOK), gone)
        ran = _run(command.replace(sys.executable, str(bare_venv)), {"hook_event_name": event}, tmp_path)
        answer = json.loads(ran.stdout)["hookSpecificOutput"]
        assert ran.returncode == 0 and answer["hookEventName"] == event
        assert answer[decision] == "deny" if event == "PreToolUse" else answer[decision]["behavior"] == "deny"


def test_fail_closed_entries_carry_on_failure_block_only_on_clients_that_know_it(tmp_path):
    from omcm_core._cli.install import on_failure_known

    settings, home = tmp_path / "settings.json", tmp_path / "home"
    assert not on_failure_known("2.1.294") and on_failure_known("2.1.295") and not on_failure_known(None)
    install(home, settings, ["PreToolUse", "PostToolUse"], guard=True, on_failure=True)
    hooks = json.loads(settings.read_text())["hooks"]
    pre, post = hooks["PreToolUse"][0]["hooks"][0], hooks["PostToolUse"][0]["hooks"][0]
    assert pre["onFailure"] == "block" and shlex.split(pre["command"])[-1] == "fail-closed"
    assert "onFailure" not in post and not post["command"].endswith("fail-closed")


def test_install_again_rewrites_what_changed_in_place(tmp_path):
    """A reinstall under another Python: `omcm install` replaces its own entries, never adds a second copy."""
    settings, home = tmp_path / "settings.json", tmp_path / "home"
    settings.write_text(THEIRS)
    old = ["/old/venv/bin/omcm"]
    install(home, settings, EVENTS, old)
    result = install(home, settings, EVENTS, BASE)
    assert result["added"] == [] and [r["event"] for r in result["rewritten"]] == EVENTS
    commands = installed_commands(settings)
    assert sorted(commands) == sorted((e, hook_command(e, BASE)) for e in EVENTS)
    assert json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "~/.claude/guard.sh"
    uninstall(home, settings)
    assert settings.read_text() == THEIRS  # still byte-exact


def test_install_notes_say_what_was_left_out_and_what_a_project_file_holds():
    from omcm_core._cli.install import install_notes

    (note,) = install_notes({"stop_failure", "pre_tool"}, None, "user")
    assert "StopFailure left out" in note and "`claude` is not on PATH" in note
    assert install_notes({"stop_failure"}, "2.1.330", "user") == []
    assert "2.1.50" in install_notes({"stop_failure"}, "2.1.50", None)[0]
    (project,) = install_notes({"pre_tool"}, "2.1.330", "project")
    assert "--scope local" in project and "commit" in project


# A stand-in for Claude Code: a long-lived process whose children (`sh -c COMMAND`) are one session's hook calls.
CLAUDE = r"""
import json, subprocess, sys
for line in sys.stdin:
    done = subprocess.run(["sh", "-c", sys.argv[1]], input=line.encode(), capture_output=True)
    print(json.dumps({"code": done.returncode, "out": done.stdout.decode()}), flush=True)
"""


@pytest.mark.slow
def test_a_daemon_whose_installation_was_removed_retires_while_its_session_lives(tmp_path, bash_guard_site):
    import shutil
    import time

    site = tmp_path / "tool-venv" / "site-packages"  # this omcm, copied: the installation a reinstall deletes
    shutil.copytree(FAST_HOOK.parent, site / "omcm_core", ignore=shutil.ignore_patterns("__pycache__"))
    command = hook_command("PreToolUse").replace(str(FAST_HOOK), str(site / "omcm_core" / "fast_hook.py"))
    home = tmp_path / "home"
    env = {**os.environ, "OMCM_HOME": str(home), "PYTHONPATH": f"{site}:{bash_guard_site}", "OMCM_DAEMON": "1"}
    env |= {"OMCM_LOAD_PLUGINS": "bash-guard", "OMCM_DAEMON_SESSION_IDLE_S": "600", "OMCM_DAEMON_IDLE_S": "600"}
    claude = subprocess.Popen(
        [sys.executable, "-c", CLAUDE, command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
    )
    log = home / "logs" / "omcm.jsonl"

    def events() -> list[str]:
        return [json.loads(line)["event"] for line in log.read_text().splitlines()] if log.exists() else []

    def wait_for(event: str) -> bool:
        deadline = time.monotonic() + 60  # a loaded CI machine (three tox cells on two cores)
        while time.monotonic() < deadline and event not in events():
            time.sleep(0.1)
        return event in events()

    try:
        payload = {"session_id": "s", "hook_event_name": "PreToolUse", "cwd": "/", "tool_name": "Bash"}
        assert claude.stdin is not None and claude.stdout is not None
        claude.stdin.write(json.dumps({**payload, "tool_input": {"command": "ls"}}) + "\n")
        claude.stdin.flush()
        assert json.loads(claude.stdout.readline())["code"] == 0
        assert wait_for("daemon_started")
        shutil.rmtree(site / "omcm_core")  # `uv tool install --reinstall --python 3.12` removes lib/python3.11
        assert wait_for("daemon_installation_gone_exit"), [json.loads(x) for x in log.read_text().splitlines()]
        assert claude.poll() is None  # the session is alive: only the removal made it leave
    finally:
        claude.kill()
        claude.communicate(timeout=10)


def test_claude_files_shipped_in_the_package_are_the_plugin_routes_bytes():
    from omcm_core._cli.install import CLAUDE_FILES, CLAUDE_FILES_DIR

    root = Path(__file__).resolve().parents[1]
    for names in CLAUDE_FILES.values():
        for name in names:
            assert (CLAUDE_FILES_DIR / name).read_bytes() == (root / name).read_bytes(), name
    shipped = {str(p.relative_to(root / "commands")) for p in (root / "commands").glob("*.md")}
    assert shipped == {Path(n).name for n in CLAUDE_FILES["persistent-mode"]}


def test_slash_commands_start_with_the_trigger_persistent_mode_reads():
    """The client hands UserPromptSubmit the typed `/ralph-loop TASK`; the model reads the expansion: both must trigger."""
    keywords = pytest.importorskip("omcm_persistent_mode.keywords")
    from omcm_core._cli.install import CLAUDE_FILES_DIR

    for name in ("ralph-loop", "ultrawork", "ultrawork-ralph", "cancel-ralph", "cancel-ultrawork"):
        body = (CLAUDE_FILES_DIR / "commands" / f"{name}.md").read_text().split("---\n", 2)[2]
        for prompt in (f"/{name} fix the tests", body.replace("$ARGUMENTS", "fix the tests")):
            found = keywords.detect(prompt)
            if name.startswith("cancel-"):
                assert found.cancel, prompt
            else:
                assert (found.mode, found.task) == (name, "fix the tests"), prompt


def test_install_copies_the_commands_and_uninstall_removes_exactly_those(tmp_path, monkeypatch):
    from omcm_core._cli.install import install_files, uninstall_files

    claude, home = tmp_path / ".claude", tmp_path / "home"
    settings = claude / "settings.json"
    (claude / "commands").mkdir(parents=True)
    mine = claude / "commands" / "cancel-ultrawork.md"
    mine.write_text("my own\n")  # the user's file of the same name: never overwritten, never removed
    install(home, settings, EVENTS, BASE)
    names = ["commands/ralph-loop.md", "commands/cancel-ralph.md", "commands/cancel-ultrawork.md"]
    names += ["skills/memory-rotate/SKILL.md"]
    result = install_files(home, settings, names)
    assert result["kept"] == [str(mine)] and len(result["written"]) == 3
    assert (claude / "skills" / "memory-rotate" / "SKILL.md").exists()
    assert install_files(home, settings, names) == {"written": [], "kept": [str(mine)]}  # idempotent
    edited = claude / "commands" / "cancel-ralph.md"
    edited.write_text(edited.read_text() + "my note\n")  # changed after install: the user's now
    removed = uninstall_files(home, settings)
    assert removed["kept"] == [str(edited)] and len(removed["removed"]) == 2
    assert mine.read_text() == "my own\n" and edited.exists()
    assert not (claude / "commands" / "ralph-loop.md").exists() and not (claude / "skills").exists()
    uninstall(home, settings)


def test_cli_install_puts_the_commands_in_the_chosen_scope(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "OMCM_HOME": str(tmp_path / "omcm"),
        "OMCM_LOAD_PLUGINS": "persistent-mode",
    }
    pytest.importorskip("omcm_persistent_mode")

    def omcm(*args):
        return subprocess.run(
            [sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env, cwd=project
        )

    done = omcm("install", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert (project / ".claude" / "commands" / "ralph-loop.md").exists() and not (tmp_path / ".claude").exists()
    assert "--scope local" in done.stderr  # the project file holds this machine's paths: said
    assert omcm("uninstall", "--scope", "project").returncode == 0
    assert not (project / ".claude" / "commands").exists() and not (project / ".claude" / "settings.json").exists()


def test_install_never_writes_through_a_planted_folder_link(tmp_path):
    # A cloned project's .claude/commands may be a link to anywhere: the files go inside .claude or nowhere.
    from omcm_core._cli.install import install_files

    claude, home, elsewhere = tmp_path / "project" / ".claude", tmp_path / "home", tmp_path / "elsewhere"
    claude.mkdir(parents=True)
    elsewhere.mkdir()
    (claude / "commands").symlink_to(elsewhere)
    settings = claude / "settings.json"
    install(home, settings, EVENTS, BASE)
    result = install_files(home, settings, ["commands/ralph-loop.md", "skills/memory-rotate/SKILL.md"])
    assert result["kept"] == [str(claude / "commands" / "ralph-loop.md")]
    assert result["written"] == [str(claude / "skills" / "memory-rotate" / "SKILL.md")]
    assert list(elsewhere.iterdir()) == []
    uninstall(home, settings)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_local_scope_hint_keeps_the_command_files_out_of_git(tmp_path):
    pytest.importorskip("omcm_persistent_mode")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {**os.environ, "HOME": str(tmp_path), "OMCM_HOME": str(tmp_path / "omcm")}
    env["OMCM_LOAD_PLUGINS"] = "persistent-mode"
    done = subprocess.run(
        [sys.executable, "-m", "omcm_core", "install", "--scope", "local"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    assert (project / ".claude" / "commands" / "ralph-loop.md").exists()
    (hint,) = [line for line in done.stderr.splitlines() if ".git/info/exclude" in line]
    subprocess.run(["sh", "-c", hint.split(f"from {project}: ", 1)[1]], cwd=project, check=True)
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True, cwd=project
    )
    assert "ralph-loop.md" not in status.stdout and "settings.local.json" in status.stdout
