"""One hook call: payload bytes in, at most one JSON object out.

:func:`handle` is what ``omcm hook`` runs, in process or inside the warm
dispatcher (``omcm_core._runtime.daemon``): both give byte-identical answers because both
call this function. It never raises and never prints; bad input becomes one log
line and an empty answer (exit 0).

Read it top to bottom, it is the order of a call: payload -> event record
(:func:`read_event`) -> the event's row in ``omcm_core.events`` -> the plugins
implementing its hook, less those an open circuit breaker keeps out
(:func:`~omcm_core._runtime.dispatch_guards.kept_out`) -> each plugin in name order within its budget
(``Manager.call``) -> breakers updated -> fail-closed denials added
(:func:`~omcm_core._runtime.dispatch_guards.fail_closed`) -> merge -> :class:`Reply`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from omcm_core import log
from omcm_core._runtime.keeper import StoreKeeper
from omcm_core._runtime.payload import resolve_project_dir
from omcm_core.paths import omcm_home

_logger = log.get_logger(component="dispatch")


@frozen
class Reply:
    """What the hook process prints and its exit code."""

    stdout: bytes = b""
    exit_code: int = 0
    #: Trace lines for people (OMCM_TRACE_PLUGINS=1); Claude Code ignores stderr on exit 0.
    stderr: bytes = b""
    #: A plugin overran its budget (its thread may still run): the warm dispatcher retires.
    overran: bool = False
    #: Each plugin whose additionalContext the budget cut: {plugin, hook_event, asked, kept, setting}
    #: (``omcm_core.testing`` fails a strict test on one).
    cuts: tuple = ()


EMPTY = Reply()
_managers: dict[tuple, Any] = {}
__all__ = ["EMPTY", "Reply", "StoreKeeper", "handle", "manager_for", "read_event", "resolve_project_dir"]


def manager_for(env: Mapping[str, str]):
    """The plugin manager for this plugin selection, built once per process."""
    from omcm_core._runtime.manager import Manager

    key = (env.get("OMCM_LOAD_PLUGINS"), env.get("OMCM_DISABLE_PLUGINS"))
    manager = _managers.get(key)
    if manager is None:
        manager = _managers[key] = Manager.installed(env, omcm_home(env))
    return manager


def handle(
    raw: bytes,
    argv_event: str | None = None,
    env: Mapping[str, str] | None = None,
    manager_factory: Callable[[Mapping[str, str]], Any] = manager_for,
    keeper: StoreKeeper | None = None,
    one_call: bool = False,
    later: list | None = None,
) -> Reply:
    """Dispatch one payload to every enabled plugin and merge their answers.

    :param keeper: keeps the store connection open for the next call (the
        warm dispatcher); without it the connection is closed at the end.
    :param one_call: this process answers one call and exits (the hook
        client's in-process path): import only the plugins that implement
        the event's hook (:meth:`~omcm_core._runtime.discovery.PluginRegistry.for_hook`)
        instead of ``manager_factory``'s every plugin.
    :param later: the caller runs the plugins' deferred jobs after writing the
        answer (:mod:`omcm_core.after_answer`): they are appended here. Without
        it they run before this returns.
    """
    env = dict(os.environ if env is None else env)
    home = omcm_home(env)
    log.configure(home, env.get("OMCM_LOG_LEVEL"))
    started = time.perf_counter()
    try:
        if one_call:  # a cold call's lines before its answer: omcm's rules alone (detect-secrets costs 100 ms+)
            log.mask_with_library(False)
        from omcm_core import agents  # the agent's payload and answer at the edge (docs/agents.md)

        agent = agents.for_env(env)
        normalized, argv_event = agents.incoming(agent, raw, argv_event)
        event = None if normalized is None else read_event(normalized, argv_event)
        if event is None:
            return EMPTY
        if one_call and event.hook_event_name == "PreToolUse":
            from omcm_core import _redact_library  # no import of its own: a flag

            _redact_library.defer()  # importing detect-secrets would cost this call 100 ms and more
        manager = _one_call_manager(env, event, home) if one_call else manager_factory(env)
        return agents.outgoing(agent, event, _answer(event, env, home, manager, keeper, started, later), home)
    except BaseException as exc:  # the session must never break because of us
        if isinstance(exc, KeyboardInterrupt):
            raise
        _logger.exception("dispatch_crashed", error=f"{type(exc).__name__}: {exc}")
        from omcm_core._runtime.crash import crash_reply

        return crash_reply(raw, argv_event, env, home)  # empty, but a configured guard's gate is denied
    finally:
        if one_call:  # what runs after the answer (its deferred jobs) logs as a warm call does
            log.mask_with_library(True)


def _one_call_manager(env: Mapping[str, str], event: Any, home: Path):
    from omcm_core._runtime.manager import Manager
    from omcm_core.events import spec_for

    return Manager.for_hook(env, spec_for(event.hook_event_name).hook, home)


def read_event(raw: bytes, argv_event: str | None) -> Any:
    """Payload bytes -> event record (a GenericEvent for an event omcm does not know); None (logged) when the payload is bad."""
    from omcm_core._runtime.payload import PayloadError, camel_case_keys, decode, parse_event

    try:
        payload = decode(raw)
        camel = camel_case_keys(payload) if isinstance(payload, dict) else []
        if camel:  # another client running Claude Code's hooks (Cursor): its fields are read as Claude's
            _logger.info("payload_keys_camel_case", keys=camel[:20], argv_event=argv_event)
        event = parse_event(payload, argv_event)
    except (ValueError, PayloadError) as exc:
        from omcm_core.redact import mask_head  # only on this error path: masking costs an import

        # Cut to 500 characters masked; the log masks the line again, with detect-secrets where it may.
        _logger.error(
            "bad_payload", error=mask_head(str(exc), 500, library=False), bytes=len(raw), argv_event=argv_event
        )
        return None
    return event


class _Call:
    """One event's call: its table row, config, and the store connection its plugins share.

    One connection serves the whole call (connecting costs more than most
    plugins' work), except after a plugin overran: its thread may still be
    inside a transaction on it, so the plugins after it, the breaker update and
    the keeper get a fresh one.
    """

    def __init__(self, event: Any, env: dict, home: Path, keeper: StoreKeeper | None) -> None:
        from omcm_core.config import Config, CoreConfig
        from omcm_core.events import spec_for
        from omcm_core.store import Store

        self.event, self.env, self.home, self.keeper = event, env, home, keeper
        self.spec = spec_for(event.hook_event_name)
        self.project = resolve_project_dir(env, event.cwd)
        self.config = Config.load(home, self.project, env)
        self.core = self.config.section("core", CoreConfig)
        self.budget_s = getattr(self.core, self.spec.budget) / 1000
        self.store = keeper.take(home) if keeper is not None else Store(home)
        self._contexts: list = []

    def context_for(self, plugin: str) -> Any:
        from omcm_core.context import Context

        ctx = Context(plugin, self.home, self.project, self.config, self.env, store=self.store)
        self._contexts.append(ctx)
        return ctx

    def after_overrun(self, plugin: str) -> None:
        from omcm_core.store import Store

        self.store = Store(self.home)

    def finish(self) -> None:
        for ctx in self._contexts:
            ctx.close()
        if self.keeper is not None:
            self.keeper.give_back(self.store)
        else:
            self.store.close()


def _answer(
    event: Any, env: dict, home: Path, manager: Any, keeper: StoreKeeper | None, started: float, later: list | None
) -> Reply:
    from omcm_core import after_answer
    from omcm_core._runtime import dispatch_guards as guards
    from omcm_core._runtime.breaker import Breaker, project_key
    from omcm_core._runtime.merge import merge
    from omcm_core.events import spec_for

    spec = spec_for(event.hook_event_name)
    plugins = manager.implementations(spec.hook)
    if not plugins and not (spec.fail_closed and manager.broken()):  # a guard that did not load may still deny
        _logger.info("event_not_handled", hook_event=event.hook_event_name, hook=spec.hook)
        return EMPTY
    call = _Call(event, env, home, keeper)
    try:
        breaker = Breaker(
            call.store, call.core.breaker_threshold, call.core.breaker_cooldown_s, project_key(call.project)
        )
        kept_out = guards.kept_out(breaker, manager, call.spec.hook, [name for name, _function, _args in plugins])
        chosen = [plugin for plugin in plugins if plugin[0] not in kept_out]
        with after_answer.collecting([] if later is None else later) as jobs:
            report = manager.call(
                call.spec.hook, chosen, {"event": event}, call.budget_s, call.context_for, call.after_overrun
            )
        if later is None:  # nobody runs them after the answer: now, on the call's own connections
            after_answer.run_now(jobs)
        opened = guards.opening(breaker, call.spec.hook, report.failures, call.core.breaker_threshold)
        guards.record(breaker, call.spec.hook, report, call.store)
        answers = report.answers + guards.fail_closed(call, manager, report.failures, kept_out)
        _log_dropped(event.hook_event_name, answers)
        asked = {name: len(r.additional_context or "") + len(r.context_tail or "") for name, r in answers}
        answers, cuts = _within_budget(call, answers)
        _note_stats(call, event, report, kept_out, opened, answers, cuts)
        cut_details = tuple(_cut_detail(call, name, asked.get(name, 0), lost) for name, lost in cuts.items())
    finally:
        call.finish()
    response = merge(event.hook_event_name, answers)
    if call.core.mask_tool_output:  # [core] mask_tool_output: the model sees the output masked
        from omcm_core import tool_output_mask

        response = tool_output_mask.apply(response, tool_output_mask.updated_output(event, True))
    _logger.debug(
        "dispatched",
        hook_event=event.hook_event_name,
        pid=os.getpid(),
        session_id=event.session_id,
        plugins=len(report.succeeded) + len(report.failures),
        failures=len(report.failures),
        answered=response is not None,
        ms=round((time.perf_counter() - started) * 1000, 3),
    )
    trace = _trace(event.hook_event_name, report) if env.get("OMCM_TRACE_PLUGINS") else b""
    stdout = render(call.spec, response)
    # A plugin holding the GIL may finish before the timeout can fire: count its time too.
    budget_ms = call.budget_s * 1000
    overran = any(f.kind == "timeout" for f in report.failures) or any(
        ms > budget_ms for ms in report.timings_ms.values()
    )
    return Reply(stdout=stdout, stderr=trace, overran=overran, cuts=cut_details)


def _cut_detail(call: _Call, plugin: str, asked: int, lost: int) -> dict:
    """What the budget cut from one plugin's context, and the setting that cut it (log, strict tests)."""
    cap = call.core.context_caps.get(plugin)
    budget = call.core.context_budget
    setting = (
        f"[core] context_caps.{plugin} = {cap}"
        if isinstance(cap, int) and cap < budget
        else f"[core] context_budget = {budget} (shared by the plugins giving context)"
    )
    detail = {"plugin": plugin, "hook_event": call.event.hook_event_name, "asked": asked, "kept": asked - lost}
    _logger.warning("context_cut", **detail, cut_chars=lost, setting=setting)
    return {**detail, "setting": setting}


def _within_budget(call: _Call, answers: list) -> tuple[list, dict]:
    """Each plugin's additionalContext cut to its fair share of ``[core] context_budget``; what was cut.

    A ``context_tail`` is joined after the body here, never cut (see context_budget)."""
    tails = {name: r.context_tail for name, r in answers if r.context_tail}
    if not (call.spec.context and call.spec.budget_context) or not any(
        r.additional_context or r.context_tail for _, r in answers
    ):
        return _with_tails(answers, tails), {}
    from omcm_core._runtime.context_budget import fit

    fitted = fit(
        [(name, r.additional_context or "") for name, r in answers],
        call.core.context_budget,
        call.core.context_caps,
        tails,
    )
    if not fitted.cut:
        return _with_tails(answers, tails), {}
    kept = dict(fitted.texts)
    import attrs

    return [
        (name, attrs.evolve(r, additional_context=kept.get(name), context_tail=None))
        if name in fitted.cut or name in tails
        else (name, r)
        for name, r in answers
    ], dict(fitted.cut)


def _with_tails(answers: list, tails: dict) -> list:
    if not tails:
        return answers
    import attrs

    def joined(r: Any) -> str:
        return "\n".join(t for t in (r.additional_context, r.context_tail) if t)

    return [
        (name, attrs.evolve(r, additional_context=joined(r), context_tail=None) if name in tails else r)
        for name, r in answers
    ]


def _note_stats(call: _Call, event: Any, report: Any, kept_out: dict, opened: list, answers: list, cuts: dict) -> None:
    """Calls, time and context characters per plugin (``omcm stats``): noted in memory; a one-call
    process writes them now (on the call's connection), the warm dispatcher later from a thread."""
    from omcm_core._runtime.stats import RECORDER

    try:
        shown = {name: len(r.additional_context or "") + (len(r.reason or "") if r.block else 0) for name, r in answers}
        failed = [f.plugin for f in report.failures]
        RECORDER.note(
            event.session_id,
            event.hook_event_name,
            report.timings_ms,
            failed,
            kept_out,
            opened,
            context=shown,
            cuts=cuts,
        )
        if not RECORDER.deferred:
            RECORDER.flush(call.store)
    except Exception as exc:  # statistics never cost an answer
        _logger.warning("stats_not_noted", error=f"{type(exc).__name__}: {exc}")


def render(spec: Any, response: dict | None) -> bytes:
    """The bytes Claude Code reads: the merged JSON object, or for an event whose command hooks answer
    in plain text (WorktreeCreate's path), that text alone."""
    if response is None:
        return b""
    if spec.plain_stdout:
        text = response.get("hookSpecificOutput", {}).get(spec.plain_stdout)
        return text.encode("utf-8") if isinstance(text, str) else b""
    return json.dumps(response).encode("ascii")


def _log_dropped(event_name: str, answers: list) -> None:
    from omcm_core._runtime.merge import dropped_fields

    for plugin, result in answers:
        dropped = dropped_fields(event_name, result)
        if dropped:
            _logger.warning("result_fields_dropped", plugin=plugin, hook_event=event_name, fields=dropped)


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
