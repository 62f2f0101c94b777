"""structlog, configured once: JSON lines in OMCM_HOME/logs/omcm.jsonl, never stdout.

structlog costs ~40 ms to import, so the module exposes a tiny facade whose
level check is free and which imports and configures structlog on the first
line actually written. Every value is masked (``omcm_core.redact``) on the way.
"""

from __future__ import annotations

import _thread
import os
import sys
from pathlib import Path
from typing import Any

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}

_state: dict[str, Any] = {"level": None, "path": None, "logger": None, "stderr": False, "sink": None}
# A plugin's worker thread and the caller may write their first line at once: one sink, not two (one leaked).
_lock = _thread.allocate_lock()


def configure(home: Path | None, level: str | None = None, stderr: bool = False) -> None:
    """Choose where lines go. ``level`` defaults to ``OMCM_LOG_LEVEL`` or info.

    Called once per hook call; a long-lived process (the warm dispatcher, tests)
    keeps its open log file while nothing changes.
    """
    name = (level or os.environ.get("OMCM_LOG_LEVEL") or "info").lower()
    new_level = _LEVELS.get(name, 20)
    new_path = (home / "logs" / "omcm.jsonl") if home else None
    if (new_level, new_path, stderr) == (_state["level"], _state["path"], _state["stderr"]):
        return
    with _lock:
        _state.update(level=new_level, path=new_path, stderr=stderr, logger=None)
        sink, _state["sink"] = _state["sink"], None
    if sink is not None and sink is not sys.stderr:
        try:
            sink.close()
        except OSError:
            pass


def log_path() -> Path | None:
    return _state["path"]


def _mask_processor(_logger: Any, _name: str, event_dict: dict) -> dict:
    # By key name too: log.info("login", password=...) masks the value whatever it looks like.
    from omcm_core.redact import mask_structured

    return mask_structured(event_dict)


def _open_sink():
    path: Path | None = _state["path"]
    if path is None or _state["stderr"]:
        return sys.stderr
    try:
        from omcm_core.paths import ensure_private_dir

        ensure_private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return os.fdopen(fd, "a", encoding="utf-8", buffering=1)
    except OSError:
        return sys.stderr


def _logger():
    if _state["logger"] is None:
        import structlog  # outside the lock: an import takes the import lock, which another thread may hold

        with _lock:
            if _state["logger"] is None:
                sink = _state["sink"] = _open_sink()
                _state["logger"] = structlog.wrap_logger(
                    structlog.WriteLogger(sink),
                    processors=[
                        structlog.contextvars.merge_contextvars,
                        structlog.processors.add_log_level,
                        structlog.processors.TimeStamper(fmt="iso", utc=True),
                        structlog.processors.dict_tracebacks,
                        _mask_processor,
                        structlog.processors.JSONRenderer(),
                    ],
                    wrapper_class=structlog.make_filtering_bound_logger(_state["level"] or 20),
                )
    return _state["logger"]


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
            getattr(_logger(), level)(event, **{**self._fields, **kw})
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
