"""Per-plugin circuit breaker, kept in the shared store so every dispatcher agrees.

After ``threshold`` consecutive failures a plugin is left out for ``cooldown``
seconds; then one trial call is let through: success closes the breaker, failure
opens it again. ``omcm doctor`` lists breakers with their last error.
"""

from __future__ import annotations

import time
from typing import Optional

from omcm_core.redact import mask
from omcm_core.store import Store

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
    """
]


class Breaker:
    def __init__(self, store: Store, threshold: int = 3, cooldown_s: float = 300) -> None:
        self.store = store
        self.threshold = max(1, threshold)
        self.cooldown_s = cooldown_s
        self._rows: Optional[dict[str, tuple[int, Optional[float]]]] = None

    def _load(self) -> dict[str, tuple[int, Optional[float]]]:
        if self._rows is None:
            self.store.migrate("core", MIGRATIONS)
            self._rows = {
                plugin: (failures, opened_at)
                for plugin, failures, opened_at in self.store.query("SELECT plugin, failures, opened_at FROM omcm_breaker")
            }
        return self._rows

    def is_open(self, plugin: str, now: Optional[float] = None) -> bool:
        failures, opened_at = self._load().get(plugin, (0, None))
        if failures < self.threshold or opened_at is None:
            return False
        return ((now or time.time()) - opened_at) < self.cooldown_s

    def record_failure(self, plugin: str, error: str, version: str = "") -> int:
        now = time.time()
        with self.store.transaction() as conn:
            row = conn.execute("SELECT failures FROM omcm_breaker WHERE plugin = ?", (plugin,)).fetchone()
            failures = (row[0] if row else 0) + 1
            opened_at = now if failures >= self.threshold else None
            conn.execute(
                "INSERT INTO omcm_breaker(plugin, failures, opened_at, last_error, version, updated_at) "
                "VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(plugin) DO UPDATE SET failures = excluded.failures, "
                "opened_at = excluded.opened_at, last_error = excluded.last_error, version = excluded.version, "
                "updated_at = excluded.updated_at",
                (plugin, failures, opened_at, mask(error)[:2000], version, now),  # errors quote tool input
            )
        self._load()[plugin] = (failures, opened_at)
        return failures

    def record_success(self, plugin: str) -> None:
        if self._load().get(plugin, (0, None))[0] == 0:
            return  # the common case writes nothing
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM omcm_breaker WHERE plugin = ?", (plugin,))
        self._load().pop(plugin, None)

    def rows(self) -> list[dict]:
        self.store.migrate("core", MIGRATIONS)
        cur = self.store.execute(
            "SELECT plugin, failures, opened_at, last_error, version, updated_at FROM omcm_breaker ORDER BY plugin"
        )
        names = [d[0] for d in cur.description]
        now = time.time()
        out = []
        for row in cur.fetchall():
            item = dict(zip(names, row))
            item["open"] = self.is_open(item["plugin"], now)
            out.append(item)
        return out
