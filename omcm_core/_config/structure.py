"""A section's ``{key: value}`` into its attrs schema, key by key: what does not fit keeps its default."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from omcm_core.log import get_logger

T = TypeVar("T")
_log = get_logger(component="config")


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


def build_section(name: str, values: Mapping[str, Any], schema: type[T]) -> T:
    """Structure ``values`` into ``schema`` key by key; log and skip what does not fit."""
    good, problems = structure(name, values, schema)
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
    return structure(name, values, schema)[1]


_FIELDS: dict[type, dict[str, attrs.Attribute]] = {}


def fields_of(schema: type | None) -> dict[str, attrs.Attribute]:
    """The schema's fields by name (none for ``None``: a plugin that declares no settings)."""
    if schema is None:
        return {}
    if schema not in _FIELDS:  # resolving annotations costs more than the rest of a section's reading
        try:
            attrs.resolve_types(schema)
        except Exception:  # unresolvable annotations: values are then taken as given
            pass
        if len(_FIELDS) > 256:
            _FIELDS.clear()
        _FIELDS[schema] = {f.name: f for f in attrs.fields(schema)}
    return _FIELDS[schema]


def default_of(spec: attrs.Attribute) -> Any:
    """The field's default (a factory called), or ``attrs.NOTHING``."""
    default = spec.default
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        return default.factory()  # type: ignore[union-attr]
    return default


def structure(name: str, values: Mapping[str, Any], schema: type) -> tuple[dict[str, Any], list[KeyProblem]]:
    """The values ``schema`` accepts (under their field names) and a :class:`KeyProblem` for each other key."""
    from omcm_core._runtime.payload import converter

    fields = fields_of(schema)
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
