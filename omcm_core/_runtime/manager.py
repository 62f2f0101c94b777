"""Plugin discovery (entry-point group ``omcm``) and isolated, timed calls.

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

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pluggy
from attrs import define, field

from omcm_core import hookspecs
from omcm_core._runtime.budget import run_in_order
from omcm_core._runtime.merge import result_problem
from omcm_core.log import get_logger
from omcm_core.records import Result

GROUP = "omcm"
_log = get_logger(component="manager")


@define
class PluginInfo:
    """What ``omcm plugins`` shows about one plugin."""

    name: str
    distribution: str = ""
    version: str = ""
    module: str = ""
    hooks: list = field(factory=list)
    enabled: bool = True
    why: str = ""


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


def _split(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _entry_points() -> Iterable[Any]:
    from importlib.metadata import entry_points

    return entry_points(group=GROUP)


class Manager:
    """A pluggy PluginManager plus what omcm knows about each plugin."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}

    # -- discovery ----------------------------------------------------------------
    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None, load_entrypoints: bool = True) -> Manager:
        """Load installed plugins, honouring OMCM_LOAD_PLUGINS and OMCM_DISABLE_PLUGINS.

        ``OMCM_LOAD_PLUGINS``: comma-separated allowlist of plugin (entry-point)
        or distribution names; set but empty loads none. ``OMCM_DISABLE_PLUGINS``:
        a blocklist applied after it.
        """
        env = os.environ if env is None else env
        manager = cls()
        if load_entrypoints:
            manager.load_entrypoints(
                _split(env.get("OMCM_LOAD_PLUGINS")), _split(env.get("OMCM_DISABLE_PLUGINS")) or set()
            )
        return manager

    def load_entrypoints(self, allow: set[str] | None, block: set[str]) -> None:
        for ep in sorted(_entry_points(), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else ""
            info = PluginInfo(
                name=ep.name, distribution=dist_name, version=dist.version if dist is not None else "", module=ep.value
            )
            if ep.name in self.infos:
                _log.error("plugin_duplicate_name", plugin=ep.name, distribution=dist_name)
                continue
            self.infos[ep.name] = info
            names = {ep.name, dist_name}
            if allow is not None and not names & allow:
                info.enabled, info.why = False, "not in OMCM_LOAD_PLUGINS"
                continue
            if names & block:
                info.enabled, info.why = False, "in OMCM_DISABLE_PLUGINS"
                continue
            try:
                plugin = ep.load()
            except BaseException as exc:  # a plugin's import may even call sys.exit
                if isinstance(exc, KeyboardInterrupt):
                    raise
                info.enabled, info.why = False, f"import failed: {type(exc).__name__}: {exc}"
                _log.error("plugin_import_failed", plugin=ep.name, version=info.version, error=info.why)
                continue
            self._register(plugin, info)

    def register(self, plugin: Any, name: str, version: str = "", distribution: str = "") -> PluginInfo:
        """Register an in-memory plugin (tests, ``omcm_core.testing``)."""
        info = PluginInfo(name=name, distribution=distribution, version=version, module=getattr(plugin, "__name__", ""))
        self.infos[name] = info
        self._register(plugin, info)
        return info

    def _register(self, plugin: Any, info: PluginInfo) -> None:
        try:
            self.pm.register(plugin, name=info.name)
        except Exception as exc:
            info.enabled, info.why = False, f"invalid plugin: {exc}"
            _log.error("plugin_invalid", plugin=info.name, version=info.version, error=str(exc))
            return
        wrappers = sorted(
            caller.name
            for caller in self.pm.get_hookcallers(plugin) or ()
            for impl in caller.get_hookimpls()
            if impl.plugin is plugin and (impl.hookwrapper or getattr(impl, "wrapper", False))
        )
        if wrappers:
            # Each plugin is called on its own, timed and isolated: there is no call chain to wrap.
            self.pm.unregister(plugin)
            info.enabled, info.why = False, f"invalid plugin: hook wrappers are not supported ({', '.join(wrappers)})"
            _log.error("plugin_invalid", plugin=info.name, version=info.version, error=info.why)
            return
        info.hooks = sorted(impl_name for impl_name in self._hooks_of(plugin))
        unknown = [h for h in info.hooks if not getattr(self.pm.hook, h).has_spec()]
        if unknown:
            _log.warning("plugin_unknown_hooks", plugin=info.name, hooks=unknown)

    def _hooks_of(self, plugin: Any) -> Iterable[str]:
        for caller in self.pm.get_hookcallers(plugin) or ():
            yield caller.name

    def enabled(self) -> list[PluginInfo]:
        return [info for info in self.infos.values() if info.enabled]

    def broken(self) -> dict[str, str]:
        """Plugins that are installed and selected but could not be loaded -> why."""
        return {
            i.name: i.why
            for i in self.infos.values()
            if not i.enabled and i.why.startswith(("import failed", "invalid"))
        }

    def implementations(self, hook: str) -> list[tuple[str, Callable[..., Any], tuple]]:
        """``(plugin name, function, argnames)`` for ``hook``: ``tryfirst`` ones, the rest, ``trylast`` ones, each in name order."""
        caller = getattr(self.pm.hook, hook, None)
        if caller is None:
            return []
        impls = sorted(
            caller.get_hookimpls(), key=lambda i: (0 if i.tryfirst else 2 if i.trylast else 1, i.plugin_name)
        )
        return [(i.plugin_name, i.function, tuple(i.argnames)) for i in impls]

    def version_of(self, plugin: str) -> str:
        info = self.infos.get(plugin)
        return info.version if info else ""

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
        from omcm_core.redact import mask_head  # the detail quotes tool input; mask before the cut

        _log.error(
            "plugin_failed",
            plugin=name,
            version=version,
            hook=hook,
            kind=status,
            ms=elapsed_ms,
            error=mask_head(detail, 2000),
        )


def _checked(status: str, value: Any) -> tuple:
    """A plugin's return value that is neither None nor a renderable Result becomes a "garbage" failure."""
    if status == "ok" and value is not None and not isinstance(value, Result):
        return "garbage", f"returned {type(value).__name__}, not Result or None"
    if status == "ok" and value is not None:
        problem = result_problem(value)
        if problem:
            return "garbage", f"returned a Result that cannot be rendered: {problem}"
    return status, value
