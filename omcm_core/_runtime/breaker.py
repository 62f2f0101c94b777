"""Per-plugin circuit breaker, kept in the shared store so every dispatcher agrees.

After ``threshold`` consecutive failures a plugin is left out for ``cooldown``
seconds; then one trial call is let through: success closes the breaker, failure
opens it again. A breaker also closes when the plugin's code changes (its
version or its source files, see ``Manager.code_id``): the fix deserves a call.
``omcm plugins reset NAME`` closes one by hand; ``omcm doctor`` and
``omcm plugins`` show the open ones.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from attrs import frozen

from omcm_core.store import DB_NAME, Store

MIGRATIONS = [
    """
    CREATE TABLE IF NOT EXISTS omcm_breaker (
        plugin TEXT PRIMARY KEY,
        failures INTEGER NOT NULL,
        opened_at REAL,
        last_error TEXT,
        version TEXT,
        updated_at REAL NOT NULL
    );
    """,
    # What identified the plugin's code at its last failure; another code closes the breaker.
    "ALTER TABLE omcm_breaker ADD COLUMN code TEXT;",
]


@frozen
class BreakerState:
    """One plugin's row: consecutive failures, when the breaker opened, which code failed."""

    failures: int
    opened_at: float | None
    code: str | None


class Breaker:
    """The breakers of every plugin, read once per call from ``store``.

    Writes go to the store given to :meth:`record` (after a plugin overran, the
    dispatcher passes a fresh connection: the overrunning thread may still be in
    a transaction on the first one).
    """

    def __init__(self, store: Store, threshold: int = 3, cooldown_s: float = 300) -> None:
        self.store = store
        self.threshold = max(1, threshold)
        self.cooldown_s = cooldown_s
        self._rows: dict[str, BreakerState] | None = None

    def _load(self) -> dict[str, BreakerState]:
        if self._rows is None:
            self.store.migrate("core", MIGRATIONS)
            rows = self.store.query("SELECT plugin, failures, opened_at, code FROM omcm_breaker")
            self._rows = {plugin: BreakerState(failures, opened_at, code) for plugin, failures, opened_at, code in rows}
        return self._rows

    def state(self, plugin: str) -> BreakerState | None:
        """The plugin's row, or None when it has not failed since its last success."""
        return self._load().get(plugin)

    def is_open(self, plugin: str, now: float | None = None) -> bool:
        state = self._load().get(plugin)
        if state is None or state.failures < self.threshold or state.opened_at is None:
            return False
        return ((now or time.time()) - state.opened_at) < self.cooldown_s

    def record(self, failures: Iterable, succeeded: Iterable[str], store: Store | None = None) -> None:
        """Count each failure (a ``manager.Failure``) and close the breakers of plugins that succeeded."""
        target = store or self.store
        for failure in failures:
            self.record_failure(
                failure.plugin, f"{failure.kind}: {failure.detail}", failure.version, failure.code, target
            )
        for plugin in succeeded:
            if plugin in self._load():  # the common case writes nothing
                self.reset(plugin, target)

    def record_failure(
        self, plugin: str, error: str, version: str = "", code: str = "", store: Store | None = None
    ) -> int:
        now = time.time()
        with (store or self.store).transaction() as conn:
            row = conn.execute("SELECT failures FROM omcm_breaker WHERE plugin = ?", (plugin,)).fetchone()
            failures = (row[0] if row else 0) + 1
            opened_at = now if failures >= self.threshold else None
            conn.execute(
                "INSERT INTO omcm_breaker(plugin, failures, opened_at, last_error, version, code, updated_at) "
                "VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(plugin) DO UPDATE SET failures = excluded.failures, "
                "opened_at = excluded.opened_at, last_error = excluded.last_error, version = excluded.version, "
                "code = excluded.code, updated_at = excluded.updated_at",
                (plugin, failures, opened_at, _masked(error), version, code, now),  # errors quote tool input
            )
        self._load()[plugin] = BreakerState(failures, opened_at, code)
        return failures

    def reset(self, plugin: str, store: Store | None = None) -> bool:
        """Close ``plugin``'s breaker and forget its failures; False if there was nothing to close."""
        self._load()
        with (store or self.store).transaction() as conn:
            deleted = conn.execute("DELETE FROM omcm_breaker WHERE plugin = ?", (plugin,)).rowcount
        self._load().pop(plugin, None)
        return deleted > 0

    def rows(self) -> list[dict]:
        self.store.migrate("core", MIGRATIONS)
        cur = self.store.execute(
            "SELECT plugin, failures, opened_at, last_error, version, updated_at FROM omcm_breaker ORDER BY plugin"
        )
        names = [d[0] for d in cur.description]
        now = time.time()
        out = []
        for row in cur.fetchall():
            item = dict(zip(names, row, strict=True))
            item["open"] = self.is_open(item["plugin"], now)
            out.append(item)
        return out


def _breaker(home: Path, project: Path | None, env: Mapping[str, str], store: Store) -> Breaker:
    from omcm_core.config import Config, CoreConfig

    core = Config.load(home, project, env).section("core", CoreConfig)
    return Breaker(store, core.breaker_threshold, core.breaker_cooldown_s)


def reset_breaker(home: Path, plugin: str) -> bool:
    """``omcm plugins reset NAME``: close the plugin's breaker now; False if it had none."""
    if not (home / DB_NAME).exists():
        return False  # nothing ever failed here; do not create a store to say so
    store = Store(home)
    try:
        return Breaker(store).reset(plugin)
    finally:
        store.close()


def open_breakers(home: Path, project: Path | None, env: Mapping[str, str]) -> set[str]:
    """The plugins an open breaker keeps out right now (``omcm plugins`` shows them as "breaker open")."""
    if not (home / DB_NAME).exists():
        return set()
    store = Store(home)
    try:
        return {row["plugin"] for row in _breaker(home, project, env, store).rows() if row["open"]}
    finally:
        store.close()


def _masked(error: str) -> str:
    # Imported here: compiling the masking patterns costs a call that records no failure.
    from omcm_core.redact import mask_head

    return mask_head(error, 2000)
