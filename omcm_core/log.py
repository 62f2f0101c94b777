"""JSON lines in OMCM_HOME/logs/omcm.jsonl, never stdout: structlog's format, without structlog.

Each line is what structlog's pipeline (bound fields, ``event``, ``level``, an ISO
UTC ``timestamp``, every value masked by ``omcm_core.redact``, ``json.dumps``) wrote,
written here by a few lines of code: importing structlog cost a cold hook call
that logs 70 ms (it imports ``asyncio``, and with it ``socket``, ``ssl`` and
``subprocess``). Only a line with ``exc_info`` imports it, for its structured
traceback (the ``exception`` field), on that error path alone.

The file is capped: past :data:`MAX_BYTES` (``OMCM_LOG_MAX_MB``, default 10) it is
renamed ``omcm.jsonl.1`` (older ones shift up to ``.{KEEP}``, the oldest goes) and
a new one started, so at most ``(KEEP + 1) x MAX_BYTES`` stay on disk. Checked when
a process opens the file and at each hook call of a long-lived one (one fstat).
"""

from __future__ import annotations

import _thread
import os
import sys
from pathlib import Path
from typing import Any

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}

#: Size at which the log is rotated, and how many rotated files are kept.
MAX_BYTES = 10 * 1024 * 1024
KEEP = 3
#: How long a line waits for another writer's lock before it is written without it.
LOCK_WAIT_S = 0.2

_state: dict[str, Any] = {"level": None, "path": None, "stderr": False, "sink": None, "library": True}
# A plugin's worker thread and the caller may write their first line at once: one sink, not two (one leaked).
_lock = _thread.allocate_lock()
# The warm dispatcher's threads log at once: one line is written whole before the next (structlog's
# WriteLogger held a lock for this too).
_write_lock = _thread.allocate_lock()


def configure(home: Path | None, level: str | None = None, stderr: bool = False) -> None:
    """Choose where lines go. ``level`` defaults to ``OMCM_LOG_LEVEL`` or info.

    Called once per hook call; a long-lived process (the warm dispatcher, tests)
    keeps its open log file while nothing changes.
    """
    name = (level or os.environ.get("OMCM_LOG_LEVEL") or "info").lower()
    new_level = _LEVELS.get(name, 20)
    new_path = (home / "logs" / "omcm.jsonl") if home else None
    if (new_level, new_path, stderr) == (_state["level"], _state["path"], _state["stderr"]):
        if _state["sink"] is not None and _outgrown(_state["sink"], new_path):
            with _lock:  # the next line reopens the file, rotating it first
                sink, _state["sink"] = _state["sink"], None
            if sink is not sys.stderr:
                try:
                    sink.close()
                except OSError:
                    pass
        return
    with _lock:
        _state.update(level=new_level, path=new_path, stderr=stderr)
        sink, _state["sink"] = _state["sink"], None
    if sink is not None and sink is not sys.stderr:
        try:
            sink.close()
        except OSError:
            pass


def log_path() -> Path | None:
    return _state["path"]


def mask_with_library(on: bool) -> None:
    """Whether lines are masked with detect-secrets' detectors too (always with omcm's rules).

    Off while a cold call (no warm dispatcher) is answering: the library's import
    (100-450 ms) would be a line's cost; the call turns it on again once its
    answer is out. Not a setting: a process-wide switch for that one path.
    """
    _state["library"] = on


def _mask_processor(_logger: Any, _name: str, event_dict: dict) -> dict:
    # By key name too: log.info("login", password=...) masks the value whatever it looks like.
    from omcm_core.redact import mask_structured

    return mask_structured(event_dict, library=_state["library"])


def _max_bytes() -> int:
    try:
        return max(1, int(float(os.environ.get("OMCM_LOG_MAX_MB", "")) * 1024 * 1024))
    except ValueError:
        return MAX_BYTES


def _outgrown(sink: Any, path: Path | None) -> bool:
    """The open file is over the cap, or another process rotated it away."""
    if sink is sys.stderr or path is None:
        return False
    try:
        st = os.fstat(sink.fileno())
        return st.st_size > _max_bytes() or os.stat(path).st_ino != st.st_ino
    except (OSError, ValueError):
        return True


def _rotate(path: Path) -> None:
    """``omcm.jsonl`` -> ``.1`` -> ... -> ``.KEEP`` (the oldest dropped), if it is over the cap; one process at a time."""
    try:
        if os.stat(path).st_size <= _max_bytes():
            return
        import fcntl

        fd = os.open(str(path) + ".lock", os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except (OSError, ImportError):
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path).st_size <= _max_bytes():
            return  # another process rotated it meanwhile
        for n in range(KEEP - 1, 0, -1):
            older = f"{path}.{n}"
            if os.path.exists(older):
                os.replace(older, f"{path}.{n + 1}")
        os.replace(path, f"{path}.1")
    except OSError:
        pass  # locked by another process, which is rotating it
    finally:
        os.close(fd)


class _LineFile:
    """An append-only log file written one whole line per ``os.write``, each under an ``flock``.

    A write the disk could not take in full (ENOSPC), or a writer killed inside
    one, leaves a torn line; the next line then starts on a line of its own, so
    every line written after it parses. Whether the file ends torn is read
    under the lock every writer takes for its write: read without it, another
    process's line of several pages can be seen half copied (the size grows a
    page at a time), and a spurious newline made an empty line.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        try:
            import fcntl  # POSIX; elsewhere lines are written unlocked

            self._fcntl: Any = fcntl
        except ImportError:
            self._fcntl = None

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        locked = self._take()
        try:
            # The end is known only under the lock: without it, a line being copied looks torn.
            if locked:
                size = os.fstat(self._fd).st_size
                if size > 0 and os.pread(self._fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
            os.write(self._fd, data)
        except OSError:
            pass
        finally:
            if locked:
                try:
                    self._fcntl.flock(self._fd, self._fcntl.LOCK_UN)
                except OSError:
                    pass

    def _take(self) -> bool:
        """The writers' lock, waited for at most LOCK_WAIT_S: a stopped process (Ctrl-Z) holding it must not stall hooks."""
        if self._fcntl is None:
            return False
        import time

        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                self._fcntl.flock(self._fd, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False  # written unlocked, whole in one write; only the torn-line check is skipped
                time.sleep(0.001)
            except OSError:
                return False

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        os.close(self._fd)


def _open_sink():
    path: Path | None = _state["path"]
    if path is None or _state["stderr"]:
        return sys.stderr
    try:
        from omcm_core.paths import ensure_private_dir

        ensure_private_dir(path.parent)
        _rotate(path)
        return _LineFile(os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600))
    except OSError:
        return sys.stderr


def _sink():
    if _state["sink"] is None:
        with _lock:
            if _state["sink"] is None:
                _state["sink"] = _open_sink()
    return _state["sink"]


def _timestamp() -> str:
    """UTC now as ``datetime.isoformat()`` writes it, ``+00:00`` as ``Z``: without importing datetime."""
    import time

    ns = time.time_ns()
    t = time.gmtime(ns // 1_000_000_000)
    micro = ns // 1000 % 1_000_000
    stamp = f"{t[0]:04d}-{t[1]:02d}-{t[2]:02d}T{t[3]:02d}:{t[4]:02d}:{t[5]:02d}"
    return f"{stamp}.{micro:06d}Z" if micro else f"{stamp}Z"


def _fallback(obj: Any) -> Any:
    # What structlog's JSONRenderer does with a value json cannot write.
    try:
        return obj.__structlog__()
    except AttributeError:
        return repr(obj)


def _line(level: str, event: str, fields: dict) -> str:
    """One JSON line, as structlog's pipeline wrote it: the fields, ``event``, ``level``, ``timestamp``, masked."""
    import json

    event_dict: Any = dict(fields)
    event_dict["event"] = event
    event_dict["level"] = level
    event_dict["timestamp"] = _timestamp()
    if event_dict.get("exc_info"):
        # The error path only: structlog's structured traceback (it imports structlog, asyncio among it).
        from structlog.processors import dict_tracebacks

        event_dict = dict_tracebacks(None, level, event_dict)
    else:
        event_dict.pop("exc_info", None)
    return json.dumps(_mask_processor(None, level, event_dict), default=_fallback)


class Logger:
    """A logger bound to some fields (``plugin=...``); cheap until it writes."""

    __slots__ = ("_fields",)

    def __init__(self, **fields: Any) -> None:
        self._fields = fields

    def bind(self, **fields: Any) -> Logger:
        return Logger(**{**self._fields, **fields})

    def _emit(self, level: str, event: str, kw: dict) -> None:
        if _state["level"] is None:
            configure(None)
        if _LEVELS[level] < _state["level"]:
            return
        try:
            line = _line(level, event, {**self._fields, **kw})
            sink = _sink()
            with _write_lock:
                sink.write(line + "\n")
                sink.flush()
        except Exception:  # logging must never break a hook
            pass

    def debug(self, event: str, **kw: Any) -> None:
        self._emit("debug", event, kw)

    def info(self, event: str, **kw: Any) -> None:
        self._emit("info", event, kw)

    def warning(self, event: str, **kw: Any) -> None:
        self._emit("warning", event, kw)

    def error(self, event: str, **kw: Any) -> None:
        self._emit("error", event, kw)

    def exception(self, event: str, **kw: Any) -> None:
        self._emit("error", event, {**kw, "exc_info": True})


def get_logger(**fields: Any) -> Logger:
    return Logger(**fields)
