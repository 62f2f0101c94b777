"""Isolated, timed calls into each plugin (which plugins there are: ``omcm_core._runtime.discovery``).

pluggy stops at the first exception and cannot time a call, so the manager
drives each plugin's hookimpl itself (as devpi and llm do): one plugin at a
time, in plugin-name order (``tryfirst`` implementations before the rest,
``trylast`` ones after; hook wrappers are refused: there is no call chain to
wrap), each with a time budget (``omcm_core._runtime.budget``). A
plugin that fails to import, raises, returns something that is not a Result,
or overruns is skipped and logged with its name and version; the others still
answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import define, field

from omcm_core._runtime.budget import run_in_order
from omcm_core._runtime.discovery import PluginRegistry
from omcm_core._runtime.merge import result_problem
from omcm_core.log import get_logger
from omcm_core.records import Result

_log = get_logger(component="manager")


@define
class CallReport:
    """What happened when one hook was called on every plugin."""

    answers: list = field(factory=list)  # (plugin, Result) in plugin-name order
    failures: list = field(factory=list)
    succeeded: list = field(factory=list)
    timings_ms: dict = field(factory=dict)


@define
class Failure:
    plugin: str
    version: str
    kind: str  # "raised", "timeout", "garbage"
    detail: str
    #: ``Manager.code_id`` of the plugin when it failed; its breaker closes when that changes.
    code: str = ""


class Manager(PluginRegistry):
    """The plugin registry plus isolated, timed calls into each plugin."""

    def code_id(self, plugin: str) -> str:
        """The plugin's version plus a digest of its source files' paths, sizes and mtimes.

        Changes when its code does (a new release, an edited editable install),
        which closes its circuit breaker. Computed only on the failure path.
        """
        import hashlib
        import sys
        from pathlib import Path

        obj = self.pm.get_plugin(plugin)
        module = obj if hasattr(obj, "__file__") else sys.modules.get(type(obj).__module__)
        filename = getattr(module, "__file__", None)
        digest = hashlib.sha256()
        if filename:
            path = Path(filename)
            files = sorted(path.parent.rglob("*.py"))[:2000] if path.name == "__init__.py" else [path]
            for file in files:
                try:
                    st = file.stat()
                except OSError:
                    continue
                digest.update(f"{file}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        return f"{self.version_of(plugin)}:{digest.hexdigest()[:16]}"

    # -- calling ------------------------------------------------------------------
    def call(
        self,
        hook: str,
        chosen: Sequence[tuple[str, Callable[..., Any], tuple]],
        arguments: Mapping[str, Any],
        budget_s: float,
        ctx_for: Callable[[str], Any] | None = None,
        on_timeout: Callable[[str], None] = lambda name: None,
    ) -> CallReport:
        """Call each of ``chosen`` (from :meth:`implementations`) for ``hook`` in isolation.

        :param arguments: the hook arguments except ``ctx``.
        :param ctx_for: builds the per-plugin ``ctx`` argument.
        :param on_timeout: runs after a plugin overran, before the next starts.
        :return: the non-None Results in plugin-name order, the failures, who
            succeeded and how long each plugin took.
        """
        report = CallReport()

        def bind(function: Callable[..., Any], argnames: tuple, name: str) -> Callable[[], Any]:
            def call() -> Any:
                # The context is made when the plugin starts: after a timeout it gets the fresh store.
                available = dict(arguments)
                if "ctx" in argnames and ctx_for is not None:
                    available["ctx"] = ctx_for(name)
                return function(**{a: available.get(a) for a in argnames})

            return call

        outcomes = run_in_order(
            [bind(function, argnames, name) for name, function, argnames in chosen],
            budget_s,
            on_timeout=lambda index: on_timeout(chosen[index][0]),
        )
        for (name, _function, _argnames), (status, value, elapsed_ms) in zip(chosen, outcomes, strict=True):
            report.timings_ms[name] = elapsed_ms
            self._file(report, hook, name, _checked(status, value), elapsed_ms)
        return report

    def _file(self, report: CallReport, hook: str, name: str, outcome: tuple, elapsed_ms: float) -> None:
        """Put one plugin's checked outcome in the report (an answer, a success, or a logged failure)."""
        status, value = outcome
        if status == "ok":
            report.succeeded.append(name)
            if value is not None:
                report.answers.append((name, value))
            _log.debug("plugin_called", plugin=name, hook=hook, ms=elapsed_ms, answered=value is not None)
            return
        version = self.version_of(name)
        detail = value if isinstance(value, str) else f"{type(value).__name__}: {value}"
        report.failures.append(
            Failure(plugin=name, version=version, kind=status, detail=detail, code=self.code_id(name))
        )
        from omcm_core.redact import mask_head, mask_tail  # the detail quotes tool input; mask before the cut

        _log.error(
            "plugin_failed",
            plugin=name,
            version=version,
            hook=hook,
            kind=status,
            ms=elapsed_ms,
            error=mask_head(detail, 2000),
            # Where it failed, for the author: the end (the failing frame) kept, masked like the error.
            **({"traceback": mask_tail(_traceback(value), 8000)} if isinstance(value, BaseException) else {}),
        )


def _traceback(exc: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _checked(status: str, value: Any) -> tuple:
    """A plugin's return value that is neither None nor a renderable Result becomes a "garbage" failure."""
    if status == "ok" and value is not None and not isinstance(value, Result):
        return "garbage", f"returned {type(value).__name__}, not Result or None"
    if status == "ok" and value is not None:
        problem = result_problem(value)
        if problem:
            return "garbage", f"returned a Result that cannot be rendered: {problem}"
    return status, value
