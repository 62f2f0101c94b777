"""The warm dispatcher keeps its store connection between calls, and never writes to a stale one."""

import os
import threading
import time

import pytest

from omcm_core import Result, hookimpl
from omcm_core._runtime.breaker import Breaker
from omcm_core._runtime.dispatch import StoreKeeper
from omcm_core.store import Store
from omcm_core.testing import pre_tool_payload

MIGRATIONS = ["CREATE TABLE seen (tool TEXT NOT NULL)"]


class Recorder:
    """Writes one row per call through ctx.store and says which connection it used."""

    def __init__(self):
        self.connections = []

    @hookimpl
    def pre_tool(self, event, ctx):
        ctx.store.migrate("recorder", MIGRATIONS)
        with ctx.store.transaction() as conn:
            conn.execute("INSERT INTO seen(tool) VALUES(?)", (event.tool_name,))
        # The object itself, kept alive, so no later connection can reuse its id.
        self.connections.append(ctx.store.conn)
        return None


def rows(home):
    store = Store(home)
    try:
        return [r[0] for r in store.query("SELECT tool FROM seen ORDER BY rowid")]
    finally:
        store.close()


def test_one_connection_serves_call_after_call(omcm_dispatch, omcm_home):
    recorder = Recorder()
    dispatch = omcm_dispatch(names={"recorder": recorder}, keeper=StoreKeeper())
    for tool in ("Read", "Edit", "Bash"):
        dispatch(pre_tool_payload(tool))
    assert len(set(recorder.connections)) == 1
    assert rows(omcm_home) == ["Read", "Edit", "Bash"]
    # Without a keeper every call connects afresh (and closes at the end).
    plain = Recorder()
    dispatch = omcm_dispatch(names={"recorder": plain})
    dispatch(pre_tool_payload("Read"))
    dispatch(pre_tool_payload("Read"))
    assert len(plain.connections) == 2 and rows(omcm_home)[-2:] == ["Read", "Read"]


@pytest.mark.parametrize("how", ["deleted", "moved aside", "replaced"])
def test_a_store_file_gone_between_calls_is_not_written_to(omcm_dispatch, omcm_home, how):
    recorder = Recorder()
    dispatch = omcm_dispatch(names={"recorder": recorder}, keeper=StoreKeeper())
    dispatch(pre_tool_payload("Read"))
    db = omcm_home / "omcm.db"
    for suffix in ("", "-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        if not side.exists():
            continue
        if how == "deleted":
            side.unlink()
        else:
            side.rename(side.with_name(side.name + ".old"))
    if how == "replaced":  # e.g. restored from a backup by the user
        Store(omcm_home).migrate("recorder", MIGRATIONS)
    dispatch(pre_tool_payload("Edit"))
    # The second write is in the file now at OMCM_HOME/omcm.db, not lost in the old one.
    assert rows(omcm_home) == ["Edit"]
    # A fresh connection (an inode number may be reused once the old file is closed).
    assert recorder.connections[0] is not recorder.connections[1]


def test_a_transaction_left_open_by_a_plugin_is_rolled_back_not_kept(omcm_dispatch, omcm_home):
    class Careless:
        @hookimpl
        def pre_tool(self, event, ctx):
            ctx.store.migrate("recorder", MIGRATIONS)
            ctx.store.execute("BEGIN IMMEDIATE")
            ctx.store.execute("INSERT INTO seen(tool) VALUES('never committed')")
            return Result(additional_context="ok")

    keeper = StoreKeeper()
    dispatch = omcm_dispatch(names={"careless": Careless()}, keeper=keeper)
    assert dispatch(pre_tool_payload("Read"))["hookSpecificOutput"]["additionalContext"] == "ok"
    # Nobody holds the write lock afterwards, and the half-done write is gone.
    other = Store(omcm_home, busy_timeout_ms=100)
    with other.transaction() as conn:
        conn.execute("INSERT INTO seen(tool) VALUES('other writer')")
    other.close()
    assert rows(omcm_home) == ["other writer"]
    assert not keeper.take(omcm_home).in_transaction


def test_overrun_inside_a_transaction_still_reaches_the_breaker(omcm_dispatch, omcm_home):
    release = threading.Event()

    class Stuck:
        @hookimpl
        def pre_tool(self, event, ctx):
            ctx.store.migrate("recorder", MIGRATIONS)
            ctx.store.execute("BEGIN")  # a read transaction, left open while it hangs
            ctx.store.query("SELECT count(*) FROM seen")
            release.wait(10)
            return None

    recorder = Recorder()
    keeper = StoreKeeper()
    dispatch = omcm_dispatch(
        names={"a-stuck": Stuck(), "b-recorder": recorder},
        env={"OMCM__CORE__PLUGIN_BUDGET_MS": "300"},
        keeper=keeper,
        strict=False,
    )
    try:
        dispatch(pre_tool_payload("Read"))
        dispatch(pre_tool_payload("Edit"))
    finally:
        release.set()
    breaker_rows = Breaker(Store(omcm_home)).rows()
    assert [(r["plugin"], r["failures"]) for r in breaker_rows] == [("a-stuck", 2)]
    assert "overran" in breaker_rows[0]["last_error"]
    assert rows(omcm_home) == ["Read", "Edit"]  # the plugin after it ran both times


def test_keeper_gives_each_concurrent_caller_its_own_connection(omcm_home):
    keeper = StoreKeeper()
    first = keeper.take(omcm_home)
    second = keeper.take(omcm_home)
    assert first is not second
    first.query("SELECT 1")
    keeper.give_back(first)
    assert keeper.take(omcm_home) is first
    keeper.give_back(second)
    keeper.close()
    assert second._conn is None


def test_kept_store_is_used_again_only_while_its_file_is_in_place(omcm_home):
    keeper = StoreKeeper()
    store = keeper.take(omcm_home)
    store.query("SELECT 1")
    keeper.give_back(store)
    os.replace(store.path, store.path.with_name("elsewhere.db"))
    time.sleep(0.01)
    fresh = keeper.take(omcm_home)
    assert fresh is not store and store._conn is None
