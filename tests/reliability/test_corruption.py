"""A damaged store is moved aside with a log line, a fresh one is created, the session goes on."""

from __future__ import annotations

import json
import os

import pytest
from reliability_harness import log_entries, parse_stdout, post_tool, run_hook, sqlite_check, sqlite_rows

pytestmark = pytest.mark.slow

PLUGINS = ["rel-answer", "rel-counter", "rel-writer"]


def _garbage(data: bytes) -> bytes:
    return os.urandom(len(data))


def _truncated(data: bytes) -> bytes:
    return data[: len(data) * 2 // 3]


def _torn_page(data: bytes) -> bytes:
    # Header and schema intact, so opening succeeds: the damage shows up only in use.
    damaged = bytearray(data)
    damaged[4096 * 3 : len(data) - 4096 * 2] = os.urandom(len(data) - 4096 * 5)
    return bytes(damaged)


def _zeroed_header(data: bytes) -> bytes:
    return b"\0" * 100 + data[100:]


DAMAGE = {
    "garbage-bytes": _garbage,
    "truncated": _truncated,
    "torn-data-pages": _torn_page,
    "zeroed-header": _zeroed_header,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_corrupt_store_is_moved_aside_and_replaced(rel_site, tmp_path, damage):
    home = tmp_path / "home"
    # 400 writes may overrun the 1.5 s budget on a loaded machine; an abandoned plugin leaves the WAL behind.
    env = rel_site.env(
        home, PLUGINS, REL_SIDE_FILE=str(tmp_path / "side.txt"), REL_WRITES="400", OMCM__CORE__PLUGIN_BUDGET_MS="60000"
    )
    payload = json.dumps(post_tool("corrupt-session")).encode()
    assert run_hook(payload, env).returncode == 0
    db = home / "omcm.db"
    assert not (home / "omcm.db-wal").exists()  # closed cleanly: the whole store is in omcm.db
    original = db.read_bytes()
    assert len(original) > 4096 * 10
    damaged = DAMAGE[damage](original)
    db.write_bytes(damaged)
    logged_before = len(log_entries(home))

    env["REL_WRITES"] = "3"
    for _ in range(2):
        proc = run_hook(payload, env)
        assert proc.returncode == 0 and b"Traceback" not in proc.stdout
        answer = parse_stdout("PostToolUse", proc.stdout)
        assert answer["hookSpecificOutput"]["additionalContext"] == "rel-answer saw Bash succeeded"

    moved = sorted(home.glob("omcm.db.corrupt-*"))
    assert len(moved) == 1 and moved[0].read_bytes() == damaged, "the damaged file must be kept for recovery"
    new_entries = log_entries(home)[logged_before:]
    lines = [e for e in new_entries if e["event"] == "store_corrupt_moved_aside"]
    assert len(lines) == 1 and lines[0]["level"] == "error" and lines[0]["moved_to"] == str(moved[0])
    assert sqlite_check(db) == "ok"
    # Both calls after the damage were counted in the fresh store: the session went on at once.
    assert sqlite_rows(db, "SELECT calls FROM rel_counter") == [(2,)]
    assert len(sqlite_rows(db, "SELECT id FROM rel_writer")) == 6
    assert [e for e in new_entries if e["event"] == "plugin_failed"] == []


def test_store_moved_aside_by_another_process_is_not_moved_again(tmp_path):
    """Two dispatchers hit the same corruption: the second must not move the first's fresh store aside."""
    from omcm_core.store import Store

    home = tmp_path / "home"
    first, second = Store(home), Store(home)
    with first.transaction() as conn:
        conn.execute("CREATE TABLE t (x)")
    second.query("SELECT * FROM t")  # the second dispatcher has the same file open
    assert first.quarantine() is not None
    with Store(home).transaction() as conn:  # a third one starts afresh and writes
        conn.execute("CREATE TABLE fresh (x)")
        conn.execute("INSERT INTO fresh VALUES (1)")
    assert second.quarantine() is None
    assert Store(home).query("SELECT x FROM fresh") == [(1,)]
    moved = [p for p in home.glob("omcm.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(moved) == 1


def test_a_query_error_is_not_mistaken_for_corruption(tmp_path):
    import sqlite3

    from omcm_core.store import Store

    store = Store(tmp_path / "home")
    store.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    store.execute("INSERT INTO docs VALUES ('hello world')")
    with pytest.raises(sqlite3.OperationalError):
        store.query("SELECT * FROM docs WHERE docs MATCH ?", ('"unbalanced',))
    assert not list((tmp_path / "home").glob("omcm.db.corrupt-*"))
    assert store.query("SELECT body FROM docs") == [("hello world",)]
