"""Circuit breakers per plugin, hook and project, kept in the shared store so every dispatcher agrees.

After ``threshold`` consecutive failures of one plugin on one hook in one
project, that plugin is left out of that hook in that project for ``cooldown``
seconds; then one trial call is let through: success closes the breaker,
failure opens it again. Keyed so narrowly because one store serves every
project: a bug in a guard's harmless ``post_tool`` must not make it deny every
tool call, and a hostile repository that makes a plugin fail must not switch it
off in the user's other projects (issue 24 items 1 and 12). The threshold and
cooldown are the user's (``[core]`` in OMCM_HOME; a project cannot change them).

A breaker also closes when the plugin's code changes (its version or its
source files, see ``Manager.code_id``): the fix deserves a call.
``omcm plugins reset NAME`` closes every breaker of a plugin by hand;
``omcm doctor`` and ``omcm plugins`` show the open ones.
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
    # One breaker per plugin, hook and project; the old per-plugin counts are dropped (a breaker
    # that was open simply gets its three failures again before it reopens).
    """
    CREATE TABLE IF NOT EXISTS omcm_breakers (
        plugin TEXT NOT NULL,
        hook TEXT NOT NULL,
        project TEXT NOT NULL,
        failures INTEGER NOT NULL,
        opened_at REAL,
        last_error TEXT,
        version TEXT,
        code TEXT,
        updated_at REAL NOT NULL,
        PRIMARY KEY (plugin, hook, project)
    );
    DROP TABLE IF EXISTS omcm_breaker;
    """,
]


@frozen
class BreakerState:
    """One plugin's row for this hook and project: consecutive failures, when it opened, which code failed."""

    failures: int
    opened_at: float | None
    code: str | None


class Breaker:
    """The breakers of one project (``project``: its folder, "" for none), read once per call from ``store``.

    Writes go to the store given to :meth:`record` (after a plugin overran, the
    dispatcher passes a fresh connection: the overrunning thread may still be in
    a transaction on the first one).
    """

    def __init__(self, store: Store, threshold: int = 3, cooldown_s: float = 300, project: str = "") -> None:
        self.store = store
        self.threshold = max(1, threshold)
        self.cooldown_s = cooldown_s
        self.project = project
        self._rows: dict[tuple[str, str], BreakerState] | None = None

    def _load(self) -> dict[tuple[str, str], BreakerState]:
        if self._rows is None:
            self.store.migrate("core", MIGRATIONS)
            rows = self.store.query(
                "SELECT plugin, hook, failures, opened_at, code FROM omcm_breakers WHERE project = ?", (self.project,)
            )
            self._rows = {(plugin, hook): BreakerState(n, opened, code) for plugin, hook, n, opened, code in rows}
        return self._rows

    def state(self, plugin: str, hook: str) -> BreakerState | None:
        """The plugin's row for ``hook``, or None when it has not failed there since its last success."""
        return self._load().get((plugin, hook))

    def is_open(self, plugin: str, hook: str, now: float | None = None) -> bool:
        return self._open(self._load().get((plugin, hook)), now)

    def _open(self, state: BreakerState | None, now: float | None = None) -> bool:
        if state is None or state.failures < self.threshold or state.opened_at is None:
            return False
        return ((now or time.time()) - state.opened_at) < self.cooldown_s

    def record(self, hook: str, failures: Iterable, succeeded: Iterable[str], store: Store | None = None) -> None:
        """Count each failure (a ``manager.Failure``) on ``hook`` and close the breakers of plugins that succeeded."""
        target = store or self.store
        for failure in failures:
            self.record_failure(
                failure.plugin, hook, f"{failure.kind}: {failure.detail}", failure.version, failure.code, target
            )
        for plugin in succeeded:
            if (plugin, hook) in self._load():  # the common case writes nothing
                self.reset(plugin, hook, target)

    def record_failure(
        self, plugin: str, hook: str, error: str, version: str = "", code: str = "", store: Store | None = None
    ) -> int:
        now = time.time()
        self._load()
        key = (plugin, hook, self.project)
        with (store or self.store).transaction() as conn:
            row = conn.execute(
                "SELECT failures FROM omcm_breakers WHERE plugin = ? AND hook = ? AND project = ?", key
            ).fetchone()
            failures = (row[0] if row else 0) + 1
            opened_at = now if failures >= self.threshold else None
            conn.execute(
                "INSERT INTO omcm_breakers(plugin, hook, project, failures, opened_at, last_error, version, code, "
                "updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(plugin, hook, project) DO UPDATE SET "
                "failures = excluded.failures, opened_at = excluded.opened_at, last_error = excluded.last_error, "
                "version = excluded.version, code = excluded.code, updated_at = excluded.updated_at",
                (*key, failures, opened_at, _masked(error), version, code, now),  # errors quote tool input
            )
        self._load()[(plugin, hook)] = BreakerState(failures, opened_at, code)
        return failures

    def reset(self, plugin: str, hook: str | None = None, store: Store | None = None) -> bool:
        """Close ``plugin``'s breaker on ``hook`` here (every hook, every project when None); False if none."""
        self._load()
        with (store or self.store).transaction() as conn:
            if hook is None:
                deleted = conn.execute("DELETE FROM omcm_breakers WHERE plugin = ?", (plugin,)).rowcount
            else:
                deleted = conn.execute(
                    "DELETE FROM omcm_breakers WHERE plugin = ? AND hook = ? AND project = ?",
                    (plugin, hook, self.project),
                ).rowcount
        for key in [k for k in self._load() if k[0] == plugin and (hook is None or k[1] == hook)]:
            del self._load()[key]
        return deleted > 0

    def rows(self) -> list[dict]:
        """Every breaker of every project (``omcm doctor``), each with ``open``."""
        self.store.migrate("core", MIGRATIONS)
        cur = self.store.execute(
            "SELECT plugin, hook, project, failures, opened_at, last_error, version, updated_at FROM omcm_breakers "
            "ORDER BY plugin, hook, project"
        )
        names = [d[0] for d in cur.description]
        now = time.time()
        out = []
        for row in cur.fetchall():
            item = dict(zip(names, row, strict=True))
            item["open"] = self._open(BreakerState(item["failures"], item["opened_at"], None), now)
            out.append(item)
        return out


def project_key(project: Path | None) -> str:
    """How a project is named in the breaker table: its folder, "" when the call has none."""
    return str(project) if project is not None else ""


def _breaker(home: Path, project: Path | None, env: Mapping[str, str], store: Store) -> Breaker:
    from omcm_core.config import Config, CoreConfig

    core = Config.load(home, project, env).section("core", CoreConfig)
    return Breaker(store, core.breaker_threshold, core.breaker_cooldown_s, project_key(project))


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
    """The plugins an open breaker keeps out of some hook, in some project, right now ("breaker open")."""
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
