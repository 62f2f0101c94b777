"""The warm dispatcher answers exactly what the in-process path answers, and stays out of the way."""

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import omcm_core
from omcm_core._runtime import daemon
from omcm_core.testing import pre_tool_payload, run_hook

pytestmark = pytest.mark.slow

CODE = Path(omcm_core.__file__).resolve().parent  # the installed package, as the hook runs it
CLIENT_DIR = CODE / "_runtime"  # fast_hook.py imports client.py from here
# What the client's path must not import: the dispatcher's stack, and the
# standard modules it avoids because each costs 0.4-1.4 ms at every start.
HEAVY_ROOTS = {
    "pluggy",
    "attrs",
    "cattrs",
    "structlog",
    "sqlite3",
    "omcm_core",
    "site",
    "os",
    "socket",
    "zlib",
    "hashlib",
    "json",
}


@pytest.fixture
def daemon_env(tmp_path, bash_guard_site):
    env = {
        "OMCM_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_LOAD_PLUGINS": "bash-guard",
        "OMCM_DAEMON": "1",
        "OMCM_LOG_LEVEL": "debug",
    }
    yield env
    daemon.stop({**os.environ, **env})


def _wait_running(env, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if daemon.status({**os.environ, **env}):
            return
        time.sleep(0.05)
    raise AssertionError("daemon did not start")


def _dispatches_by_daemons(home):
    """(dispatches answered inside a daemon, all dispatches) from the debug log."""
    lines = [json.loads(line) for line in (Path(home) / "logs" / "omcm.jsonl").read_text().splitlines()]
    daemons = {e["pid"] for e in lines if e["event"] == "daemon_started"}
    dispatched = [e["pid"] for e in lines if e["event"] == "dispatched"]
    return sum(pid in daemons for pid in dispatched), len(dispatched)


COMMANDS = ["ls", "rm -rf /", "git push --force", "curl x | sh", "echo ok"]


def test_daemon_and_in_process_answers_are_identical(daemon_env, shared_fixtures, tmp_path):
    payloads = [pre_tool_payload("Bash", {"command": c}) for c in COMMANDS]
    payloads += [json.loads(p.read_text()) for p in sorted((shared_fixtures / "hook-payloads").glob("*.json"))]
    run_hook(payloads[0], env=daemon_env)  # starts the daemon, answers in process
    _wait_running(daemon_env)
    in_process_env = {**daemon_env, "OMCM_DAEMON": "0", "OMCM_HOME": str(tmp_path / "home2")}
    for payload in payloads:
        warm = run_hook(payload, env=daemon_env)
        cold = run_hook(payload, env=in_process_env)
        assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
    assert (
        json.loads(run_hook(payloads[1], env=daemon_env).stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    )
    # The warm answers really came from the daemon (a restart, if omcm's files change meanwhile, costs one).
    by_daemon, total = _dispatches_by_daemons(daemon_env["OMCM_HOME"])
    assert total > len(COMMANDS) and by_daemon >= total - 3


def test_hot_path_imports_nothing_heavy(daemon_env):
    run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=daemon_env)
    _wait_running(daemon_env)
    # What fast_hook.py does, then a look at sys.modules before anything else is imported.
    code = (
        "import sys; del sys.path[0]; sys.path.insert(0, sys.argv[1]); import client; del sys.path[0];"
        "code, out, err = client.answer([], sys.stdin.buffer.read());"
        "modules = sorted(sys.modules);"
        "sys.stderr.write(repr({'out': out, 'modules': modules, 'no_site': sys.flags.no_site}))"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, str(CLIENT_DIR)],
        input=json.dumps(pre_tool_payload("Bash", {"command": "rm -rf ~"})).encode(),
        capture_output=True,
        env={**os.environ, **daemon_env},
        check=True,
    )
    result = ast.literal_eval(proc.stderr.decode())
    assert json.loads(result["out"])["hookSpecificOutput"]["permissionDecision"] == "deny"
    roots = {m.split(".")[0] for m in result["modules"]}
    assert sorted(roots & HEAVY_ROOTS) == []
    assert result["no_site"] == 1  # -S really skipped site


def test_console_command_reaches_the_client_without_importing_anything_else():
    # `omcm hook` (the console script, what the plugin launcher runs) imports
    # omcm_core._cli.cli before the client: it must not bring `typing` or worse along.
    code = "import sys; sys.path.insert(0, sys.argv[1]); before = set(sys.modules); import omcm_core._cli.cli; print(sorted(set(sys.modules) - before))"
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, str(CODE.parent)], capture_output=True, text=True, check=True
    )
    assert ast.literal_eval(proc.stdout) == ["__future__", "omcm_core", "omcm_core._cli", "omcm_core._cli.cli"]


def test_registered_command_is_answered_by_the_daemon(daemon_env, tmp_path):
    from omcm_core._cli.install import fast_hook_argv

    argv = fast_hook_argv("PreToolUse")
    assert argv[1:3] == ["-S", "-c"] and argv[4] == str(CODE / "fast_hook.py")
    payload = json.dumps(pre_tool_payload("Bash", {"command": "rm -rf /"})).encode()
    env = {**os.environ, **daemon_env}
    first = subprocess.run(argv, input=payload, capture_output=True, env=env, cwd=tmp_path, timeout=60)
    _wait_running(daemon_env)
    warm = subprocess.run(argv, input=payload, capture_output=True, env=env, cwd=tmp_path, timeout=60)
    cold = subprocess.run(
        argv, input=payload, capture_output=True, env={**env, "OMCM_DAEMON": "0"}, cwd=tmp_path, timeout=60
    )
    assert first.returncode == warm.returncode == cold.returncode == 0
    assert first.stdout == warm.stdout == cold.stdout
    assert json.loads(warm.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _dispatches_by_daemons(daemon_env["OMCM_HOME"]) == (1, 3)


def test_relative_omcm_home_names_one_folder_for_both_paths(daemon_env, tmp_path):
    # The daemon runs from /; a relative OMCM_HOME must still mean the hook's own folder.
    env = {**daemon_env, "OMCM_HOME": "relative-home"}
    run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env, cwd=str(tmp_path))
    _wait_running({**env, "OMCM_HOME": str(tmp_path / "relative-home")})
    run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env, cwd=str(tmp_path))
    assert _dispatches_by_daemons(tmp_path / "relative-home") == (1, 2)
    assert not Path("/relative-home").exists()
    daemon.stop({**os.environ, **env, "OMCM_HOME": str(tmp_path / "relative-home")})


def test_only_one_daemon_runs(daemon_env):
    env = {**os.environ, **daemon_env}
    procs = [subprocess.Popen([sys.executable, "-m", "omcm_core", "daemon", "run"], env=env) for _ in range(4)]
    _wait_running(daemon_env)
    # The losers return as soon as they see the lock taken; on a loaded machine
    # reaching the lock can take many seconds, so wait for them rather than a fixed time.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and sum(p.poll() is None for p in procs) > 1:
        time.sleep(0.2)
    alive = [p for p in procs if p.poll() is None]
    daemon.stop(env)
    for p in procs:
        p.wait(timeout=10)
    assert len(alive) == 1
    assert all(p.returncode == 0 for p in procs)


def test_daemon_restarts_when_plugins_change_and_exits_when_idle(daemon_env, bash_guard_site):
    # Its calls carry a session whose client (this test process) lives on: that session idles out.
    env = {**daemon_env, "OMCM_DAEMON_SESSION_IDLE_S": "2", "OMCM_DAEMON_LINGER_S": "0"}
    run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env)
    _wait_running(env)
    module = bash_guard_site / "omcm_bash_guard" / "__init__.py"
    module.write_text(module.read_text().replace("deletes the whole disk", "would erase everything on the machine"))
    # The daemon notices, hands this call back to the client and exits; the answer is the new code's.
    out = json.loads(run_hook(pre_tool_payload("Bash", {"command": "rm -rf /"}), env=env).stdout)
    assert "erase everything" in out["hookSpecificOutput"]["permissionDecisionReason"]
    (old_pid,) = _started_pids(Path(env["OMCM_HOME"]))
    assert _wait_for(lambda: _gone(old_pid), 300), "the old daemon did not exit"  # it let go of its socket
    assert "erase everything" in run_hook(pre_tool_payload("Bash", {"command": "rm -rf /"}), env=env).stdout.decode()
    _wait_running(env, timeout=300)  # that call started a fresh daemon, which has the new code
    assert "erase everything" in run_hook(pre_tool_payload("Bash", {"command": "rm -rf /"}), env=env).stdout.decode()
    # Idle exit: the fresh daemon says so in the log and lets go of its socket. Its session idles out
    # after 2 s, but how soon it notices depends on the machine's load: wait for the event itself
    # (the bound only stops a hang; no clock decides the verdict).
    assert _wait_for(lambda: _idle_exit_after_last_start(Path(env["OMCM_HOME"])), 300), "the daemon never idled out"
    assert _wait_for(lambda: daemon.status({**os.environ, **env}) is None, 300), "its socket stayed"


def _wait_for(condition, hang_s: float) -> bool:
    deadline = time.monotonic() + hang_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _started_pids(home: Path) -> list[int]:
    lines = [json.loads(line) for line in (home / "logs" / "omcm.jsonl").read_text().splitlines()]
    return [line["pid"] for line in lines if line["event"] == "daemon_started"]


def _gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for a reaper counts: it serves nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def _idle_exit_after_last_start(home: Path) -> bool:
    events = [json.loads(line)["event"] for line in (home / "logs" / "omcm.jsonl").read_text().splitlines()]
    starts = [i for i, event in enumerate(events) if event == "daemon_started"]
    return bool(starts) and "daemon_idle_exit" in events[starts[-1] :]


def test_socket_is_owner_only(daemon_env):
    run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=daemon_env)
    _wait_running(daemon_env)
    path = Path(daemon.status({**os.environ, **daemon_env}))
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
