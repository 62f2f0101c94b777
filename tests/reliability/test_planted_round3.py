"""Behaviours that bugs planted by hand got through in round 3 (issue 38), each through the public surface.

Every test here was seen failing with its bug planted and passing without it
(docs/reliability.md, "How the suite's strength is checked", lists them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_harness import run_hook

from omcm_core.testing import install_plugin_module, post_tool_payload, pre_tool_payload, user_prompt_payload

# --- 1. the separators between plugins' texts count against the context budget ---------------------

SOLID = """
from omcm_core import Result, hookimpl


@hookimpl
def user_prompt_submit(event, ctx):
    # One unbroken token: the budget's cut falls on the exact character, leaving no slack at a line end.
    return Result(additional_context=ctx.env["REL_SOLID_CHAR"] * 9000)
"""


@pytest.mark.slow
def test_the_joined_context_of_several_plugins_fits_the_budget_to_the_character(rel_world, tmp_path):
    site = tmp_path / "site"
    names = ["solid-a", "solid-b", "solid-c", "solid-d"]
    for name in names:
        install_plugin_module(site, name.replace("-", "_"), SOLID)
    home = rel_world["home"]
    home.mkdir(parents=True)
    for budget in (10_000, 4_321):
        (home / "config.toml").write_text(f"[core]\ncontext_budget = {budget}\n")
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("OMCM")},
            "PYTHONPATH": str(site),
            "OMCM_HOME": str(home),
            "OMCM_DAEMON": "0",
            "OMCM_LOAD_PLUGINS": ",".join(n.replace("-", "_") for n in names),
            "OMCM_PASS_ENV": "REL_*",
            "REL_SOLID_CHAR": "x",
        }
        raw = json.dumps(user_prompt_payload("go", cwd=str(rel_world["project"]))).encode()
        proc = run_hook(raw, env, cwd=rel_world["project"])
        assert proc.returncode == 0, proc.stderr
        context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        assert context.count("cut to fit the context budget") == 4
        # Three "\n\n" separators join four texts: counted, the whole is at most the budget; the
        # cuts fall on characters here, so it is also within a few characters of it (the markers' digits).
        assert len(context) <= budget
        assert len(context) >= budget - 8, len(context)


# --- 2. a breaker open on one hook keeps the plugin out of that hook only ---------------------------

FLAKY = """
import os
from pathlib import Path

from omcm_core import Result, hookimpl


@hookimpl
def post_tool(event, ctx):
    calls = Path(ctx.env["REL_FLAKY_DIR"]) / "post_calls"
    calls.write_text(str(int(calls.read_text() if calls.exists() else "0") + 1))
    raise RuntimeError("flaky: post_tool always fails")


@hookimpl
def pre_tool(event, ctx):
    if (Path(ctx.env["REL_FLAKY_DIR"]) / "fail_pre").exists():
        raise RuntimeError("flaky: pre_tool fails this once")
    return Result(permission="deny", reason="flaky was called on PreToolUse")
"""


@pytest.mark.slow
def test_a_breaker_open_on_post_tool_use_does_not_keep_the_plugin_out_of_pre_tool_use(rel_world, tmp_path):
    site, knobs = tmp_path / "site", tmp_path / "knobs"
    knobs.mkdir()
    install_plugin_module(site, "flaky", FLAKY)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OMCM")},
        "PYTHONPATH": str(site),
        "OMCM_HOME": str(rel_world["home"]),
        "OMCM_DAEMON": "0",
        "OMCM_LOAD_PLUGINS": "flaky",
        "OMCM_PASS_ENV": "REL_*",
        "REL_FLAKY_DIR": str(knobs),
    }
    cwd = str(rel_world["project"])
    post = json.dumps(post_tool_payload("Bash", {"command": "ls"}, {"stdout": ""}, cwd=cwd)).encode()
    pre = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=cwd)).encode()
    for _ in range(3):  # the default threshold: PostToolUse's breaker opens
        assert run_hook(post, env, cwd=rel_world["project"]).returncode == 0
    (knobs / "fail_pre").touch()
    assert run_hook(pre, env, cwd=rel_world["project"]).stdout.strip() == b""  # one failure on PreToolUse
    (knobs / "fail_pre").unlink()

    answer = run_hook(pre, env, cwd=rel_world["project"])
    assert answer.returncode == 0, answer.stderr
    decided = json.loads(answer.stdout)["hookSpecificOutput"]
    assert decided["permissionDecision"] == "deny" and "flaky was called" in decided["permissionDecisionReason"]
    # ... while PostToolUse keeps it out: its open breaker holds.
    assert run_hook(post, env, cwd=rel_world["project"]).returncode == 0
    assert (knobs / "post_calls").read_text() == "3"


# --- 3. the Python client's last-resort handler exits 0 with nothing on stdout ----------------------


def _blocked_reading_stdin(pid: int) -> bool:
    try:
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        syscall = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    # x86-64 and arm64 number read() 0 and 63; wchan names the pipe wait where the kernel exposes it.
    return "pipe" in wchan or (bool(syscall) and syscall[0] in ("0", "63"))


@pytest.mark.skipif(not Path("/proc/self/syscall").exists(), reason="needs Linux /proc to see the client block")
def test_an_unexpected_exception_in_the_python_hook_client_exits_0_with_nothing_on_stdout(rel_world):
    """An interrupt while the client waits for its payload is the exception no layer below main() handles."""
    from omcm_core._cli.install import hook_command

    env = {**os.environ, "OMCM_HOME": str(rel_world["home"]), "OMCM_DAEMON": "0"}
    # The registered command exactly as `omcm install` writes it (python -S -c ... fast_hook.py EVENT).
    proc = subprocess.Popen(
        ["/bin/sh", "-c", "exec " + hook_command("PreToolUse")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not _blocked_reading_stdin(proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the client never waited for its payload"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out == b""


# --- 4. the native client whose interpreter is gone ------------------------------------------------


@pytest.mark.slow
def test_the_native_client_exits_0_when_its_python_interpreter_was_removed(tmp_path, monkeypatch):
    from omcm_core._cli import native_client

    gone = tmp_path / "py" / "python3"
    gone.parent.mkdir()
    gone.symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setattr(sys, "executable", str(gone))  # what config_header bakes into the binary
    binary, why = native_client.build(tmp_path / "bin" / "omcm-hook")
    if binary is None:
        pytest.skip(f"the native client cannot be built here: {why}")
    gone.unlink()
    home = tmp_path / "home"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "OMCM_HOME": str(home), "OMCM_DAEMON": "0"}
    payload = json.dumps(pre_tool_payload("Bash", {"command": "rm -rf /"}, cwd=str(tmp_path))).encode()

    plain = subprocess.run([str(binary), "hook", "PreToolUse"], input=payload, capture_output=True, env=env, timeout=60)
    assert plain.returncode == 0 and plain.stdout == b"", plain

    guard = subprocess.run(
        [str(binary), "hook", "PreToolUse", "fail-closed"], input=payload, capture_output=True, env=env, timeout=60
    )
    assert guard.returncode == 0, guard
    answer = json.loads(guard.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "omcm doctor" in answer["permissionDecisionReason"]

    other = json.dumps({"hook_event_name": "PostToolUse", "session_id": "s"}).encode()
    after = subprocess.run(
        [str(binary), "hook", "PostToolUse", "fail-closed"], input=other, capture_output=True, env=env, timeout=60
    )
    assert after.returncode == 0 and after.stdout == b""  # only PreToolUse denies


# --- 5. `omcm install` and the client's onFailure key ------------------------------------------------


def _fake_claude(folder: Path, version: str | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "claude"
    script.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n" if version else "#!/bin/sh\nexit 1\n")
    script.chmod(0o755)


@pytest.mark.slow
@pytest.mark.parametrize(("version", "expected"), [("2.1.294", False), (None, False), ("2.1.295", True)])
def test_omcm_install_writes_on_failure_only_for_clients_that_know_it(tmp_path, bash_guard_site, version, expected):
    home, settings, fake = tmp_path / "home", tmp_path / "settings.json", tmp_path / "fakebin"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('[core]\nfail_closed = ["bash-guard"]\n')
    _fake_claude(fake, version)
    env = {
        **os.environ,
        "OMCM_HOME": str(home),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(bash_guard_site),
        "PATH": f"{fake}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "omcm_core", "install", "--settings", str(settings)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    pre = [h for group in json.loads(settings.read_text())["hooks"]["PreToolUse"] for h in group["hooks"]]
    assert pre and all(h["command"].endswith("fail-closed") for h in pre)  # the guard is registered as one
    assert all(("onFailure" in h) is expected for h in pre), pre
    if expected:
        assert all(h["onFailure"] == "block" for h in pre)


# --- 8. `omcm stats --days N` counts days ------------------------------------------------------------


def test_omcm_stats_days_counts_days_not_hours(tmp_path):
    from omcm_core._runtime import stats
    from omcm_core.store import Store

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    store = Store(home)
    try:
        store.migrate("core-stats", stats.MIGRATIONS)
        now = time.time()
        recorder = stats.Recorder()
        for session in ("two-hours", "two-days"):
            recorder.note(session, "PreToolUse", {"plug": 1.0})
        assert recorder.flush(store) == 2
        store.execute("UPDATE omcm_stats SET last_ts = ? WHERE session_id = 'two-hours'", (now - 2 * 3600,))
        store.execute("UPDATE omcm_stats SET last_ts = ? WHERE session_id = 'two-days'", (now - 2 * 86400,))
    finally:
        store.close()

    def sessions(days: str) -> int:
        env = {**os.environ, "OMCM_HOME": str(home)}
        out = subprocess.run(
            [sys.executable, "-m", "omcm_core", "stats", "--json", "--days", days],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return sum(row["sessions"] for row in json.loads(out.stdout)["rows"])

    assert sessions("1") == 1  # two hours ago is within a day; two days ago is not
    assert sessions("3") == 2
    assert sessions("0.05") == 0  # 1.2 hours


# --- 9. `omcm plugins install` of something pip cannot install ---------------------------------------


@pytest.mark.slow
def test_plugins_install_of_an_uninstallable_thing_returns_1_registers_nothing_and_leaves_settings(tmp_path):
    home, user = tmp_path / "home", tmp_path / "user"
    home.mkdir(mode=0o700)
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "model": "opus"\n}\n')
    env = {**os.environ, "OMCM_HOME": str(home), "HOME": str(user), "PIP_NO_INDEX": "1"}
    # Registered first, so a wrong "install succeeded" would re-register into this very file.
    registered = subprocess.run(
        [sys.executable, "-m", "omcm_core", "install", "--settings", str(settings)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert registered.returncode == 0, registered.stderr
    original = settings.read_bytes()
    broken = tmp_path / "omcm-broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text("[project\nname = 'omcm-broken'\n")  # not TOML: pip fails
    done = subprocess.run(
        [sys.executable, "-m", "omcm_core", "plugins", "install", str(broken)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    said = (done.stdout + done.stderr).lower()
    assert "nothing was registered" in said or "not registered" in said, said[-2000:]
    assert settings.read_bytes() == original


# --- 10. a plugin that comes with omcm-core cannot be uninstalled alone -------------------------------


def test_plugins_uninstall_refuses_a_plugin_that_comes_with_omcm_core(tmp_path):
    """Should omcm-core ever ship a plugin, removing it would remove omcm: say how to switch it off instead."""
    site = tmp_path / "site"
    site.mkdir()
    # A second omcm-core distribution on the path, first in line, declaring a plugin of its own.
    core_dist = site / "omcm_core-99.0.dist-info"
    core_dist.mkdir()
    (core_dist / "METADATA").write_text("Metadata-Version: 2.1\nName: omcm-core\nVersion: 99.0\n")
    (core_dist / "entry_points.txt").write_text("[omcm]\nbuiltin-helper = omcm_builtin_helper\n")
    (site / "omcm_builtin_helper.py").write_text("")
    env = {**os.environ, "OMCM_HOME": str(tmp_path / "home"), "PYTHONPATH": str(site)}
    # Run away from the checkout, whose omcm_core.egg-info would be the first omcm-core on the path.
    listed = subprocess.run(
        [sys.executable, "-m", "omcm_core", "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
    )
    assert "builtin-helper" in listed.stdout, listed.stdout  # the plugin is seen as omcm-core's
    done = subprocess.run(
        [sys.executable, "-m", "omcm_core", "plugins", "uninstall", "builtin-helper"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "comes with omcm-core" in done.stderr and "OMCM_DISABLE_PLUGINS" in done.stderr
    assert (core_dist / "METADATA").exists() and (site / "omcm_builtin_helper.py").exists()
