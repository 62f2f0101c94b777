"""OMCM_HOME and everything in it is owner-only: folders 0700, files 0600.

Checked after a realistic run (session start, tool calls, store writes, plugin
state, logs) under the loosest umask (000), so no file can rely on the user's
umask, and on the store's WAL and shared-memory files while a dispatcher
holds the store open.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from reliability_harness import modes_under, post_tool, run_hook, spawn_hook

from omcm_core.testing import pre_tool_payload, session_start_payload

PLUGINS = ["rel-answer", "rel-counter", "rel-rows", "rel-state", "rel-writer"]


def _loose_umask() -> None:
    os.umask(0)


def _owner_only(home) -> dict[str, str]:
    wrong = {}
    for path, mode in modes_under(home).items():
        full = home / path if path != "." else home
        expected = "0o700" if full.is_dir() else "0o600"
        if mode != expected:
            wrong[path] = mode
    return wrong


@pytest.mark.slow
def test_home_is_owner_only_after_a_realistic_run(rel_site, tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)  # a user-made, too open OMCM_HOME is tightened
    os.chmod(home, 0o755)
    env = rel_site.env(home, PLUGINS, REL_SIDE_FILE=str(tmp_path / "side.txt"), REL_WRITES="20")
    session = "a1b2c3d4-0000-4000-8000-00000000beef"
    for payload in (
        session_start_payload(session_id=session, cwd=str(tmp_path)),
        pre_tool_payload("Bash", {"command": "ls"}, session_id=session, cwd=str(tmp_path)),
        post_tool(session, cwd=str(tmp_path)),
        post_tool("../../other-session", cwd=str(tmp_path)),
    ):
        proc = run_hook(json.dumps(payload).encode(), env, preexec_fn=_loose_umask)
        assert proc.returncode == 0, proc.stderr[-2000:]
    expected_present = ["omcm.db", "logs", "logs/omcm.jsonl", "plugins/rel-state/state.bin", "sessions"]
    found = modes_under(home)
    for path in expected_present:
        assert path in found, f"{path} was not created: the run was not realistic"
    assert _owner_only(home) == {}


def test_wal_and_shared_memory_are_owner_only_while_the_store_is_open(rel_site, tmp_path):
    home, side = tmp_path / "home", tmp_path / "side.txt"
    env = rel_site.env(home, PLUGINS, REL_SIDE_FILE=str(side), REL_WRITES="5", REL_HOLD_S="20")
    proc = spawn_hook(json.dumps(post_tool("wal-session")).encode(), env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(side.read_text().split() if side.exists() else []) < 5:
            time.sleep(0.01)
        assert proc.poll() is None, "the dispatcher ended before its store could be inspected"
        wal, shm = home / "omcm.db-wal", home / "omcm.db-shm"
        assert wal.exists() and shm.exists()
        assert _owner_only(home) == {}
    finally:
        proc.kill()
        proc.communicate(timeout=30)
