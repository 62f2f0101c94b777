"""Store: the shared SQLite file, and the circuit breakers kept in it."""

from __future__ import annotations

import stat
from collections.abc import Iterator

from omcm_core._cli.doctor.records import Check, Probe, error, ok, warning


def store(probe: Probe) -> Iterator[Check]:
    if probe.store_blocked:
        yield warning("store.skipped", f"not opened: {probe.store_blocked} (see Installation)")
        return
    db = probe.store
    shown = probe.tilde(db.path)
    try:
        check, size = db.check(), db.size_bytes()
    except Exception as exc:
        yield error("store.open", f"{shown} is unusable: {exc}", fix=f"mv {shown} {shown}.bad")
        return
    mode = stat.S_IMODE(db.path.stat().st_mode)
    data = {"path": str(db.path), "bytes": size, "check": check, "mode": f"{mode:04o}"}
    if check != "ok":
        yield error(
            "store.check", f"{shown} failed its integrity check: {check}", fix=f"mv {shown} {shown}.bad", data=data
        )
    else:
        yield ok("store.check", f"{shown}: {_size(size)}, integrity ok", data=data)
    if mode & 0o077:
        yield error("store.mode", f"{shown} is readable by others (mode {mode:04o})", fix=f"chmod 600 {shown}")
    yield from breakers(probe)


def breakers(probe: Probe) -> Iterator[Check]:
    """Circuit breakers: a plugin that failed ``breaker_threshold`` times in a row is kept out for a while."""
    from omcm_core._runtime.breaker import Breaker
    from omcm_core.config import CoreConfig

    core = probe.config.section("core", CoreConfig)
    rows = Breaker(probe.store, core.breaker_threshold, core.breaker_cooldown_s).rows()
    for row in rows:
        name = row["plugin"]
        # One breaker per plugin, hook and project: say which.
        where = f"{row['hook']} in {probe.tilde(row['project']) if row['project'] else 'calls without a project'}"
        if row["open"]:
            yield error(
                f"breaker.{name}.{row['hook']}",
                f"{name} is switched off by its circuit breaker after {row['failures']} failures ({where}): "
                f"{row['last_error']}",
                fix=f"omcm plugins reset {name}",
                data=row,
            )
        elif row["failures"]:
            yield warning(
                f"breaker.{name}.{row['hook']}",
                f"{name} failed {row['failures']} time(s) in a row ({where}; breaker opens at "
                f"{core.breaker_threshold}): {row['last_error']}",
                data=row,
            )
    if not any(row["open"] or row["failures"] for row in rows):
        yield ok("breaker.all", "no circuit breaker is open")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"
