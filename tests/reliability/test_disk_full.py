"""Disk full: a hook still exits 0 and no real file is left half written.

Two ways to run out of space: a file-size limit on the hook process
(``RLIMIT_FSIZE``, any OS user) and a really full filesystem (a 4 MiB tmpfs,
which needs root to mount). In both, ``rel-state`` replaces its state file
with ``omcm_core.files.atomic_write_bytes`` and ``rel-counter``/``rel-writer``
write to the store: the state file must hold its old content, no temporary
file may remain, the store must pass quick_check with every earlier write.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest
from reliability_harness import log_entries, parse_stdout, post_tool, run_hook, sqlite_check, sqlite_rows

pytestmark = pytest.mark.slow

PLUGINS = ["rel-answer", "rel-counter", "rel-state", "rel-writer"]
OLD_STATE = b"a" * 1000


def _prepare(rel_site, home, side):
    """A home with a state file, a counter at 1 and 300 reported store writes."""
    env = rel_site.env(home, PLUGINS, REL_SIDE_FILE=str(side), REL_WRITES="300", REL_STATE_BYTES="1000")
    first = run_hook(json.dumps(post_tool("full-session")).encode(), env)
    assert first.returncode == 0 and first.stdout
    assert not (home / "omcm.db-wal").exists()  # the store was checkpointed and closed
    assert (home / "plugins" / "rel-state" / "state.bin").read_bytes() == OLD_STATE
    return env


def _check_answer_and_files(home, proc):
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert b"Traceback" not in proc.stdout
    answer = parse_stdout("PostToolUse", proc.stdout)
    assert answer["hookSpecificOutput"]["additionalContext"] == "rel-answer saw Bash succeeded"
    assert (home / "plugins" / "rel-state" / "state.bin").read_bytes() == OLD_STATE, "the real file was damaged"
    leftovers = [p.name for p in home.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == [], f"partial files left: {leftovers}"


def _check_store(home, side, calls_allowed):
    db = home / "omcm.db"
    assert sqlite_check(db) == "ok"
    reported = set(side.read_text().split())
    stored = {r[0] for r in sqlite_rows(db, "SELECT id FROM rel_writer")}
    assert reported <= stored, "a committed write was lost"
    assert sqlite_rows(db, "SELECT calls FROM rel_counter")[0][0] in calls_allowed


def _limit_file_size(limit: int):
    def preexec() -> None:
        # Ignored, SIGXFSZ would kill the process; ignored, writes fail with EFBIG instead.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def test_file_size_limit_leaves_old_state_and_a_sound_store(rel_site, tmp_path):
    home, side = tmp_path / "home", tmp_path / "side.txt"
    env = _prepare(rel_site, home, side)
    assert (home / "omcm.db").stat().st_size > 64 * 1024
    env.update(REL_STATE_BYTES="500000", REL_STATE_FILL="b", REL_WRITES="200")
    proc = run_hook(json.dumps(post_tool("full-session")).encode(), env, preexec_fn=_limit_file_size(64 * 1024))
    _check_answer_and_files(home, proc)
    _check_store(home, side, calls_allowed=(1, 2))
    log_entries(home)  # the log stayed under the limit: every line parses
    failed = {e["plugin"] for e in log_entries(home) if e["event"] == "plugin_failed"}
    assert "rel-state" in failed  # the failure was logged, not hidden


@pytest.fixture
def rel_tiny_fs(tmp_path):
    """A 4 MiB tmpfs mounted for the test (root only)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the RLIMIT_FSIZE test covers disk full here")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount: Path, keep_free: int) -> None:
    stats = os.statvfs(mount)
    free = stats.f_bavail * stats.f_frsize
    with open(mount / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, free - keep_free))


def test_full_filesystem_leaves_old_state_and_a_sound_store(rel_site, rel_tiny_fs, tmp_path):
    home, side = rel_tiny_fs / "home", tmp_path / "side.txt"
    _prepare(rel_site, home, side)
    _fill(rel_tiny_fs, keep_free=16 * 1024)
    env = rel_site.env(
        home, PLUGINS, REL_SIDE_FILE=str(side), REL_WRITES="200", REL_STATE_BYTES="200000", REL_STATE_FILL="b"
    )
    for _ in range(2):  # the second call meets a disk that is still full
        proc = run_hook(json.dumps(post_tool("full-session")).encode(), env)
        _check_answer_and_files(home, proc)
    # Space comes back (the store cannot even be read while the disk is full):
    # nothing committed was lost and the same plugins work again without any repair.
    (rel_tiny_fs / "filler").unlink()
    _check_store(home, side, calls_allowed=(1, 2, 3))
    env["REL_STATE_BYTES"] = "2000"
    proc = run_hook(json.dumps(post_tool("full-session")).encode(), env)
    assert proc.returncode == 0 and parse_stdout("PostToolUse", proc.stdout)
    assert (home / "plugins" / "rel-state" / "state.bin").read_bytes() == b"b" * 2000
    _check_store(home, side, calls_allowed=(2, 3, 4))
    # A line being written when the disk filled may be torn (append-only log);
    # the lines written once space is back are whole.
    assert json.loads((home / "logs" / "omcm.jsonl").read_text().splitlines()[-1])["level"]
