"""Configuration: TOML in OMCM_HOME, an optional project file, environment overrides.

Sources, later ones winning key by key:

1. ``OMCM_HOME/config.toml``
2. ``<project>/.claude/omcm.toml``
3. environment variables ``OMCM__<SECTION>__<KEY>=value`` (section and key in
   upper case, dashes as underscores; the value is read as TOML, so ``7`` is a
   number, ``true`` a boolean, anything unparsable a string).

A project's file is written by whoever wrote the repository, so it may only
tighten what the user set (:data:`PROJECT_RULES`): it adds to ``[core]
fail_closed``, makes a guard's limit stricter, and sets a plugin's own harmless
preferences; protections, budgets, breakers, retention and sharing are the
user's alone (such keys are ignored, with one log line and a doctor warning).
Every file is read with a size bound and at most :data:`MAX_KEYS` keys.

Each plugin has one section named after it (``[tool-counter]``); the core's is
``[core]``. A plugin describes its section with an attrs class whose fields all
have defaults; an unknown key or a value of the wrong type is logged with its
name and that key keeps its default.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
from attrs import define, field

from omcm_core.log import get_logger

T = TypeVar("T")
CONFIG_FILE = "config.toml"
PROJECT_CONFIG = Path(".claude") / "omcm.toml"
ENV_PREFIX = "OMCM__"

_log = get_logger(component="config")


@attrs.frozen(kw_only=True)
class CoreConfig:
    """``[core]``: settings of the dispatcher itself."""

    #: Message language for every plugin: "auto" (from LANG), "en" or "ko".
    language: str = field(default="auto", validator=attrs.validators.in_(("auto", "en", "ko")))
    #: How long one plugin may take on one event before it is skipped.
    plugin_budget_ms: int = 1500
    #: SessionEnd hooks share 1.5 s in Claude Code; each plugin gets this much.
    session_end_budget_ms: int = 400
    #: Consecutive failures that open a plugin's circuit breaker.
    breaker_threshold: int = 3
    #: How long an open breaker keeps the plugin out before one trial call.
    breaker_cooldown_s: int = 300
    #: Plugins that act as security gates: if one of them fails on PreToolUse,
    #: the call is denied instead of allowed.
    fail_closed: tuple = ()
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
    mask_tool_output: bool = False


@attrs.frozen
class ConfigError:
    """A config source omcm could not use at all (its settings are then all defaults)."""

    source: str
    message: str


@attrs.frozen
class KeyProblem:
    """One key of a section that was not used: unknown to the schema, or a value that does not fit."""

    section: str
    key: str
    #: "unknown key", or why the value was refused ("expected int, got str").
    error: str
    #: The schema's key names (for "did you mean").
    known: tuple = ()
    value: Any = None


def _read_toml(root: Path, path: Path, errors: list | None = None, max_bytes: int = 1_000_000) -> dict:
    """``root/path`` parsed, read without following a link out of ``root`` (a cloned project can plant one).

    What went wrong is logged and, when ``errors`` is given, appended to it (``omcm doctor`` lists it).
    """
    from omcm_core.confined import read_confined_bytes

    where = str(root / path)
    try:
        data = read_confined_bytes(root, path, max_bytes=max_bytes)
    except FileNotFoundError:
        return {}
    except OSError as exc:  # a symlink, a FIFO, a folder, too big: the defaults, said in the log
        _log.warning("config_unreadable", path=where, error=str(exc))
        if errors is not None:
            errors.append(ConfigError(where, f"unreadable: {exc}"))
        return {}
    try:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        return tomllib.loads(data.decode("utf-8"))
    except Exception as exc:
        _log.error("config_invalid_toml", path=where, error=str(exc))
        if errors is not None:
            errors.append(ConfigError(where, f"not valid TOML: {exc}"))
        return {}


def _env_value(raw: str) -> Any:
    # The warm dispatcher loads the config on every call: parse each distinct value once.
    if raw not in _ENV_VALUES:
        if len(_ENV_VALUES) > 256:
            _ENV_VALUES.clear()
        _ENV_VALUES[raw] = _parse_env_value(raw)
    value = _ENV_VALUES[raw]
    return copy.deepcopy(value) if isinstance(value, (list, dict)) else value


_ENV_VALUES: dict[str, Any] = {}


def _parse_env_value(raw: str) -> Any:
    try:
        try:
            import tomllib
        except ModuleNotFoundError:
            import tomli as tomllib
        return tomllib.loads(f"v = {raw}")["v"]
    except Exception:
        return raw


@define
class Config:
    """All sections from every source, merged."""

    sections: dict = field(factory=dict)
    sources: list = field(factory=list)
    #: :class:`ConfigError` for each source that could not be read or parsed.
    errors: list = field(factory=list)
    #: section name -> the sources that set keys in it (file paths, ``env:NAME``).
    origins: dict = field(factory=dict)
    #: section -> key -> (rule, the project's value) for keys the user left at their default.
    pending: dict = field(factory=dict)
    #: :class:`KeyProblem` for each key of the project's file that only the user may set.
    ignored: list = field(factory=list)
    _cache: dict = field(factory=dict)

    @classmethod
    def load(cls, home: Path, project: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        merged: dict[str, dict] = {}
        sources: list[str] = []
        errors: list[ConfigError] = []
        origins: dict[str, list[str]] = {}
        # The user's sources first (file, then environment), the project's last: it is combined
        # with what the user set, key by key, under PROJECT_RULES.
        user = _sections(home, Path(CONFIG_FILE), USER_MAX_BYTES, errors)
        if user:
            sources.append(str(home / CONFIG_FILE))
        for section, values in user.items():
            merged.setdefault(section, {}).update(values)
            origins.setdefault(section, []).append(str(home / CONFIG_FILE))
        from_env: set[tuple[str, str]] = set()
        for name, raw in env.items():
            if not name.startswith(ENV_PREFIX):
                continue
            parts = name[len(ENV_PREFIX) :].split("__")
            if len(parts) != 2 or not all(parts):
                _log.warning("config_env_ignored", variable=name)
                continue
            section, key = parts[0].lower(), parts[1].lower()
            target = _section_name(section, merged)
            merged.setdefault(target, {})[key] = _env_value(raw)
            from_env.add((target, key))
            sources.append(f"env:{name}")
            origins.setdefault(target, []).append(f"env:{name}")
        pending: dict[str, dict] = {}
        ignored: list[KeyProblem] = []
        if project is not None:
            path = project / PROJECT_CONFIG
            data = _sections(project, PROJECT_CONFIG, PROJECT_MAX_BYTES, errors)
            if data:
                sources.append(str(path))
            for section, values in data.items():
                current: dict = merged.setdefault(section, {})
                for key, value in values.items():
                    rule = project_rule(section, key)
                    if rule == HOME:
                        ignored.append(KeyProblem(section, key, "only the user's config may set it", value=value))
                    elif (section, key) in from_env and rule == PROJECT:
                        continue  # the user's environment wins over the project's preference
                    elif rule == PROJECT:
                        current[key] = value
                    elif key in current:
                        current[key] = _tighten(rule, current[key], value)
                    else:  # the user left it at its default: combined with that in section()
                        pending.setdefault(section, {})[key] = (rule, value)
                origins.setdefault(section, []).append(str(path))
            if ignored:
                _log.warning(
                    "config_project_key_ignored",
                    path=str(path),
                    count=len(ignored),
                    keys=[f"{p.section}.{p.key}" for p in ignored[:20]],
                    why="a project may only tighten the user's settings (docs/reliability.md)",
                )
        return cls(sections=merged, sources=sources, errors=errors, origins=origins, pending=pending, ignored=ignored)

    def section(self, name: str, schema: type[T]) -> T:
        """The ``[name]`` section as a ``schema`` instance, bad keys replaced by defaults."""
        key = (name, schema)
        if key not in self._cache:
            values = dict(self.sections.get(name, {}))
            fields = {f.name: f for f in attrs.fields(schema)}  # type: ignore[arg-type]
            for key_name, (rule, value) in self.pending.get(name, {}).items():
                spec = fields.get(key_name.replace("-", "_"))
                default = spec.default if spec is not None else attrs.NOTHING
                if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                    default = default.factory()  # type: ignore[union-attr]
                values[key_name] = value if default is attrs.NOTHING else _tighten(rule, default, value)
            self._cache[key] = build_section(name, values, schema)
        return self._cache[key]


# What a project's .claude/omcm.toml may do with each key (issue 24). The repository is untrusted:
#   PROJECT  a plugin's own harmless preference: the project's value is used;
#   UNION    a list of protections: the project's entries are added to the user's, never removed;
#   MIN/MAX  a guard's limit: the stricter of the user's value (or the default) and the project's;
#   ALL      an on-switch the user may have turned off: on only if both say on;
#   HOME     budgets, breakers, retention, sharing, anything of [core] not listed: the user's alone,
#            the project's value is ignored (one log line, a doctor warning).
# A section not listed takes PROJECT for every key, except [core] and [team-store], whose default is HOME.
PROJECT, UNION, MIN, MAX, ALL, HOME = "project", "union", "min", "max", "all", "home"
PROJECT_RULES: dict[str, dict[str, str]] = {
    "core": {"language": PROJECT, "fail_closed": UNION, "mask_tool_output": MAX},
    # Lessons and observations leave the machine only if the user says so, to the user's server.
    "pre-tool-guide": {"share": HOME},
    "post-tool-observer": {
        "share": HOME,
        "share_output": HOME,
        # One store holds every project's observations: retention is the user's (item 2).
        "max_age_days": HOME,
        "max_mb": HOME,
        "prune_interval_s": HOME,
        "max_pending_embeddings": HOME,
        # The worker's share of the machine.
        "embeddings": HOME,
        "worker_interval_s": HOME,
        "worker_threads": HOME,
    },
    "tool-counter": {"max_age_days": HOME},  # counter files of every project's sessions
    # A repository must not keep Claude looping longer than the user allows.
    "persistent-mode": {
        "enabled": ALL,
        "max_iterations": MIN,
        "max_todo_attempts": MIN,
        "max_verification_attempts": MIN,
        "transcript_tail_bytes": MIN,
        "max_todo_continuations": MIN,
        "max_session_continuations": MIN,
        "state_days": HOME,  # removes every project's sessions' state
    },
}
# The team store's section (if the team plugin has one): where shared knowledge goes is the user's choice.
_SECTION_DEFAULT = {"core": HOME, "team-store": HOME}
#: Bytes read of each file: a project's config is a few lines; 60,000 keys cost seconds per call.
USER_MAX_BYTES = 1_000_000
PROJECT_MAX_BYTES = 64 * 1024
#: Sections, and keys per section, taken from one file; the rest is ignored with one log line.
MAX_SECTIONS = 64
MAX_KEYS = 256


def project_rule(section: str, key: str) -> str:
    """How a project's value for ``[section] key`` combines with the user's (:data:`PROJECT_RULES`)."""
    rules = PROJECT_RULES.get(section, {})
    return rules.get(key, rules.get(key.replace("-", "_"), _SECTION_DEFAULT.get(section, PROJECT)))


def _tighten(rule: str, user: Any, project: Any) -> Any:
    """The user's value tightened by the project's; the user's when the project's does not fit."""
    if rule == UNION and isinstance(user, (list, tuple)) and isinstance(project, (list, tuple)):
        return [*user, *(item for item in project if item not in user)]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (user, project))
    if rule == MIN and numbers:
        return min(user, project)
    if rule == MAX and numbers:
        return max(user, project)
    if rule == MAX and isinstance(user, bool) and isinstance(project, bool):
        return user or project  # an on-switch a project may turn on, never off
    if rule == ALL and isinstance(user, bool) and isinstance(project, bool):
        return user and project
    _log.warning("config_project_value_ignored", rule=rule, value=json.dumps(project, default=str)[:100])
    return user


def _sections(root: Path, relative: Path, max_bytes: int, errors: list) -> dict[str, dict]:
    """The file's ``[sections]``, bounded: too many sections or keys are cut with one log line."""
    path = root / relative
    data = _read_toml(root, relative, errors, max_bytes)
    out: dict[str, dict] = {}
    dropped = 0
    for section, values in data.items():
        if not isinstance(values, dict):
            _log.error("config_not_a_section", path=str(path), key=section)
            errors.append(ConfigError(str(path), f"{section} = ... is not a [section]"))
            continue
        if len(out) >= MAX_SECTIONS:
            dropped += len(values)
            continue
        if len(values) > MAX_KEYS:
            dropped += len(values) - MAX_KEYS
            values = dict(list(values.items())[:MAX_KEYS])
        out[section] = values
    if dropped:
        _log.error("config_too_many_keys", path=str(path), dropped=dropped, limit=MAX_KEYS)
        errors.append(ConfigError(str(path), f"{dropped} keys beyond {MAX_KEYS} per section were ignored"))
    return out


def _section_name(env_section: str, merged: Mapping[str, Any]) -> str:
    # OMCM__TOOL_COUNTER__X must reach [tool-counter]: dashes cannot appear in env names.
    for existing in merged:
        if existing.replace("-", "_").lower() == env_section:
            return existing
    return env_section.replace("_", "-") if env_section != "core" else "core"


def build_section(name: str, values: Mapping[str, Any], schema: type[T]) -> T:
    """Structure ``values`` into ``schema`` key by key; log and skip what does not fit."""
    good, problems = _structure(name, values, schema)
    for p in problems:
        if p.error == "unknown key":
            _log.error("config_unknown_key", section=name, key=p.key, known=list(p.known))
        else:
            _log.error(
                "config_bad_value",
                section=name,
                key=p.key,
                value=json.dumps(p.value, default=str)[:100],
                error=p.error[:200],
            )
    return schema(**good)


def section_problems(name: str, values: Mapping[str, Any], schema: type) -> list[KeyProblem]:
    """The keys of ``values`` that ``schema`` would not use, and why; nothing is logged."""
    return _structure(name, values, schema)[1]


def _structure(name: str, values: Mapping[str, Any], schema: type) -> tuple[dict[str, Any], list[KeyProblem]]:
    from omcm_core._runtime.payload import converter

    try:
        attrs.resolve_types(schema)
    except Exception:  # unresolvable annotations: values are then taken as given
        pass
    fields = {f.name: f for f in attrs.fields(schema)}
    good: dict[str, Any] = {}
    problems = []
    for key, value in values.items():
        attr_name = key.replace("-", "_")
        spec = fields.get(attr_name)
        if spec is None:
            problems.append(KeyProblem(name, key, "unknown key", tuple(sorted(fields)), value))
            continue
        try:
            if spec.type is not None and spec.type is not Any:
                value = _coerce(value, spec.type, converter)
            candidate = {**good, attr_name: value}
            schema(**candidate)  # runs the class's validators on this key
            good[attr_name] = value
        except Exception as exc:
            problems.append(KeyProblem(name, key, _why(exc), tuple(sorted(fields)), value))
    return good, problems


def _why(exc: Exception) -> str:
    """A validator's complaint in words: attrs' ``in_`` puts the attribute and options in ``args``."""
    args = exc.args
    if len(args) == 4 and isinstance(args[2], (tuple, list, set, frozenset)):
        return f"must be one of {', '.join(str(o) for o in args[2])}, got {args[3]}"
    return str(args[0]) if args and isinstance(args[0], str) else str(exc)


def _coerce(value: Any, type_: Any, conv: Any) -> Any:
    if type_ in (int, float) and isinstance(value, bool):
        raise TypeError(f"expected {type_.__name__}, got bool")
    if type_ is int and not isinstance(value, int):
        raise TypeError(f"expected int, got {type(value).__name__}")
    if type_ is tuple or getattr(type_, "__origin__", None) is tuple:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return tuple(value)
    if type_ is float and isinstance(value, int):
        return float(value)
    if isinstance(type_, type):
        if not isinstance(value, type_):
            raise TypeError(f"expected {type_.__name__}, got {type(value).__name__}")
        return value
    return conv().structure(value, type_)  # the converter is built (cattrs imported) only here


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
