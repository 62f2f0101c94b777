"""Reading config sources: bounded TOML files and ``OMCM__SECTION__KEY`` variables, every name normalised.

One spelling, one rule: ``Fail-Closed``, ``fail-closed`` and ``fail_closed`` are one key and
``[Tool_Counter]`` is ``[tool-counter]``. Names are normalised here, before anything compares them, so
a project's spelling can never miss the user's value (issue 34).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from omcm_core.log import get_logger

_log = get_logger(component="config")

#: Sections, and keys per section, taken from one file; the rest is ignored with one log line.
MAX_SECTIONS = 64
MAX_KEYS = 256


@attrs.frozen
class ConfigError:
    """A config source omcm could not use at all (its settings are then all defaults)."""

    source: str
    message: str


@attrs.frozen
class Entry:
    """One ``key = value`` of a file: the key as written and as omcm reads it."""

    written: str
    key: str
    value: Any


def key_name(key: str) -> str:
    """The one spelling of a key: ``Fail-Closed`` -> ``fail_closed``."""
    return str(key).strip().lower().replace("-", "_")


def section_name(section: str) -> str:
    """The one spelling of a section: ``[Tool_Counter]`` -> ``tool-counter`` (plugin names use dashes)."""
    return str(section).strip().lower().replace("_", "-")


def read_toml(root: Path, path: Path, errors: list | None = None, max_bytes: int = 1_000_000) -> dict:
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
        return _toml().loads(data.decode("utf-8"))
    except Exception as exc:
        _log.error("config_invalid_toml", path=where, error=str(exc))
        if errors is not None:
            errors.append(ConfigError(where, f"not valid TOML: {exc}"))
        return {}


def _toml() -> Any:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib


def read_entries(root: Path, relative: Path, max_bytes: int, errors: list) -> dict[str, list[Entry]]:
    """The file's sections under their one spelling, bounded: too many sections or keys are cut, one log line.

    ``[core]`` and ``[CORE]`` are distinct TOML tables but one section: their entries are joined.
    """
    path = root / relative
    data = read_toml(root, relative, errors, max_bytes)
    out: dict[str, list[Entry]] = {}
    dropped = 0
    for section, values in data.items():
        if not isinstance(values, dict):
            _log.error("config_not_a_section", path=str(path), key=section)
            errors.append(ConfigError(str(path), f"{section} = ... is not a [section]"))
            continue
        name = section_name(section)
        if name not in out and len(out) >= MAX_SECTIONS:
            dropped += len(values)
            continue
        entries = out.setdefault(name, [])
        room = MAX_KEYS - len(entries)
        if len(values) > room:
            dropped += len(values) - max(room, 0)
        entries.extend(Entry(str(k), key_name(k), v) for k, v in list(values.items())[: max(room, 0)])
    if dropped:
        _log.error("config_too_many_keys", path=str(path), dropped=dropped, limit=MAX_KEYS)
        errors.append(ConfigError(str(path), f"{dropped} keys beyond {MAX_KEYS} per section were ignored"))
    return out


def fold(path: str, sections: Mapping[str, list[Entry]], errors: list) -> dict[str, dict[str, Any]]:
    """The user's entries as ``{section: {key: value}}``; a key written twice is said, and the last one used."""
    out: dict[str, dict[str, Any]] = {}
    for section, entries in sections.items():
        values = out.setdefault(section, {})
        spellings: dict[str, list[str]] = {}
        for entry in entries:
            spellings.setdefault(entry.key, []).append(entry.written)
            values[entry.key] = entry.value
        for key, written in spellings.items():
            if len(written) > 1:
                _log.warning("config_key_repeated", path=path, section=section, key=key, spellings=written)
                errors.append(
                    ConfigError(
                        path,
                        f"[{section}] {key} is set {len(written)} times ({', '.join(written)}); the last one is used",
                    )
                )
    return out


def env_entries(env: Mapping[str, str], prefix: str) -> list[tuple[str, str, Any, str]]:
    """``(section, key, value, variable)`` for each ``OMCM__SECTION__KEY`` variable, names normalised."""
    out = []
    for name, raw in env.items():
        if not name.startswith(prefix):
            continue
        parts = name[len(prefix) :].split("__")
        if len(parts) != 2 or not all(parts):
            _log.warning("config_env_ignored", variable=name)
            continue
        out.append((section_name(parts[0]), key_name(parts[1]), env_value(raw), name))
    return out


_ENV_VALUES: dict[str, Any] = {}


def env_value(raw: str) -> Any:
    """The variable's value read as TOML (``7`` a number, ``true`` a boolean), else the string itself."""
    # The warm dispatcher loads the config on every call: parse each distinct value once.
    if raw not in _ENV_VALUES:
        if len(_ENV_VALUES) > 256:
            _ENV_VALUES.clear()
        try:
            _ENV_VALUES[raw] = _toml().loads(f"v = {raw}")["v"]
        except Exception:
            _ENV_VALUES[raw] = raw
    value = _ENV_VALUES[raw]
    return copy.deepcopy(value) if isinstance(value, (list, dict)) else value
