import os
import sqlite3
import stat

import pytest

from omcm_core.store import Store, split_sql

TRIGGER_SCHEMA = """
CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
CREATE TABLE log (v TEXT);
CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.v); END;
"""


def test_split_keeps_trigger_bodies_whole():
    assert len(split_sql(TRIGGER_SCHEMA)) == 3


def test_migrations_apply_once_in_order(tmp_path):
    store = Store(tmp_path)
    assert store.migrate("p", [TRIGGER_SCHEMA]) == 1
    assert store.migrate("p", [TRIGGER_SCHEMA, "ALTER TABLE t ADD COLUMN w TEXT"]) == 2
    with store.transaction() as conn:
        conn.execute("INSERT INTO t(v, w) VALUES ('a', 'b')")
    assert store.query("SELECT v FROM log") == [("a",)]
    fresh = Store(tmp_path)
    assert fresh.schema_version("p") == 2 and fresh.schema_version("other") == 0


def test_store_is_wal_and_owner_only(tmp_path):
    store = Store(tmp_path / "home")
    assert store.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.migrate("p", ["CREATE TABLE x (a)"])
    with store.transaction() as conn:
        conn.execute("INSERT INTO x VALUES (1)")
    for path in (store.path, store.path.with_name("omcm.db-wal")):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "home").st_mode) == 0o700


def test_failed_transaction_rolls_back(tmp_path):
    store = Store(tmp_path)
    store.migrate("p", ["CREATE TABLE x (a UNIQUE)"])
    with pytest.raises(sqlite3.IntegrityError), store.transaction() as conn:
        conn.execute("INSERT INTO x VALUES (1)")
        conn.execute("INSERT INTO x VALUES (1)")
    assert store.query("SELECT count(*) FROM x") == [(0,)]


def test_corrupt_database_is_moved_aside(tmp_path):
    (tmp_path / "omcm.db").write_bytes(b"this is not sqlite" * 100)
    store = Store(tmp_path)
    assert store.check() == "ok"
    aside = [p.name for p in tmp_path.iterdir() if p.name.startswith("omcm.db.corrupt-")]
    assert len(aside) == 1
    assert (tmp_path / aside[0]).read_bytes().startswith(b"this is not sqlite")
