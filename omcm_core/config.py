"""Configuration: TOML in OMCM_HOME, an optional project file, environment overrides.

Sources, later ones winning key by key:

1. ``OMCM_HOME/config.toml``
2. ``<project>/.claude/omcm.toml``
3. environment variables ``OMCM__<SECTION>__<KEY>=value`` (section and key in
   upper case, dashes as underscores; the value is read as TOML, so ``7`` is a
   number, ``true`` a boolean, anything unparsable a string).

Every key is read under one spelling (``Fail-Closed`` is ``fail_closed``, ``[Tool_Counter]`` is
``[tool-counter]``) before anything compares it. A project's file is written by whoever wrote the
repository, so it may only move what the user set in the direction each schema declares
(:class:`Project`, :mod:`omcm_core._config.rules`): the core lets it add to ``fail_closed`` and choose
the language, nothing else; a plugin's key nobody declared is the user's alone (such keys are ignored,
with one log line and a doctor warning). Every file is read with a size bound and at most
:data:`MAX_KEYS` keys.

Each plugin has one section named after it (``[tool-counter]``); the core's is
``[core]``. A plugin describes its section with an attrs class whose fields all
have defaults; an unknown key or a value of the wrong type is logged with its
name and that key keeps its default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
from attrs import define, field

from omcm_core._config.files import (
    MAX_KEYS,
    MAX_SECTIONS,
    ConfigError,
    Entry,
    env_entries,
    fold,
    key_name,
    read_entries,
    section_name,
)
from omcm_core._config.rules import ADD, FREE, LOWER, OFF, ON, RAISE, USER, Project, ProjectKey, judge, rule_of
from omcm_core._config.structure import KeyProblem, build_section, section_problems
from omcm_core.log import get_logger

__all__ = [
    "ADD",
    "CONFIG_FILE",
    "ENV_PREFIX",
    "FREE",
    "LOWER",
    "MAX_KEYS",
    "MAX_SECTIONS",
    "OFF",
    "ON",
    "PROJECT_CONFIG",
    "PROJECT_MAX_BYTES",
    "RAISE",
    "USER",
    "USER_MAX_BYTES",
    "Config",
    "ConfigError",
    "CoreConfig",
    "KeyProblem",
    "Project",
    "ProjectKey",
    "build_section",
    "key_name",
    "resolve_language",
    "rule_of",
    "section_name",
    "section_problems",
]

T = TypeVar("T")
CONFIG_FILE = "config.toml"
PROJECT_CONFIG = Path(".claude") / "omcm.toml"
ENV_PREFIX = "OMCM__"
#: Bytes read of each file: a project's config is a few lines; 60,000 keys cost seconds per call.
USER_MAX_BYTES = 1_000_000
PROJECT_MAX_BYTES = 64 * 1024

_log = get_logger(component="config")


@attrs.frozen(kw_only=True)
class CoreConfig:
    """``[core]``: settings of the dispatcher itself. A project may choose the language and add guards."""

    #: Message language for every plugin: "auto" (from LANG), "en" or "ko".
    language: str = field(default="auto", validator=attrs.validators.in_(("auto", "en", "ko")), metadata=Project.free)
    #: How long one plugin may take on one event before it is skipped.
    plugin_budget_ms: int = 1500
    #: SessionEnd hooks share 1.5 s in Claude Code; each plugin gets this much.
    session_end_budget_ms: int = 400
    #: Consecutive failures that open a plugin's circuit breaker.
    breaker_threshold: int = 3
    #: How long an open breaker keeps the plugin out before one trial call.
    breaker_cooldown_s: int = 300
    #: Plugins that act as security gates: if one of them fails on PreToolUse,
    #: the call is denied instead of allowed. Names are strings: a project's ``[["x"]]`` once crashed
    #: the dispatcher (unhashable), so no guard ran; now it is a name no plugin has (logged, doctor).
    fail_closed: tuple = field(default=(), converter=lambda v: tuple(str(n) for n in v), metadata=Project.add)
    #: A PostgreSQL URL (``postgresql://host/db``) to share opted-in knowledge with a team; "" = local only.
    #: Credentials belong in the environment or a libpq service/pass file, not here (docs/teams.md).
    team_store: str = ""
    #: The name others see on shared rows; "" = a random id made once for this OMCM_HOME.
    team_user: str = ""
    #: Seconds between two background syncs with the team store.
    team_sync_interval_s: int = 30
    #: Characters of additionalContext per event, shared max-min fairly among the plugins that
    #: speak (Claude Code keeps at most 10,000; a larger value is capped there).
    context_budget: int = field(default=10_000, converter=lambda v: max(0, min(int(v), 10_000)))
    #: Per-plugin caps on that share, e.g. ``{"memory-rotation" = 4000}``.
    context_caps: dict = field(factory=dict)
    #: Characters at most in one answer of an ``omcm mcp`` tool (it goes into the model's context).
    mcp_answer_chars: int = 6_000
    #: Mask secrets in the tool output Claude sees (PostToolUse ``updatedToolOutput``, client 2.1.121+).
    #: Claude then cannot use a secret a command printed. A project may switch it on, never off.
    mask_tool_output: bool = field(default=False, metadata=Project.on)


@define
class Config:
    """All sources, each under its one spelling; a section is combined when a schema asks for it."""

    #: section -> key -> value from the user's file, then the user's environment.
    user: dict = field(factory=dict)
    #: section -> the project file's :class:`Entry` list (keys normalised, as written kept).
    project: dict = field(factory=dict)
    #: section -> the keys the user's environment set (they win over a project's free preference).
    from_env: dict = field(factory=dict)
    sources: list = field(factory=list)
    #: :class:`ConfigError` for each source that could not be read or parsed.
    errors: list = field(factory=list)
    #: section name -> the sources that set keys in it (file paths, ``env:NAME``).
    origins: dict = field(factory=dict)
    project_file: str = ""
    _cache: dict = field(factory=dict)

    @classmethod
    def load(cls, home: Path, project: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        sources: list[str] = []
        errors: list[ConfigError] = []
        origins: dict[str, list[str]] = {}
        user_file = str(home / CONFIG_FILE)
        user = fold(user_file, read_entries(home, Path(CONFIG_FILE), USER_MAX_BYTES, errors), errors)
        if user:
            sources.append(user_file)
        for section in user:
            origins.setdefault(section, []).append(user_file)
        from_env: dict[str, set[str]] = {}
        for section, key, value, variable in env_entries(env, ENV_PREFIX):
            user.setdefault(section, {})[key] = value
            from_env.setdefault(section, set()).add(key)
            sources.append(f"env:{variable}")
            origins.setdefault(section, []).append(f"env:{variable}")
        entries: dict[str, list[Entry]] = {}
        project_file = ""
        if project is not None:
            project_file = str(project / PROJECT_CONFIG)
            entries = read_entries(project, PROJECT_CONFIG, PROJECT_MAX_BYTES, errors)
            if entries:
                sources.append(project_file)
            for section in entries:
                origins.setdefault(section, []).append(project_file)
        return cls(
            user=user,
            project=entries,
            from_env=from_env,
            sources=sources,
            errors=errors,
            origins=origins,
            project_file=project_file,
        )

    def section(self, name: str, schema: type[T]) -> T:
        """The ``[name]`` section as a ``schema`` instance, bad keys replaced by defaults."""
        key = (section_name(name), schema)
        if key not in self._cache:
            values, _ = self._combined(name, schema)
            self._cache[key] = build_section(key[0], values, schema)
        return self._cache[key]

    def values(self, name: str, schema: type | None) -> dict[str, Any]:
        """The ``[name]`` keys in effect (the user's, and what the project may set), before structuring."""
        return dict(self._combined(name, schema)[0])

    def project_keys(self, name: str, schema: type | None) -> list[ProjectKey]:
        """What the project's file set in ``[name]``, and whether each key was used or why not."""
        return list(self._combined(name, schema)[1])

    @property
    def sections(self) -> dict[str, dict[str, Any]]:
        """The user's sections, ``[core]`` with what the project may set (a plugin's needs its schema)."""
        out = {name: dict(values) for name, values in self.user.items()}
        if "core" in self.project:
            out["core"] = self.values("core", CoreConfig)
        return out

    def _combined(self, name: str, schema: type | None) -> tuple[dict[str, Any], list[ProjectKey]]:
        name = section_name(name)
        key = ("combined", name, schema)
        if key not in self._cache:
            values, report = judge(
                name,
                schema,
                self.user.get(name, {}),
                self.from_env.get(name, ()),
                self.project.get(name, ()),
            )
            ignored = [p for p in report if not p.used]
            if ignored:
                _log.warning(
                    "config_project_key_ignored",
                    path=self.project_file,
                    section=name,
                    count=len(ignored),
                    keys=[f"{name}.{p.written}" for p in ignored[:20]],
                    reasons=[p.why for p in ignored[:20]],
                    why="a project may only move a setting the way its schema allows (docs/reliability.md)",
                )
            self._cache[key] = (values, report)
        return self._cache[key]


def resolve_language(setting: str, env: Mapping[str, str] | None = None) -> str:
    """ "en" or "ko": the setting, else the user's locale (LANG/LC_ALL starting with ko)."""
    if setting in ("en", "ko"):
        return setting
    env = os.environ if env is None else env
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var)
        if value:
            return "ko" if value.lower().startswith("ko") else "en"
    return "en"
