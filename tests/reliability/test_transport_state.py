"""A plugin never sees "the first caller's" process state through the warm dispatcher.

The request carries the caller's umask, working directory and environment
subset (TZ, OMCM_LOG_LEVEL, LANG...); the dispatcher applies them for the
call and puts its own back after. So the same call gives the same answer and
the same files, with the same names and modes, in process and warm. And the
dispatcher restarts when the source of any loaded plugin changes, not only of
modules named ``omcm*``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_harness import PLUGIN_SOURCES, install_plugins, log_entries, modes_under, post_tool, run_hook

from omcm_core._runtime import daemon

# Every client omcm can register (Python, native) runs these tests.
pytestmark = pytest.mark.usefixtures("hook_client")

EPOCH = "1700000000"  # 2023-11-14 22:13 UTC: another date in Seoul, another hour in Los Angeles
VARIANTS = [  # umask, TZ, file name, OMCM_LOG_LEVEL
    (0o077, "Asia/Seoul", "alpha", None),
    (0o002, "America/Los_Angeles", "beta", "debug"),
    (0o022, "UTC", "gamma", None),
]


def _start_daemon(env):
    proc = subprocess.Popen(
        [sys.executable, "-m", "omcm_core", "daemon", "run"],
        env=env,
        cwd="/",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(0),
    )
    deadline = time.monotonic() + 30
    while daemon.status(env) is None:
        assert proc.poll() is None and time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.05)
    return proc


def _context(stdout: bytes) -> dict:
    text = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    return json.loads(text.split("rel-probe ", 1)[1])


def _call(env, project: Path, mask: int, tz: str, name: str, level):
    call_env = {**env, "TZ": tz, "REL_PROBE_NAME": name, "REL_PROBE_EPOCH": EPOCH}
    call_env.pop("OMCM_LOG_LEVEL", None)
    if level:
        call_env["OMCM_LOG_LEVEL"] = level
    raw = json.dumps(post_tool("state-" + name, cwd=str(project))).encode()
    done = run_hook(raw, call_env, cwd=project, preexec_fn=lambda: os.umask(mask))
    assert done.returncode == 0, done.stderr[-2000:]
    return _context(done.stdout)


def test_umask_tz_cwd_and_env_are_the_callers_in_the_daemon_too(rel_site, tmp_path):
    home = tmp_path / "home"
    env = rel_site.env(home, ["rel-probe"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60")
    # The daemon itself starts under umask 000, UTC and debug logging: none of it may leak into a call.
    proc = _start_daemon({**env, "TZ": "UTC", "OMCM_LOG_LEVEL": "debug"})
    cold_project, warm_project = tmp_path / "cold", tmp_path / "warm"
    cold_project.mkdir()
    warm_project.mkdir()
    try:
        for mask, tz, name, level in VARIANTS:
            cold = _call({**env, "OMCM_DAEMON": "0"}, cold_project, mask, tz, name, level)
            warm = _call(env, warm_project, mask, tz, name, level)
            assert warm["cwd"] == warm["os_cwd"] == str(warm_project)
            for seen in (cold, warm):
                seen.pop("cwd"), seen.pop("os_cwd")
            assert warm == cold
            assert warm["log_level"] == warm["os_log_level"] == level
    finally:
        daemon.stop(env)
        proc.wait(timeout=30)
    assert modes_under(warm_project) == {**modes_under(cold_project), ".": modes_under(warm_project)["."]}
    assert len(modes_under(warm_project)) == 1 + 2 * len(VARIANTS)  # one folder and one file per call
    served = {e.get("pid") for e in log_entries(home) if e["event"] == "dispatched"}
    assert proc.pid in served  # the warm answers really came from the daemon


def test_the_daemon_restarts_when_a_plugin_module_not_named_omcm_changes(rel_site, tmp_path):
    site = tmp_path / "site"
    scratch = tmp_path / "build"
    scratch.mkdir()
    install_plugins([PLUGIN_SOURCES / "rel-probe"], site, scratch)
    module = site / "relprobe.py"
    home = tmp_path / "home"
    env = {**rel_site.env(home, ["rel-probe"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60"), "PYTHONPATH": str(site)}
    project = tmp_path / "project"
    project.mkdir()
    proc = _start_daemon(env)
    try:
        assert _call(env, project, 0o022, "UTC", "one", None)["version"] == "v1"
        module.write_text(module.read_text().replace('VERSION = "v1"', 'VERSION = "v2"'))
        # Same size, and maybe the same second as pip's install: Python would take the old .pyc as
        # current (it checks size and whole-second mtime). A person's edit comes later than that.
        later = module.stat().st_mtime + 2
        os.utime(module, (later, later))
        assert _call(env, project, 0o022, "UTC", "two", None)["version"] == "v2"
        proc.wait(timeout=30)  # the old daemon has gone
    finally:
        daemon.stop(env)
    assert any(e["event"] == "daemon_code_changed_exit" for e in log_entries(home))


def test_a_variable_passed_by_one_session_is_not_seen_by_the_next(rel_site, tmp_path):
    """OMCM_PASS_ENV lets one caller hand a plugin a variable; it must not stay for later calls of others.

    The daemon is spawned with its first caller's environment subset, passed variables included
    (``starter._daemon_env``): the daemon here starts that way, then serves other sessions.
    """
    home = tmp_path / "home"
    env = rel_site.env(home, ["rel-probe"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60")
    passing = {**env, "OMCM_PASS_ENV": "REL_*,PROBE_PASSED_TOKEN", "PROBE_PASSED_TOKEN": "first-callers-token"}
    proc = _start_daemon(passing)
    project = tmp_path / "project"
    project.mkdir()
    try:
        assert _call(passing, project, 0o022, "UTC", "one", "debug")["passed"] == ["first-callers-token"] * 2
        assert _call(env, project, 0o022, "UTC", "two", "debug")["passed"] == [None, None]
        other = {**env, "OMCM_PASS_ENV": "REL_*,PROBE_*", "PROBE_PASSED_TOKEN": "second"}
        assert _call(other, project, 0o022, "UTC", "three", "debug")["passed"] == ["second"] * 2
        assert _call(env, project, 0o022, "UTC", "four", "debug")["passed"] == [None, None]
    finally:
        daemon.stop(env)
        proc.wait(timeout=30)
    served = [e.get("pid") for e in log_entries(home) if e["event"] == "dispatched"]
    assert served == [proc.pid] * 4  # every answer came from the one daemon
