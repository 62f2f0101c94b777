"""One hook call: payload bytes in, at most one JSON object out.

:func:`handle` is what ``omcm hook`` runs, in process or inside the warm
dispatcher (``omcm_core._runtime.daemon``): both give byte-identical answers because both
call this function. It never raises and never prints; bad input becomes one log
line and an empty answer (exit 0).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from attrs import frozen

from omcm_core import log
from omcm_core.paths import omcm_home

_logger = log.get_logger(component="dispatch")


@frozen
class Outcome:
    """What the hook process prints and its exit code."""

    stdout: bytes = b""
    exit_code: int = 0
    #: Trace lines for people (OMCM_TRACE_PLUGINS=1); Claude Code ignores stderr on exit 0.
    stderr: bytes = b""
    #: A plugin overran its budget (its thread may still run): the warm dispatcher retires.
    overran: bool = False


EMPTY = Outcome()
_managers: dict[tuple, Any] = {}


class StoreKeeper:
    """Keeps a store connection open from one call to the next in a long-lived process.

    Used by the warm dispatcher: connecting costs ~0.4 ms and closing the last
    connection checkpoints the WAL (~0.7 ms), together most of a PreToolUse.
    A kept connection is used again only while it still points at the file in
    OMCM_HOME (not one moved aside or deleted since).
    """

    def __init__(self) -> None:
        self._idle: dict[Path, Any] = {}
        self._lock = threading.Lock()

    def take(self, home: Path):
        from omcm_core.store import Store

        with self._lock:
            store = self._idle.pop(home, None)
        if store is not None and store.is_current():
            return store
        if store is not None:
            store.close()
        return Store(home)

    def give_back(self, store) -> None:
        if store.in_transaction:
            _logger.warning("store_transaction_left_open")  # a plugin's BEGIN without COMMIT
            store.close()
            return
        with self._lock:
            previous = self._idle.get(store.home)
            self._idle[store.home] = store
        if previous is not None and previous is not store:
            previous.close()

    def close(self) -> None:
        with self._lock:
            stores, self._idle = list(self._idle.values()), {}
        for store in stores:
            store.close()


def manager_for(env: Mapping[str, str]):
    """The plugin manager for this plugin selection, built once per process."""
    from omcm_core._runtime.manager import Manager

    key = (env.get("OMCM_LOAD_PLUGINS"), env.get("OMCM_DISABLE_PLUGINS"))
    manager = _managers.get(key)
    if manager is None:
        manager = _managers[key] = Manager.from_environment(env)
    return manager


def reset_managers() -> None:
    _managers.clear()


def decode_payload(raw: bytes) -> Any:
    """Bytes -> JSON value; raises ValueError with a readable message."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"payload is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise ValueError("payload is empty")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("payload is nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"payload is not JSON ({exc})") from None


def resolve_project_dir(env: Mapping[str, str], cwd: Optional[str]) -> Optional[Path]:
    """CLAUDE_PROJECT_DIR, else cwd, only if it is an existing absolute directory here.

    A Windows path replayed on Linux (``C:\\Users\\...``) is relative here and
    would make plugins write below the dispatcher's own working directory.
    """
    for candidate in (env.get("CLAUDE_PROJECT_DIR"), cwd):
        if not candidate or "\x00" in candidate:
            continue
        path = Path(candidate)
        if path.is_absolute() and path.is_dir():
            return path
    return None


def handle(
    raw: bytes,
    argv_event: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    manager_factory: Callable[[Mapping[str, str]], Any] = manager_for,
    keeper: Optional[StoreKeeper] = None,
) -> Outcome:
    """Dispatch one payload to every enabled plugin and merge their answers.

    :param keeper: keeps the store connection open for the next call (the
        warm dispatcher); without it the connection is closed at the end.
    """
    env = dict(os.environ if env is None else env)
    home = omcm_home(env)
    log.configure(home, env.get("OMCM_LOG_LEVEL"))
    started = time.perf_counter()
    try:
        return _handle(raw, argv_event, env, home, manager_factory, started, keeper)
    except BaseException as exc:  # the session must never break because of us
        if isinstance(exc, KeyboardInterrupt):
            raise
        _logger.exception("dispatch_crashed", error=f"{type(exc).__name__}: {exc}")
        return EMPTY


def _handle(raw, argv_event, env, home, manager_factory, started, keeper) -> Outcome:
    from omcm_core._runtime.payload import PayloadError, hook_name, parse_event

    try:
        payload = decode_payload(raw)
        event = parse_event(payload, argv_event)
    except (ValueError, PayloadError) as exc:
        _logger.error("bad_payload", error=str(exc)[:500], bytes=len(raw), argv_event=argv_event)
        return EMPTY
    if event is None:
        _logger.info("event_not_handled", hook_event=payload.get("hook_event_name"))
        return EMPTY

    from omcm_core._runtime.breaker import Breaker
    from omcm_core.config import Config, CoreConfig
    from omcm_core.context import Context
    from omcm_core._runtime.merge import dropped_fields, merge
    from omcm_core.records import Result
    from omcm_core.store import Store

    name = event.hook_event_name
    hook = hook_name(name)
    manager = manager_factory(env)
    if not manager.implementations(hook):
        return EMPTY
    project = resolve_project_dir(env, event.cwd)
    config = Config.load(home, project, env)
    core = config.section("core", CoreConfig)
    budget_ms = core.session_end_budget_ms if name == "SessionEnd" else core.plugin_budget_ms

    # One connection for the whole call (connecting costs more than most plugins' work),
    # unless a plugin overran: its thread may still be inside a transaction on it.
    shared = {"store": keeper.take(home) if keeper is not None else Store(home)}
    breaker = Breaker(shared["store"], core.breaker_threshold, core.breaker_cooldown_s)
    contexts: list[Context] = []

    def ctx_for(plugin: str) -> Context:
        ctx = Context(plugin, home, project, config, env, store=shared["store"])
        contexts.append(ctx)
        return ctx

    def on_timeout(plugin: str) -> None:
        shared["store"] = Store(home)

    def skip(plugin: str) -> bool:
        try:
            is_open = breaker.is_open(plugin)
        except Exception as exc:  # a broken store must not silence every plugin
            _logger.error("breaker_unreadable", error=str(exc))
            return False
        if is_open:
            _logger.warning("plugin_skipped_breaker_open", plugin=plugin, hook=hook)
        return is_open

    report = manager.call(hook, {"event": event}, budget_ms / 1000, skip, ctx_for, on_timeout)
    answers, failures, succeeded = report.answers, report.failures, report.succeeded
    breaker.store = shared["store"]  # not the one an overrunning plugin may still be using
    _update_breakers(breaker, failures, succeeded)
    for ctx in contexts:
        ctx.close()

    if name == "PreToolUse":
        for failure in failures:
            if failure.plugin in core.fail_closed:
                answers.append(
                    (
                        failure.plugin,
                        Result(
                            permission="deny",
                            reason=f"omcm: the {failure.plugin} check failed ({failure.kind}); denied to be safe.",
                        ),
                    )
                )
    for plugin, result in answers:
        dropped = dropped_fields(name, result)
        if dropped:
            _logger.warning("result_fields_dropped", plugin=plugin, hook_event=name, fields=dropped)
    response = merge(name, answers)
    if keeper is not None:
        keeper.give_back(shared["store"])
    else:
        shared["store"].close()
    _logger.debug(
        "dispatched",
        hook_event=name,
        pid=os.getpid(),
        session_id=event.session_id,
        plugins=len(succeeded) + len(failures),
        failures=len(failures),
        answered=response is not None,
        ms=round((time.perf_counter() - started) * 1000, 3),
    )
    trace = _trace(name, report) if env.get("OMCM_TRACE_PLUGINS") else b""
    # A plugin holding the GIL may finish before the timeout can fire: count its time too.
    overran = any(f.kind == "timeout" for f in failures) or any(ms > budget_ms for ms in report.timings_ms.values())
    if response is None:
        return Outcome(stderr=trace, overran=overran)
    return Outcome(stdout=json.dumps(response).encode("ascii"), stderr=trace, overran=overran)


def _trace(event_name: str, report) -> bytes:
    """One JSON line per plugin: what it answered (or how it failed) and how long it took."""
    import attrs

    lines = []
    answered = dict(report.answers)
    for plugin, ms in report.timings_ms.items():
        entry: dict[str, Any] = {"event": event_name, "plugin": plugin, "ms": ms}
        if plugin in answered:
            entry["result"] = {k: v for k, v in attrs.asdict(answered[plugin]).items() if v is not None}
        for failure in report.failures:
            if failure.plugin == plugin:
                entry["failed"] = f"{failure.kind}: {failure.detail}"
        lines.append("omcm-trace " + json.dumps(entry, ensure_ascii=False, default=str))
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


def _update_breakers(breaker, failures, succeeded) -> None:
    try:
        for failure in failures:
            breaker.record_failure(failure.plugin, f"{failure.kind}: {failure.detail}", failure.version)
        for plugin in succeeded:
            breaker.record_success(plugin)
    except Exception as exc:
        _logger.error("breaker_update_failed", error=str(exc))
