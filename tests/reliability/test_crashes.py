"""SIGKILL at random points while a dispatcher writes to the store.

The ``rel-writer`` test plugin runs many small transactions and appends each id
to a side file only after its COMMIT returned. After every kill: the store
opens, passes ``quick_check``, every reported id is there, the two tables each
transaction touches still agree, every log line parses, and the next
dispatcher on the same home works.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time

import pytest
from reliability_harness import log_entries, post_tool, run_hook, spawn_hook, sqlite_check, sqlite_rows

pytestmark = pytest.mark.slow

TRIALS = 60
NEW_HOME_EVERY = 6  # a fresh home kills some runs during schema creation and migrations
SEED = int(os.environ.get("OMCM_REL_SEED", "20261123"))
#: Transactions per hook; OMCM_REL_WRITES=3 plays a machine fast enough to finish them before the kill.
WRITES = os.environ.get("OMCM_REL_WRITES", "5000")


def _wait_for_first_commit(side, before: int, proc, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if side.exists() and side.stat().st_size > before:
            return
        time.sleep(0.002)


def _committed(side) -> list[str]:
    return side.read_text().split() if side.exists() else []


def _verify(home, side) -> int:
    db = home / "omcm.db"
    if not db.exists():  # killed before the store was created
        assert not _committed(side)
        return 0
    assert sqlite_check(db) == "ok"
    tables = {r[0] for r in sqlite_rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    reported = set(_committed(side))
    if "rel_writer" not in tables:
        assert not reported, "ids were reported committed but the table is gone"
        return 0
    stored = {r[0] for r in sqlite_rows(db, "SELECT id FROM rel_writer")}
    assert reported <= stored, f"{len(reported - stored)} committed transactions lost"
    total = sqlite_rows(db, "SELECT n FROM rel_writer_totals WHERE k = 'rows'")
    assert (total[0][0] if total else 0) == len(stored), "a transaction was half applied"
    log_entries(home)  # raises if a line was torn by the kill
    return len(stored)


def test_sigkill_during_store_writes_loses_no_committed_transaction(rel_site, tmp_path):
    rng = random.Random(SEED)
    kills_mid_write = kills_early = 0
    home = side = None
    for trial in range(TRIALS):
        if trial % NEW_HOME_EVERY == 0:
            home, side = tmp_path / f"home-{trial}", tmp_path / f"committed-{trial}.txt"
        # The hook must provably still run when the kill lands: after its writes the plugin holds
        # (REL_HOLD_S) far past any trial, and the budget (which would end the hold: overrun,
        # answer, exit 0) is longer than a trial too. So a fast machine finishing the writes
        # before the kill no longer decides the verdict.
        env = rel_site.env(
            home,
            ["rel-writer"],
            REL_SIDE_FILE=str(side),
            REL_WRITES=WRITES,
            REL_HOLD_S="600",
            OMCM__CORE__PLUGIN_BUDGET_MS="120000",
        )
        before = side.stat().st_size if side.exists() else 0
        proc = spawn_hook(json.dumps(post_tool("crash-session")).encode(), env)
        if trial % 3 == 0:
            # Anywhere from start-up through opening, migrating and the first writes.
            time.sleep(rng.uniform(0.0, 0.35))
            kills_early += 1
        else:
            _wait_for_first_commit(side, before, proc)
            time.sleep(rng.uniform(0.0, 0.04))
            kills_mid_write += 1
        assert proc.poll() is None, f"trial {trial}: the writer finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        _verify(home, side)

    # The last home, killed repeatedly, still serves a dispatcher that runs to the end.
    env = rel_site.env(home, ["rel-writer"], REL_SIDE_FILE=str(side), REL_WRITES="50")
    done = run_hook(json.dumps(post_tool("crash-session")).encode(), env)
    assert done.returncode == 0 and done.stdout == b""
    stored = _verify(home, side)
    assert stored >= 50
    errors = [e for e in log_entries(home) if e["level"] in ("error", "critical")]
    assert errors == []
    print(
        f"figures: {TRIALS} SIGKILLs ({kills_early} early, {kills_mid_write} mid-write), seed {SEED}, {stored} rows intact"
    )
