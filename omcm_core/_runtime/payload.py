"""Claude Code's stdin payload -> JSON -> event record (cattrs, at the edge).

Lenient where Claude Code varies (missing optional fields, unknown keys kept in
``extra``), strict where a wrong type would mislead a plugin (a ``session_id``
that is a number, a ``tool_input`` that is a list): those raise
:class:`PayloadError` with one readable line.

cattrs costs more to import than the rest of an in-process call's parsing, so a
payload whose every field already has its declared type (the normal case) is
checked and built by :func:`_plain_structure` with cattrs' own rules; anything
else (a wrong type, a missing field, a type it does not know) goes through
cattrs, which makes the error message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from omcm_core import records
from omcm_core.events import spec_for
from omcm_core.paths import project_dir

if TYPE_CHECKING:
    import cattrs


class PayloadError(ValueError):
    """The payload cannot become an event record; the message names the field."""


def _strict_str(value: Any, _type: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _strict_bool(value: Any, _type: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {type(value).__name__}")
    return value


def _number(value: Any, _type: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _sequence(value: Any, _type: Any) -> list:
    if not isinstance(value, list):
        raise TypeError(f"expected an array, got {type(value).__name__}")
    return value


def _mapping(value: Any, _type: Any) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _make_converter() -> cattrs.Converter:
    import cattrs

    conv = cattrs.Converter(detailed_validation=True)
    conv.register_structure_hook(str, _strict_str)
    conv.register_structure_hook(bool, _strict_bool)
    conv.register_structure_hook(float, _number)
    conv.register_structure_hook(dict, _mapping)
    conv.register_structure_hook(list, _sequence)
    # A predicate, not register_structure_hook(Any, ...): Python 3.10 cannot singledispatch on Any.
    conv.register_structure_hook_func(lambda type_: type_ is Any, lambda value, _type: value)
    return conv


_converter: cattrs.Converter | None = None


def converter() -> cattrs.Converter:
    global _converter
    if _converter is None:
        _converter = _make_converter()
    return _converter


def parse_event(payload: Mapping[str, Any], event_name: str | None = None) -> records.Event | None:
    """Build the event record for ``payload``.

    An event omcm's table does not know becomes a
    :class:`~omcm_core.records.GenericEvent` holding the raw payload. Raises
    :class:`PayloadError` when the payload is not usable.
    """
    if not isinstance(payload, dict):
        raise PayloadError(f"payload must be a JSON object, got {type(payload).__name__}")
    name = payload.get("hook_event_name", payload.get("hookEventName", event_name))
    if not isinstance(name, str) or not name:
        raise PayloadError("payload has no hook_event_name")
    if event_name and name != event_name:
        raise PayloadError(f"hook_event_name {name!r} does not match the command line event {event_name!r}")
    cls = spec_for(name).record
    if cls is records.GenericEvent:
        return _generic(snake_case_keys(payload, _COMMON)[0], name, payload)
    known = {a.name for a in attrs.fields(cls)} - {"extra", "succeeded"}
    payload = snake_case_keys(payload, known | {"hook_event_name"})[0]
    data = {k: v for k, v in payload.items() if k in known and v is not None}
    data["hook_event_name"] = name
    data["extra"] = {k: v for k, v in payload.items() if k not in known}
    if cls is records.PostToolEvent:
        data["succeeded"] = name == "PostToolUse"
    event = _plain_structure(data, cls)
    if event is not None:
        return event
    try:
        return converter().structure(data, cls)
    except Exception as exc:  # cattrs raises ClassValidationError (an ExceptionGroup)
        import cattrs

        raise PayloadError("; ".join(cattrs.transform_error(exc, path="payload"))) from None


_CAMEL = re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")
_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")


def camel_case_keys(payload: dict) -> list[str]:
    """The top-level keys spelt in camelCase (``toolInput``): another client's spelling of the fields."""
    return [k for k in payload if isinstance(k, str) and _CAMEL.fullmatch(k)]


def snake_case_keys(payload: dict, fields: Collection[str]) -> tuple[dict, list[str]]:
    """``payload`` with its camelCase top-level keys for ``fields`` in Claude Code's snake_case; the keys renamed.

    Other clients run the same hooks with the same fields spelt their way
    (Cursor's "third-party hooks" send ``hookEventName``, ``toolName``,
    ``toolInput``): a guard must still see the command. Only the top level and
    only the record's own fields are renamed (a tool's input and unknown keys
    stay as sent, in ``extra``), and a key the payload also has in snake_case wins.
    """
    out, renamed = payload, []
    for key in camel_case_keys(payload):
        snake = _HUMP.sub(lambda m: "_" + m.group(1).lower(), key)
        if snake in fields and snake not in payload:
            if out is payload:
                out = dict(payload)
            out[snake] = out.pop(key)
            renamed.append(key)
    return out, renamed


_COMMON = frozenset(a.name for a in attrs.fields(records.Event))


def _generic(payload: dict, name: str, raw: dict) -> records.GenericEvent:
    """The common fields that have their protocol type, and the whole payload (``raw``) verbatim."""
    common = {}
    for field in attrs.fields(records.Event):
        value = payload.get(field.name)
        if field.name in ("hook_event_name", "extra") or value is None:
            continue
        ok, value = _PLAIN[_type_name(field.type)](value)
        if ok:
            common[field.name] = value
    return records.GenericEvent(hook_event_name=name, payload=dict(raw), **common)


def _plain(check: Any) -> Any:
    def run(value: Any) -> tuple:
        try:
            return True, check(value, None)
        except TypeError:
            return False, None

    return run


#: The converter's rules (the hooks above) for the types the event records use, by annotation.
_PLAIN: dict[str, Any] = {
    "str": _plain(_strict_str),
    "bool": _plain(_strict_bool),
    "float": _plain(_number),
    "dict": _plain(_mapping),
    "list": _plain(_sequence),
    "Any": lambda value: (True, value),
}


def _type_name(type_: Any) -> str:
    # A string under postponed annotations, a class or union once cattrs has resolved them.
    name = type_ if isinstance(type_, str) else getattr(type_, "__name__", None) or str(type_)
    name = name.removeprefix("typing.")
    return name[: -len(" | None")] if name.endswith(" | None") else name


def _plain_structure(data: Mapping[str, Any], cls: type) -> Any:
    """``cls`` built from ``data`` when every value already fits its field; None means "ask cattrs".

    ``data`` holds no None values (they mean "absent"), so ``X | None`` is checked as ``X``.
    """
    values = {}
    for field in attrs.fields(cls):
        if field.name not in data:
            if field.default is attrs.NOTHING:
                return None
            continue
        check = _PLAIN.get(_type_name(field.type))
        if check is None:
            return None
        ok, value = check(data[field.name])
        if not ok:
            return None
        values[field.name] = value
    try:
        return cls(**values)
    except Exception:
        return None


def decode(raw: bytes) -> Any:
    """Bytes -> JSON value; raises ValueError with a readable message."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"payload is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise ValueError("payload is empty")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("payload is nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"payload is not JSON ({exc})") from None


#: The dispatcher's name for it (dispatch, crash and the CLI import it from here).
resolve_project_dir = project_dir
