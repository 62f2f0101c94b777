"""Which plugins a call leaves out, and who denies in their place: circuit breakers and fail-closed guards.

Part of :func:`omcm_core._runtime.dispatch.handle`'s call (steps 5, 7 and 8 in
docs/architecture.md): an open breaker keeps its plugin out, failures are
counted, and a ``[core] fail_closed`` guard that failed, is kept out or did not
load is replaced by a denial. None of these raise: a broken store must not
silence every plugin.
"""

from __future__ import annotations

from typing import Any

from omcm_core import log

_logger = log.get_logger(component="dispatch")


def opening(breaker: Any, hook: str, failures: list, threshold: int) -> list:
    """The plugins whose failure now opens their breaker on ``hook`` (read before the breaker counts it)."""
    opened = []
    try:
        for failure in failures:
            state = breaker.state(failure.plugin, hook)
            if (state.failures if state else 0) + 1 == max(1, threshold):
                opened.append(failure.plugin)
    except Exception:  # an unreadable store: the breaker itself logs it
        pass
    return opened


def kept_out(breaker: Any, manager: Any, hook: str, names: list) -> dict:
    """Plugins an open breaker (theirs for this hook and project) keeps out of this call -> their failure count.

    A breaker whose plugin's code changed since its last failure is closed
    first: the new code deserves a call.
    """
    out = {}
    try:
        for name in names:
            state = breaker.state(name, hook)
            if state is None:
                continue  # the common case: no failure on record, nothing to compute
            if state.code and state.code != manager.code_id(name):
                breaker.reset(name, hook)
                _logger.info("breaker_reset_code_changed", plugin=name, hook=hook)
            elif breaker.is_open(name, hook):
                _logger.warning("plugin_skipped_breaker_open", plugin=name, hook=hook)
                out[name] = state.failures
    except Exception as exc:  # a broken store must not silence every plugin
        _logger.error("breaker_unreadable", error=str(exc))
    return out


def record(breaker: Any, hook: str, report: Any, store: Any) -> None:
    try:
        breaker.record(hook, report.failures, report.succeeded, store)
    except Exception as exc:
        _logger.error("breaker_update_failed", error=str(exc))


def fail_closed(call: Any, manager: Any, failures: list, kept_out: dict) -> list:
    """Denials standing in for security plugins (``[core] fail_closed``) that could not answer.

    A guard that failed, is kept out by its breaker, or failed to load must keep
    guarding: the call is denied, not allowed. Only gates on commands
    (PreToolUse, PreSkillShellCommand: ``fail_closed`` in the event table) are denied this way.
    """
    from omcm_core.records import Result

    guards = set(call.core.fail_closed)
    if not call.spec.fail_closed or not guards:
        return []
    unknown = sorted(str(name) for name in guards if name not in manager.infos)
    if unknown:  # a misspelt guard would leave the gate open without a word (`omcm doctor` says it too)
        _logger.error("fail_closed_unknown_plugin", plugins=unknown, installed=sorted(manager.infos)[:50])
    why = {f.plugin: f"its check failed ({f.kind})" for f in failures if f.plugin in guards}
    for name, count in kept_out.items():
        if name in guards:
            why[name] = (
                f"it is switched off by its circuit breaker after {count} failures; run `omcm plugins reset {name}` once fixed"
            )
    for name, problem in manager.broken().items():
        if name in guards:
            why[name] = f"it did not load ({problem})"
    return [
        (name, Result(permission="deny", reason=f"omcm: the {name} guard is unavailable: {reason}; denied to be safe."))
        for name, reason in sorted(why.items())
    ]
