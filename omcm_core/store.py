"""The shared SQLite store in OMCM_HOME (WAL, busy timeout, short transactions).

Many dispatchers run at once (parallel hooks, parallel tool calls), so:

- WAL lets readers proceed while one writer commits;
- ``busy_timeout`` makes a writer wait for the lock instead of failing with
  "database is locked";
- writes go through :meth:`Store.transaction` (``BEGIN IMMEDIATE``), which takes
  the write lock up front so two read-modify-write transactions never deadlock.

Each plugin owns its tables and evolves them with :meth:`Store.migrate`, which
records a per-plugin schema version in ``omcm_schema``.

A database that SQLite reports as corrupt, when opening it or later in a
transaction or query, is moved aside (with its WAL) and a fresh one is created
on next use: the session goes on and the damaged file stays for recovery.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Union

from omcm_core.files import move_aside
from omcm_core.log import get_logger
from omcm_core.paths import ensure_private_dir

DB_NAME = "omcm.db"
Migration = Union[str, Callable[[sqlite3.Connection], None]]  # noqa: UP007  (a runtime alias: 3.10 cannot | a string type)

_log = get_logger(component="store")
_migrate_lock = threading.RLock()  # re-entered when a migration finds the store corrupt


def split_sql(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies stay whole)."""
    statements, buf = [], ""
    for part in script.split(";"):
        buf += part + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                statements.append(buf.strip())
            buf = ""
    if buf.strip(" \t\r\n;"):
        statements.append(buf.strip())
    return statements


class Store:
    """A connection to ``OMCM_HOME/omcm.db``. Cheap to create; connects on first use."""

    def __init__(self, home: Path, busy_timeout_ms: int = 10_000) -> None:
        self.home = Path(home)
        self.path = self.home / DB_NAME
        self.busy_timeout_ms = busy_timeout_ms
        self._conn: sqlite3.Connection | None = None
        self._file_id: tuple[int, int] | None = None  # (device, inode) of the file we opened
        # (plugin, version) pairs known to be migrated in the file this connection has open;
        # per connection, because a file deleted or replaced meanwhile starts with no tables.
        self._migrated: set[tuple[str, int]] = set()

    # -- connection -----------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _connect(self) -> sqlite3.Connection:
        ensure_private_dir(self.home)
        if not self.path.exists():
            # Created owner-only before SQLite sees it; -wal and -shm inherit the mode.
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
        )
        self._file_id = _file_id(self.path)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                _log.warning("store_not_wal", journal_mode=mode)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("CREATE TABLE IF NOT EXISTS omcm_schema (plugin TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._quarantine_corrupt(exc)
            return self._connect()

    def _quarantine_corrupt(self, exc: BaseException) -> None:
        """Corruption found while in use: move the file aside so the next use starts afresh."""
        moved = self.quarantine()
        _log.error("store_corrupt_moved_aside", path=str(self.path), moved_to=str(moved), error=str(exc))

    def _checked(self, exc: BaseException) -> None:
        if isinstance(exc, sqlite3.DatabaseError) and _is_corruption(exc):
            self._quarantine_corrupt(exc)

    def quarantine(self) -> Path | None:
        """Move the database and its WAL aside; the next use starts a fresh one.

        Does nothing (returns None) when the file is no longer the one this
        store opened: another dispatcher already moved it aside and a fresh
        store may already hold new data.
        """
        opened = self._file_id
        self.close()
        if opened is not None and _file_id(self.path) not in (opened, None):
            return None
        moved = move_aside(self.path)
        for suffix in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                if moved is not None:
                    with contextlib.suppress(OSError):
                        os.replace(side, moved.with_name(moved.name + suffix))
                with contextlib.suppress(OSError):
                    side.unlink()
        return moved

    def __del__(self) -> None:
        # A store dropped without close() (a test, a short CLI command) must not leave
        # its connection to the garbage collector: Python 3.13 warns about that.
        try:
            self.close()
        except Exception:
            pass

    @property
    def in_transaction(self) -> bool:
        return self._conn is not None and self._conn.in_transaction

    def is_current(self) -> bool:
        """Connected, and to the file now at :attr:`path` (not one moved aside or replaced since)."""
        return self._conn is not None and self._file_id == _file_id(self.path)

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        self._file_id = None
        self._migrated = set()

    # -- use --------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction holding the write lock from its first statement."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            self._checked(exc)
            raise
        try:
            yield conn
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            self._checked(exc)
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                self._checked(exc)
                raise

    def execute(self, sql: str, params: Sequence[Any] | dict = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            self._checked(exc)
            raise

    def query(self, sql: str, params: Sequence[Any] | dict = ()) -> list[tuple]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            self._checked(exc)
            raise

    def schema_version(self, plugin: str) -> int:
        row = self.execute("SELECT version FROM omcm_schema WHERE plugin = ?", (plugin,)).fetchone()
        return row[0] if row else 0

    def migrate(self, plugin: str, migrations: Sequence[Migration]) -> int:
        """Bring ``plugin``'s tables to ``len(migrations)``; returns the version.

        Migration *n* (1-based) is applied once, in a transaction, only if the
        recorded version is below *n*. Append new migrations; never edit old ones.
        A migration is an SQL script or a callable taking the connection.
        """
        target = len(migrations)
        key = (plugin, target)
        if key in self._migrated:
            return target
        with _migrate_lock:
            if self.schema_version(plugin) >= target:
                self._migrated.add(key)
                return target
            with self.transaction() as conn:
                current = self.schema_version(plugin)
                for number, step in enumerate(migrations[current:], start=current + 1):
                    if callable(step):
                        step(conn)
                    else:
                        for statement in split_sql(step):
                            conn.execute(statement)
                    _log.info("store_migrated", plugin=plugin, version=number)
                conn.execute(
                    "INSERT INTO omcm_schema(plugin, version) VALUES(?, ?) "
                    "ON CONFLICT(plugin) DO UPDATE SET version = excluded.version",
                    (plugin, target),
                )
            self._migrated.add(key)
        return target

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                total += self.path.with_name(self.path.name + suffix).stat().st_size
        return total

    def check(self) -> str:
        """``PRAGMA quick_check``: 'ok' or the first problem."""
        return self.conn.execute("PRAGMA quick_check").fetchone()[0]


def _is_corruption(exc: BaseException) -> bool:
    # By error code where Python exposes it (3.11+): a query error such as FTS5's
    # "malformed MATCH expression" must not move a healthy store aside.
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB
    text = str(exc).lower()
    return "database disk image is malformed" in text or "file is not a database" in text


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino
