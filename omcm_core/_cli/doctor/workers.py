"""Background workers: this OMCM_HOME's detached omcm processes, and any that look stuck.

Plugins start work that outlives the hook (``python -m omcm_core observer-worker``,
memory-rotation's session-log writer) with ``omcm_core.background``; such work
takes seconds to minutes. One running for an hour waits on something that will
not come (a FIFO planted where a file was expected once hung a writer for ever).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from omcm_core._cli.doctor.records import Check, Probe, info, ok, warning

#: Seconds after which a process of this kind is reported as stuck.
STUCK_AFTER_S = {"hook": 120.0, "daemon": float("inf")}
DEFAULT_STUCK_S = 3600.0
PROC = Path("/proc")


def workers(probe: Probe) -> Iterator[Check]:
    if not (PROC / "self" / "cmdline").exists():
        yield info("workers.unknown", "not checked: this system has no /proc to list processes from")
        return
    here = Path(os.path.abspath(probe.home))
    found = [w for w in _omcm_processes() if w[0] not in (os.getpid(), os.getppid()) and w[2] == here]
    shown = 0
    for pid, argv, _home, age in found:
        if argv[:1] in (["daemon"], ["doctor"]):
            continue  # the Daemon section covers the warm dispatcher; doctor is us
        shown += 1
        yield classify(pid, argv, age)
    if not shown:
        yield ok("workers.none", "none running")


def classify(pid: int, argv: list[str], age_s: float) -> Check:
    """One process's line: fine, or stuck (with the command that ends it)."""
    name = "omcm " + " ".join(argv[:2])
    minutes = int(age_s // 60)
    if age_s > STUCK_AFTER_S.get(argv[0] if argv else "", DEFAULT_STUCK_S):
        return warning(
            f"worker.{pid}",
            f"{name} (pid {pid}) has run for {minutes} minutes: it looks stuck",
            fix=f"kill {pid}",
            data={"pid": pid, "argv": argv, "seconds": age_s},
        )
    return ok(
        f"worker.{pid}",
        f"{name} (pid {pid}), running for {minutes} min",
        data={"pid": pid, "argv": argv, "seconds": age_s},
    )


def _omcm_processes() -> Iterator[tuple[int, list[str], Path, float]]:
    """(pid, omcm arguments, its OMCM_HOME, seconds running) of this user's ``python -m omcm_core`` processes."""
    uid, now = os.getuid(), _uptime()
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            argv = [a.decode("utf-8", "replace") for a in (entry / "cmdline").read_bytes().split(b"\0")[:-1]]
            if "omcm_core" not in argv[1:4] or "-m" not in argv[1:3]:
                continue
            environ = dict(
                v.decode("utf-8", "replace").partition("=")[::2]
                for v in (entry / "environ").read_bytes().split(b"\0")
                if b"=" in v
            )
            # Field 22 of stat is the start time in clock ticks after boot; the name (field 2) may hold spaces.
            started = int((entry / "stat").read_text().rpartition(")")[2].split()[19]) / ticks
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
        rest = argv[argv.index("omcm_core") + 1 :]
        yield int(entry.name), rest, _home_of(environ), max(0.0, now - started)


def _home_of(environ: dict[str, str]) -> Path:
    # OMCM_HOME as that process sees it (its HOME, not ours).
    value = environ.get("OMCM_HOME") or os.path.join(environ.get("HOME", "~"), ".omcm")
    return Path(os.path.abspath(os.path.expanduser(value)))


def _uptime() -> float:
    try:
        return float((PROC / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return time.monotonic()
