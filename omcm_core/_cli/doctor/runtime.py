"""Daemon (the warm dispatcher) and Recent errors (the log's newest error lines)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning

RECENT_S = 24 * 3600
# Fields every log line has; the rest say what happened.
_COMMON = ("timestamp", "level", "event", "component")


def daemon(probe: Probe) -> Iterator[Check]:
    from omcm_core._runtime import daemon as warm
    from omcm_core._runtime import wire

    path = wire.socket_path(probe.env)
    problem = wire.socket_problem(os.fsencode(path))
    running = warm.status(dict(probe.env)) is not None
    data = {"socket": path, "running": running, "problem": problem}
    yield from hook_client(probe)
    if probe.env.get("OMCM_DAEMON") == "0":
        yield info("daemon.off", "off (OMCM_DAEMON=0): every hook call starts Python", data=data)
    elif problem:
        yield error(
            "daemon.socket",
            f"hooks answer in process (slow): {problem}",
            fix=_socket_fix(path, problem),
            data=data,
        )
    elif refused := _recently_refused(probe):
        yield warning(
            "daemon.refused",
            f"some hook calls answered in process (slow) in the last 24 hours: {refused}",
            data={**data, "refused": refused},
        )
    elif running:
        yield ok("daemon.running", f"running, listening at {path}", data=data)
    else:
        yield ok("daemon.idle", "not running now; the next hook call starts it", data=data)


def hook_client(probe: Probe) -> Iterator[Check]:
    """Which client ``omcm install`` registered (native or Python) and why."""
    from omcm_core._cli import native_client

    state = native_client.status(probe.home)
    if not state:
        return
    data = {k: state.get(k) for k in ("client", "path", "why")}
    if state.get("client") != "native":
        yield info("hook_client.python", f"hooks start the Python client: {state.get('why')}", data=data)
    elif not Path(str(state.get("path"))).is_file():
        yield error(
            "hook_client.missing", f"the native hook client {state.get('path')} is gone", fix="omcm install", data=data
        )
    elif native_client.outdated(probe.home):
        yield warning(
            "hook_client.outdated",
            "the native hook client was built for another omcm version or interpreter (it hands more calls to Python)",
            fix="omcm install",
            data=data,
        )
    else:
        yield ok("hook_client.native", f"hooks start the native client ({state.get('why')})", data=data)


def _recently_refused(probe: Probe) -> str | None:
    """Why the client last refused the fast path (an unsafe folder, a foreign peer...), if it did lately.

    Routine refusals (busy, stopping, late) are logged at debug level and do not count.
    """
    from omcm_core.transcripts import read_jsonl

    try:  # the probed home's log: hook calls write there, whatever this process logged to before
        entries = list(read_jsonl(probe.home / "logs" / "omcm.jsonl", max_bytes=256 * 1024))
    except OSError:
        return None
    for entry in reversed(entries):
        if entry.get("event") in ("daemon_not_used", "daemon_not_started") and entry.get("level") == "warning":
            if _within(entry.get("timestamp"), RECENT_S):
                return str(entry.get("reason"))
            return None
    return None


def _socket_fix(path: str, problem: str) -> str | None:
    """The command that clears what blocks the socket; none when the folder belongs to another user."""
    import shlex

    folder = os.path.dirname(path)
    if problem.endswith("is not a socket"):  # something else sits in our own private folder
        return f"rm -r {shlex.quote(path)}"
    if "is not a folder" in problem:
        return f"rm {shlex.quote(folder)}"
    try:
        mine = os.lstat(folder).st_uid == os.getuid()
    except OSError:
        return None
    return f"chmod 700 {shlex.quote(folder)}" if mine else None


def recent_errors(log_file: Path, limit: int = 10) -> list[dict]:
    """The newest error lines of the log, newest first, from its last 256 KiB."""
    from omcm_core.transcripts import read_jsonl

    try:
        entries = list(read_jsonl(log_file, max_bytes=256 * 1024))
    except OSError:
        return []
    return [e for e in reversed(entries) if e.get("level") in ("error", "critical")][:limit]


def errors(probe: Probe) -> Iterator[Check]:
    from omcm_core import log

    log_file = log.log_path() or probe.home / "logs" / "omcm.jsonl"
    # Older lines are history: a problem fixed yesterday must not keep doctor yellow.
    entries = [e for e in recent_errors(log_file, limit=50) if _within(e.get("timestamp"), RECENT_S)]
    if not entries:
        yield ok("log.errors", f"no errors in the last 24 hours ({probe.tilde(log_file)})")
        return
    # The same line repeats on every hook call: say it once, with how often and when last.
    counts = Counter(describe(e) for e in entries)
    last: dict[str, str] = {}
    for e in entries:
        last.setdefault(describe(e), e.get("timestamp", ""))
    for n, (text, count) in enumerate(list(counts.items())[:10]):
        when = last[text][:19].replace("T", " ")
        times = f" ({count} times, last {when})" if count > 1 else f" ({when})"
        yield warning(f"log.error.{n}", f"{text}{times}", data={"line": text, "count": count, "last": last[text]})
    yield info("log.file", f"full log: {probe.tilde(log_file)}")


def _within(timestamp: object, seconds: float) -> bool:
    from datetime import datetime, timezone

    try:
        when = datetime.fromisoformat(str(timestamp).replace("Z", "+00:00"))
    except ValueError:
        return True  # no usable time: show it rather than hide it
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (datetime.now(timezone.utc) - when).total_seconds() <= seconds


def describe(entry: dict) -> str:
    """A log line as one readable line: its event, then its fields as "key: value"."""
    from omcm_core._cli.doctor.plugins import plain

    fields = [f"{k}: {plain(v)}" for k, v in entry.items() if k not in _COMMON and k != "known"]
    text = f"{entry.get('event', '?')}" + (f" ({'; '.join(fields)})" if fields else "")
    return text[:300]
