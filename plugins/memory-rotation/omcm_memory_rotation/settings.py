"""``[memory-rotation]`` in omcm's TOML config, and the old ``config.json`` it replaces.

The section is read like every plugin's (``ctx.config``: ``OMCM_HOME/config.toml``,
then ``<project>/.claude/omcm.toml``, then ``OMCM__MEMORY_ROTATION__<KEY>``).
A ``.claude/memory/config.json`` (or ``OMCM_HOME/memory-rotation/config.json``)
from earlier versions still counts for the keys the TOML does not set; a log
line gives the TOML to write instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

from omcm_core.config import Project

PLUGIN = "memory-rotation"
MARGIN = 0.95  # limits are taken 5% low: the four-bytes-per-token estimate is rough

# A threshold of 1 token rotated an empty memory.md on every check: out-of-range
# values are refused with a log line naming them, and that key keeps its default.
RANGES = {"save_interval": (1, 10_000), "threshold_tokens": (100, 10_000_000), "carryover_tokens": (1, 10_000_000)}

#: config.json's camelCase keys (``memoryRotation.*`` nested) -> the TOML keys.
LEGACY_KEYS = {
    ("saveInterval",): "save_interval",
    ("memoryRotation", "enabled"): "enabled",
    ("memoryRotation", "thresholdTokens"): "threshold_tokens",
    ("memoryRotation", "carryoverTokens"): "carryover_tokens",
}


def _in_range(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    low, high = RANGES[attribute.name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{attribute.name} must be an integer from {low:,} to {high:,}, got {value!r}")


@attrs.frozen(kw_only=True)
class MemoryRotationConfig:
    """``[memory-rotation]``: the values as configured (the 5% margin is applied after).

    The memory lives in the project (``.claude/memory``): how often and how much it rotates is the
    project's preference; a project may switch rotation off, not back on.
    """

    #: Check memory.md every this many tool uses of a session.
    save_interval: int = attrs.field(default=5, validator=_in_range, metadata=Project.free)
    #: false: never rotate (session start still loads the memory).
    enabled: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool), metadata=Project.off)
    #: memory.md is rotated at this many tokens (less 5%).
    threshold_tokens: int = attrs.field(default=25_000, validator=_in_range, metadata=Project.free)
    #: The new memory.md keeps this many tokens of the old one's tail (less 5%). Must be below
    #: threshold_tokens, else both keep their defaults (a log line says so).
    carryover_tokens: int = attrs.field(default=2_500, validator=_in_range, metadata=Project.free)


@attrs.frozen
class Settings:
    """What rotation uses: the configured limits less the margin."""

    save_interval: int = 5
    enabled: bool = True
    threshold_tokens: int = 23_750  # 25,000 x 0.95
    carryover_tokens: int = 2_375  # 2,500 x 0.95

    @classmethod
    def from_config(cls, config: MemoryRotationConfig) -> Settings:
        return cls(
            save_interval=config.save_interval,
            enabled=config.enabled,
            threshold_tokens=int(config.threshold_tokens * MARGIN),
            carryover_tokens=int(config.carryover_tokens * MARGIN),
        )


_noted: set[tuple[str, str]] = set()  # (path, keys) already logged by this process
HINT = (
    "write each key as `key = value` under [memory-rotation] in OMCM_HOME/config.toml"
    " (or <project>/.claude/omcm.toml), then delete the old file"
)


def load_settings(ctx, project: Path) -> Settings:
    """The settings for ``project``: its TOML section, then an old config.json, then the defaults.

    ``omcm memory --project X`` may name another project than the context's;
    its ``.claude/omcm.toml`` is then read.
    """
    from omcm_core.config import Config

    if project == ctx.project_dir:
        config = ctx.config(MemoryRotationConfig)
        loaded = None
    else:
        loaded = Config.load(ctx.home, project, ctx.env)
        config = loaded.section(PLUGIN, MemoryRotationConfig)
    found = legacy_values(project, ctx.home, ctx.log)
    if found is not None:
        path, values = found
        loaded = loaded or Config.load(ctx.home, project, ctx.env)
        config = _fill_from_legacy(config, loaded.values(PLUGIN, MemoryRotationConfig), path, values, ctx.log)
    if config.carryover_tokens >= config.threshold_tokens:
        # Checked on the final values, not key by key: the keys may come in any order and from several files.
        ctx.log.error(
            "memory_config_invalid",
            error=f"carryover_tokens ({config.carryover_tokens}) must be below threshold_tokens ({config.threshold_tokens})",
            using="the defaults for both",
        )
        defaults = MemoryRotationConfig()
        config = attrs.evolve(
            config, threshold_tokens=defaults.threshold_tokens, carryover_tokens=defaults.carryover_tokens
        )
    return Settings.from_config(config)


def _fill_from_legacy(config, toml: dict, path: Path, values: dict, log) -> MemoryRotationConfig:
    """``config`` with the old file's valid values for the keys the TOML leaves unset; one log line."""
    set_in_toml = {key.replace("-", "_") for key in toml}
    used: dict[str, Any] = {}
    for key in ("save_interval", "enabled", "threshold_tokens", "carryover_tokens"):
        if key not in values or key in set_in_toml:
            continue
        try:
            config = attrs.evolve(config, **{key: values[key]})
            used[key] = values[key]
        except (ValueError, TypeError) as exc:
            log.error("memory_config_invalid", path=str(path), error=str(exc))
    noted = (str(path), json.dumps(used, sort_keys=True))
    if noted not in _noted:  # once per process and file content: the hook runs this on every tool use
        _noted.add(noted)
        if used:
            # The keys as a mapping, not as TOML text: the log masks "threshold_tokens = 1000"
            # (a "...token... = value" assignment looks like a secret); `omcm memory status` prints the TOML.
            log.warning(
                "memory_config_json_deprecated",
                path=str(path),
                section="memory-rotation",
                keys=used,
                hint=HINT,
            )
        else:
            log.warning("memory_config_json_unused", path=str(path), hint="the TOML sets every key it holds: delete it")
    return config


def toml_for(values: dict[str, Any]) -> str:
    """The ``[memory-rotation]`` TOML holding ``values``."""
    return "[memory-rotation]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in values.items())


def legacy_values(project: Path, home: Path, log) -> tuple[Path, dict[str, Any]] | None:
    """The first readable old config.json (project, then OMCM_HOME) as TOML keys; None when there is none."""
    from omcm_core.confined import read_confined_text
    from omcm_memory_rotation.layout import memory_dir

    for base, path in (
        (project, memory_dir(project) / "config.json"),
        (home, home / "memory-rotation" / "config.json"),
    ):
        try:
            text = read_confined_text(base, path, limit=1_000_000)
        except FileNotFoundError:
            continue
        except OSError as exc:  # a symlinked or unreadable file: not used, said in the log
            log.error("memory_config_unreadable", path=str(path), error=str(exc))
            continue
        try:
            return path, _camel_to_toml(json.loads(text))
        except ValueError as exc:
            log.error("memory_config_invalid", path=str(path), error=str(exc))
    return None


def _camel_to_toml(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("config.json must hold an object")
    if not isinstance(data.get("memoryRotation", {}), dict):
        raise ValueError("memoryRotation must be an object")
    out = {}
    for keys, name in LEGACY_KEYS.items():
        value: Any = data
        for key in keys:
            value = value.get(key, _MISSING) if isinstance(value, dict) else _MISSING
        if value is not _MISSING:
            out[name] = value
    return out


_MISSING = object()
