"""Configuration: sources that could not be read, sections and keys nothing reads, values refused, and
what a project's ``.claude/omcm.toml`` set: each key used (what it became) or ignored (why)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning
from omcm_core.config import CoreConfig, section_name, section_problems


def configuration(probe: Probe) -> Iterator[Check]:
    config = probe.config
    sources = [probe.tilde(s) for s in config.sources]
    yield info("config.sources", f"read from {', '.join(sources)}" if sources else "defaults only (no config file)")
    for problem in config.errors:
        yield error(
            "config.source",
            f"{probe.tilde(problem.source)}: {problem.message}",
            fix=f"edit {probe.tilde(problem.source)}",
        )
    schemas = _schemas(probe)
    installed = {section_name(n) for n in probe.manager.infos}  # a disabled plugin's section is still known
    known = sorted(installed | {"core"})
    trouble = 0
    for section, values in config.user.items():
        where = _where(probe, section)
        if section in schemas:
            for p in section_problems(section, values, schemas[section]):
                trouble += 1
                yield _key_check(section, p, where)
        elif section not in installed:
            trouble += 1
            yield _unknown_section(section, known, where)
    checks, ignored = _project_checks(probe, schemas, installed, known)
    trouble += ignored
    yield from checks
    for check in _fail_closed_names(probe):
        trouble += 1
        yield check
    if trouble == 0 and not config.errors:
        yield ok("config.valid", "every section and key is known and valid")


#: What each rule lets a project do, as doctor says it.
_RULES = {
    "free": "a project's preference",
    "lower": "a project may only lower it",
    "raise": "a project may only raise it",
    "add": "a project only adds to the list",
    "off": "a project may only switch it off",
    "on": "a project may only switch it on",
}


def _project_checks(probe: Probe, schemas: dict, installed: set, known: list) -> tuple[list[Check], int]:
    """What the project's file set, key by key: used (and what it became) or ignored (and why)."""
    config, where, checks, ignored, shown = probe.config, _where_project(probe), [], 0, 0
    for section in config.project:
        if section not in schemas and section not in installed:
            checks.append(_unknown_section(section, known, where))
            ignored += 1
            continue
        for p in config.project_keys(section, schemas.get(section)):
            shown += 1
            ignored += not p.used
            if shown > 50:
                continue
            value = _toml(p.value)
            if p.used:
                checks.append(
                    info(
                        f"config.project.{section}.{p.written}",
                        f"[{section}] {p.written} = {value} in {where}: {_RULES.get(p.rule, p.rule)}; "
                        f"in effect: {_toml(p.result)}",
                    )
                )
                continue
            checks.append(
                warning(
                    f"config.project.{section}.{p.written}",
                    f"[{section}] {p.written} = {value} in {where} is ignored: {p.why} (a project may only move a "
                    "setting the way its plugin declares; budgets, breakers, retention and sharing are the user's)",
                    fix=f"set it in {probe.tilde(probe.home / 'config.toml')} if you want it, or remove it from the project",
                )
            )
    if shown > 50:
        checks.append(info("config.project.more", f"{shown - 50} more keys of the project's config"))
    return checks, ignored


def _where_project(probe: Probe) -> str:
    from omcm_core.config import PROJECT_CONFIG

    return probe.tilde(probe.project / PROJECT_CONFIG) if probe.project else "the project's config"


def _fail_closed_names(probe: Probe) -> Iterator[Check]:
    """A misspelt guard in ``[core] fail_closed`` would leave the gate open without a word."""
    names = probe.config.section("core", CoreConfig).fail_closed
    installed = sorted(probe.manager.infos)
    for name in names:
        if name in probe.manager.infos:
            continue
        close = difflib.get_close_matches(str(name), installed, n=1, cutoff=0.6)
        hint = f": did you mean {close[0]}?" if close else f" (installed: {', '.join(installed) or 'none'})"
        yield error(
            f"config.fail_closed.{name}",
            f"[core] fail_closed names {name!r}, which is not an installed plugin{hint}: nothing guards in its place",
            fix=f"edit {_where(probe, 'core')}: fix the name in fail_closed",
        )


def _schemas(probe: Probe) -> dict[str, type]:
    schemas: dict[str, type] = {"core": CoreConfig}
    for name, function, argnames in probe.manager.implementations("config_schema"):
        try:
            schema = function(**({"ctx": None} if "ctx" in argnames else {}))
        except Exception:  # the plugin's report says so; its keys just go unchecked
            continue
        if isinstance(schema, type):
            schemas[section_name(name)] = schema
    return schemas


def _where(probe: Probe, section: str) -> str:
    origins = probe.config.origins.get(section, [])
    return ", ".join(probe.tilde(o) for o in origins) or "config"


def _unknown_section(section: str, known: list[str], where: str) -> Check:
    close = difflib.get_close_matches(section, known, n=1, cutoff=0.6) or difflib.get_close_matches(
        section.replace("_", "-").lower(), known, n=1, cutoff=0.6
    )
    if close:
        return error(
            f"config.section.{section}",
            f"[{section}] in {where} is not a known section: did you mean [{close[0]}]?",
            fix=f"edit {where}: rename [{section}] to [{close[0]}]",
        )
    return warning(
        f"config.section.{section}",
        f"[{section}] in {where} is not read by omcm or any installed plugin (known: {', '.join(known)})",
        fix=f"edit {where}: remove [{section}]",
    )


def _key_check(section: str, p: Any, where: str) -> Check:
    if p.error != "unknown key":
        return error(
            f"config.value.{section}.{p.key}",
            f"[{section}] {p.key} = {_toml(p.value)} in {where} is refused ({p.error}); the default is used",
            fix=f"edit {where}: fix [{section}] {p.key}",
        )
    known = [k.replace("_", "-") if "-" in p.key else k for k in p.known]
    close = difflib.get_close_matches(p.key, known, n=1, cutoff=0.6)
    hint = f": did you mean {close[0]}?" if close else f" (known: {', '.join(known) or 'none'})"
    fix = f"edit {where}: rename {p.key} to {close[0]} in [{section}]" if close else f"edit {where}: remove {p.key}"
    return error(f"config.key.{section}.{p.key}", f"[{section}] {p.key} is not a known key{hint}", fix=fix)


def _toml(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)[:80]
    except (TypeError, ValueError):
        return str(value)[:80]
