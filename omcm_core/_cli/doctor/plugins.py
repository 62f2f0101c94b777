"""Plugins: each installed plugin, whether it loaded, and the facts its ``doctor_report`` hook gives."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning
from omcm_core._cli.plugin_install import omcm_command, reinstall_hint
from omcm_core.config import CoreConfig
from omcm_core.context import Context

# A plugin's problem text often ends with its remedy: "...; run omcm observer-worker --prune".
_RUN = re.compile(r"[;(,]\s*run:?\s+(?P<fix>[^)]+)\)?\s*$")


def plugins(probe: Probe) -> Iterator[Check]:
    infos = list(probe.manager.infos.values())
    if not infos:
        yield error("plugins.none", "no omcm plugin is installed", fix=_first_plugin(probe))
        return
    reports = {} if probe.store_blocked else dict(_reports(probe))
    guards = set(probe.config.section("core", CoreConfig).fail_closed)
    for plugin in infos:
        label = f"{plugin.name} {plugin.version}".strip()
        if not plugin.enabled:
            if plugin.why.startswith(("import failed", "invalid")):
                yield _broken(probe, plugin, label, guards)
            else:
                yield info(f"plugin.{plugin.name}", f"{label}: off ({plugin.why})")
            continue
        yield from _enabled(plugin.name, label, reports.get(plugin.name))
    if probe.store_blocked:
        yield warning("plugins.reports", f"plugins' own reports skipped: {probe.store_blocked} (see Installation)")


def _broken(probe: Probe, plugin: Any, label: str, guards: set[str]) -> Check:
    """A plugin that did not load: why on one line, the change to its code (or the reinstall) that fixes it."""
    why = " ".join(plugin.why.split())  # a multi-line message would break the report's layout
    if {plugin.name, plugin.distribution} & guards:
        why += (
            f" -- IT IS IN [core] fail_closed, SO EVERY TOOL CALL IS DENIED until {plugin.name} loads"
            " (or leaves fail_closed)"
        )
    return error(
        f"plugin.{plugin.name}",
        f"{label}: {why}",
        fix=plugin.fix or reinstall_hint(plugin.distribution or plugin.name, dict(probe.env)),
    )


def _enabled(name: str, label: str, report: Mapping[str, Any] | None) -> Iterator[Check]:
    report = dict(report or {})
    problems = [str(p) for p in report.pop("problems", None) or []]
    details = tuple(f"{key.replace('_', ' ')}: {plain(value)}" for key, value in report.items())
    yield ok(f"plugin.{name}", f"{label}", details=details, data=report or None)
    for n, problem in enumerate(problems):
        problem = " ".join(problem.split())  # one line: a plugin's multi-line text would break the report
        match = _RUN.search(problem)
        message, fix = (problem[: match.start()], match.group("fix").strip()) if match else (problem, None)
        yield error(f"plugin.{name}.problem.{n}", f"{name}: {message.strip()}", fix=fix)


def _reports(probe: Probe) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name, function, argnames in probe.manager.implementations("doctor_report"):
        kwargs = {}
        if "ctx" in argnames:
            kwargs["ctx"] = Context(name, probe.home, probe.project, probe.config, dict(probe.env))
        try:
            section = function(**kwargs)
        except Exception as exc:
            section = {"problems": [f"its doctor_report hook raised {type(exc).__name__}: {exc}"]}
        if isinstance(section, Mapping):
            yield name, section


def _first_plugin(probe: Probe) -> str:
    return bundled_plugin_hint(probe, "tool-counter")


def bundled_plugin_hint(probe: Probe, name: str) -> str:
    """omcm's own plugins are on no index: install one from the source folder omcm came from, when it is here."""
    import omcm_core

    env = dict(probe.env)
    roots = [
        Path(omcm_core.__file__).resolve().parent.parent,
        *([Path(env["CLAUDE_PLUGIN_ROOT"])] if env.get("CLAUDE_PLUGIN_ROOT") else []),
    ]
    for root in roots:
        if (root / "plugins" / name / "pyproject.toml").is_file():
            return f"{omcm_command(env)} plugins install {shlex.quote(str(root / 'plugins' / name))}"
    return f"{omcm_command(env)} plugins install PATH/TO/omcm/plugins/{name}  (a folder of omcm's source)"


def plain(value: Any) -> str:
    """A value as a person reads it: lists joined with ", ", mappings as "key: value", no reprs."""
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {plain(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(plain(v) for v in value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    return str(value)
