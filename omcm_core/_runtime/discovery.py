"""Which plugins are installed: entry-point discovery (group ``omcm``) and registration.

Honours the allow and block lists (``OMCM_LOAD_PLUGINS``, ``OMCM_DISABLE_PLUGINS``),
records why a plugin is not active (not selected, failed to import, invalid,
uses hook wrappers), and lists each hook's implementations in call order.
Calling them is :mod:`omcm_core._runtime.manager`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pluggy
from attrs import define, field

from omcm_core import hookspecs
from omcm_core.log import get_logger

GROUP = "omcm"
_log = get_logger(component="manager")
_Registry = TypeVar("_Registry", bound="PluginRegistry")


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
    #: For a plugin whose import failed: where its source is (file or package folder), so the warm
    #: dispatcher notices the fix of an editable install (``codewatch``); "" when unknown.
    source: str = ""
    #: For a plugin refused for a mistake in its code: the change that fixes it ("" when a
    #: reinstall is the fix), e.g. "rename pre_tol → pre_tool".
    fix: str = ""


def _split(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _entry_points() -> Iterable[Any]:
    from importlib.metadata import entry_points

    return entry_points(group=GROUP)


@define
class _Found:
    """An entry point found through importlib.metadata, in the shape of a cache entry."""

    ep: Any
    name: str
    distribution: str
    version: str
    value: str
    dist_files: tuple = ()
    hooks: tuple | None = None

    def load(self) -> Any:
        return self.ep.load()

    def evolve(self, hooks: tuple | None, checks: tuple) -> Any:
        from omcm_core._runtime.plugin_cache import Entry

        return Entry(self.name, self.distribution, self.version, self.value, hooks, checks)


def _entries_from_metadata() -> list:
    found = []
    for ep in sorted(_entry_points(), key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        folder = getattr(dist, "_path", None)  # PathDistribution's metadata folder
        dist_files = (os.path.join(str(folder), "entry_points.txt"),) if folder is not None else ()
        found.append(
            _Found(
                ep=ep,
                name=ep.name,
                distribution=dist.metadata["Name"] if dist is not None else "",
                version=dist.version if dist is not None else "",
                value=ep.value,
                dist_files=dist_files,
            )
        )
    return found


def _source_of(value: str) -> str:
    """The file or package folder an entry point's top-level module is imported from ("" if not found)."""
    import importlib.util

    top = value.partition(":")[0].strip().split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return ""
    if spec is None:
        return ""
    if spec.submodule_search_locations:
        return next(iter(spec.submodule_search_locations), "")
    return spec.origin or ""


class PluginRegistry:
    """A pluggy PluginManager plus what omcm knows about each plugin."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}

    @classmethod
    def from_environment(
        cls: type[_Registry], env: Mapping[str, str] | None = None, load_entrypoints: bool = True
    ) -> _Registry:
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

    @classmethod
    def for_hook(cls: type[_Registry], env: Mapping[str, str], hook: str, home: Path) -> _Registry:
        """A registry for one call of ``hook``: only the plugins that implement it are imported.

        Which plugin implements what comes from :mod:`omcm_core._runtime.plugin_cache`;
        when that is missing or stale every plugin is loaded, as
        :meth:`from_environment` does, and the cache is rewritten.
        """
        return cls._through_cache(env, home, hook)

    @classmethod
    def installed(cls: type[_Registry], env: Mapping[str, str], home: Path) -> _Registry:
        """Every selected plugin, as :meth:`from_environment`, found through the plugin cache while it holds.

        For the warm dispatcher: ``importlib.metadata`` (with ``email``, ``zipfile``, ``csv``)
        would stay in its memory for its whole life (about 3.6 MB) for one scan at start.
        """
        return cls._through_cache(env, home, None)

    @classmethod
    def _through_cache(cls: type[_Registry], env: Mapping[str, str], home: Path, hook: str | None) -> _Registry:
        from omcm_core._runtime import plugin_cache

        manager = cls()
        allow, block = _split(env.get("OMCM_LOAD_PLUGINS")), _split(env.get("OMCM_DISABLE_PLUGINS")) or set()
        entries = plugin_cache.read(home)
        if entries is not None:
            manager.load_entrypoints(allow, block, entries, hook)
            return manager
        key = plugin_cache.installation_key()  # before discovery: an install meanwhile makes the file stale
        found = _entries_from_metadata()
        manager.load_entrypoints(allow, block, found)
        plugin_cache.write(home, key, manager._cacheable(found))
        return manager

    def load_entrypoints(
        self, allow: set[str] | None, block: set[str], entries: Iterable[Any] | None = None, hook: str | None = None
    ) -> None:
        """Load each entry point (default: the installed ones) that is selected.

        With ``hook``, an entry known not to implement it is listed but not imported.
        """
        for entry in _entries_from_metadata() if entries is None else entries:
            info = PluginInfo(
                name=entry.name, distribution=entry.distribution, version=entry.version, module=entry.value
            )
            if entry.name in self.infos:
                _log.error("plugin_duplicate_name", plugin=entry.name, distribution=entry.distribution)
                continue
            self.infos[entry.name] = info
            names = {entry.name, entry.distribution}
            if allow is not None and not names & allow:
                info.enabled, info.why = False, "not in OMCM_LOAD_PLUGINS"
                continue
            if names & block:
                info.enabled, info.why = False, "in OMCM_DISABLE_PLUGINS"
                continue
            if hook is not None and entry.hooks is not None and hook not in entry.hooks:
                info.hooks = list(entry.hooks)
                continue
            try:
                plugin = entry.load()
            except BaseException as exc:  # a plugin's import may even call sys.exit
                if isinstance(exc, KeyboardInterrupt):
                    raise
                from omcm_core._runtime import hook_checks

                info.enabled, info.why = False, hook_checks.one_line(f"import failed: {type(exc).__name__}: {exc}")
                info.source = _source_of(entry.value)
                info.fix = hook_checks.failing_line(exc, info.source)
                _log.exception("plugin_import_failed", plugin=entry.name, version=info.version, error=info.why)
                continue
            self._register(plugin, info)

    def _cacheable(self, found: list) -> list:
        """``found`` with the hooks of each plugin loaded and registered (None for the others)."""
        from omcm_core._runtime.plugin_cache import code_checks

        out = []
        for entry in found:
            info = self.infos.get(entry.name)
            loaded = info is not None and info.enabled and info.module == entry.value and self.pm.has_plugin(entry.name)
            checks = code_checks(entry.value, entry.dist_files) if loaded else ()
            hooks = tuple(info.hooks) if loaded and checks and info is not None else None
            out.append(entry.evolve(hooks=hooks, checks=checks))
        return out

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
            from omcm_core._runtime import hook_checks

            refused = hook_checks.signature_error(str(exc), self._spec_args())
            info.enabled, info.why, info.fix = False, refused.why, refused.fix
            _log.error("plugin_invalid", plugin=info.name, version=info.version, error=info.why, fix=info.fix)
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
        # As pytest's check_pending: a misspelt hook (session_strat) would never be called, silently.
        unknown = sorted(
            [
                (caller.name, impl.function)
                for caller in self.pm.get_hookcallers(plugin) or ()
                if not caller.has_spec()
                for impl in caller.get_hookimpls()
                if impl.plugin is plugin and not impl.optionalhook
            ],
            key=lambda pair: pair[0],
        )
        defaulted = [impl for impl in self._impls_of(plugin) if impl[2]]
        if unknown or defaulted:
            from omcm_core._runtime import hook_checks  # only on a mistake: off the hook path

            mistake = (
                hook_checks.misspelt(info.name, unknown, self._spec_args())
                if unknown
                else hook_checks.defaulted(info.name, defaulted)
            )
            if mistake is not None:
                self.pm.unregister(plugin)
                info.enabled, info.why, info.fix = False, mistake.why, mistake.fix
                _log.error("plugin_invalid", plugin=info.name, version=info.version, error=info.why, fix=info.fix)

    def _spec_args(self) -> dict[str, tuple]:
        """hook name -> the arguments its hookspec gives."""
        return {
            name: tuple(caller.spec.argnames)
            for name, caller in vars(self.pm.hook).items()
            if getattr(caller, "spec", None) is not None
        }

    def _impls_of(self, plugin: Any) -> Iterable[tuple[str, Any, tuple]]:
        for caller in self.pm.get_hookcallers(plugin) or ():
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin:
                    yield caller.name, impl.function, tuple(impl.kwargnames)

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
