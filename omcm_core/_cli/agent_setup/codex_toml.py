"""Codex's ``config.toml`` as omcm edits it: whole tables added and removed by their header, the rest kept.

The standard library reads TOML (``tomllib``) but cannot write it, and a
rewrite from the parsed form would lose the user's comments and layout. So
omcm edits the text: it appends its own tables (``[hooks.state."KEY"]`` trust
records, ``[mcp_servers.omcm]``) at the end and removes exactly those tables
again, each one found by its header line. Every edit is checked by parsing
the result: the user's own values must come out unchanged, or nothing is written.

Also here: the trust record's key and hash exactly as Codex 0.171 computes
them (``codex app-server``'s ``hooks/list`` reports the same ``key`` and
``currentHash``; tests/test_agent_setup_codex.py holds values it reported).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

#: Codex reads no matcher for these events: its hash leaves the matcher out.
NO_MATCHER = ("UserPromptSubmit", "Stop")
#: A handler's timeout when hooks.json gives none (Codex's default, in seconds).
DEFAULT_TIMEOUT_S = 600
#: The config.toml omcm reads or edits is bounded (a user's config is a few KB).
MAX_BYTES = 4 << 20


class TomlEditError(Exception):
    """The file cannot be edited safely (unparsable, or an edit would change the user's own values)."""


def event_label(event: str) -> str:
    """Codex's key label for a hook event: ``PreToolUse`` -> ``pre_tool_use``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_key(hooks_json: str, event: str, group: int, handler: int) -> str:
    """The ``[hooks.state]`` key of one handler: ``<hooks.json path>:<event label>:<group>:<handler>``."""
    return f"{hooks_json}:{event_label(event)}:{group}:{handler}"


def trusted_hash(event: str, handler: Mapping[str, Any], matcher: str | None = None) -> str:
    """``sha256:<hex>`` of the handler's normalised identity, as Codex computes ``currentHash``.

    Sorted keys, compact separators, UTF-8 unescaped (serde_json's form): the
    event's label, the group's matcher (not for :data:`NO_MATCHER` events) and
    the one command handler with Codex's defaults filled in.
    """
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    normalised: dict[str, Any] = {
        "async": bool(handler.get("async", False)),
        "command": str(handler["command"]),
        "timeout": max(1, int(timeout)) if isinstance(timeout, int) else DEFAULT_TIMEOUT_S,
        "type": "command",
    }
    if handler.get("statusMessage") is not None:
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [normalised]}
    if matcher is not None and event not in NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def basic_string(value: str) -> str:
    """``value`` as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def state_header(key: str) -> str:
    return f"[hooks.state.{basic_string(key)}]"


def state_table(key: str, digest: str) -> str:
    """One trust record, as Codex's own review writes it."""
    return f"{state_header(key)}\ntrusted_hash = {basic_string(digest)}\n"


MCP_HEADER = "[mcp_servers.omcm]"


def mcp_table(command: str, args: Iterable[str]) -> str:
    listed = ", ".join(basic_string(a) for a in args)
    return f"{MCP_HEADER}\ncommand = {basic_string(command)}\nargs = [{listed}]\n"


def parse(text: str) -> dict[str, Any]:
    from omcm_core._config.files import _toml

    try:
        return _toml().loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise TomlEditError(f"not valid TOML ({exc})") from None


def _is_header(line: str) -> bool:
    """A line that opens a table (``[a.b]``, ``[[a]]``); a nested array's line could look alike, which the parse
    check after every edit catches."""
    return line.lstrip().startswith("[")


def find_table(text: str, header: str) -> tuple[int, int] | None:
    """The character span of the table ``header`` opens: its header line up to the next header (or the end).

    Blank and comment lines just before the next header stay with that header (its own comment).
    """
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if _is_header(lines[i])), len(lines))
    if end < len(lines):
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
    return offsets[start], offsets[end]


def remove_table(text: str, header: str) -> tuple[str, str | None]:
    """``text`` without the table ``header`` (and one blank line before it, which omcm wrote); the removed text."""
    span = find_table(text, header)
    if span is None:
        return text, None
    start, end = span
    removed = text[start:end]
    before, after = text[:start], text[end:]
    if before.endswith("\n\n"):
        before = before[:-1]
    if not before:  # it opened the file (omcm made it): the blank line before the next table goes too
        after = after.lstrip("\n")
    return before + after, removed


def append_tables(text: str, tables: Iterable[str]) -> str:
    """``text`` with ``tables`` appended at the end, one blank line before each."""
    out = text
    for table in tables:
        if out and not out.endswith("\n"):
            out += "\n"
        if out.strip():
            out += "\n"
        out += table
    return out


def without_keys(data: Mapping[str, Any], state_keys: Iterable[str], mcp: bool) -> dict[str, Any]:
    """The parsed config minus omcm's own entries: what an edit must leave unchanged."""
    out = json.loads(json.dumps(data, default=str))
    state = out.get("hooks", {}).get("state", {}) if isinstance(out.get("hooks"), dict) else {}
    for key in state_keys:
        state.pop(key, None)
    if isinstance(out.get("hooks"), dict) and out["hooks"].get("state") == {}:
        del out["hooks"]["state"]
    if out.get("hooks") == {}:
        del out["hooks"]
    if mcp and isinstance(out.get("mcp_servers"), dict):
        out["mcp_servers"].pop("omcm", None)
        if out["mcp_servers"] == {}:
            del out["mcp_servers"]
    return out


def checked(before: str, after: str, state_keys: Iterable[str], mcp: bool) -> str:
    """``after``, once parsing shows it differs from ``before`` in omcm's entries only; else TomlEditError."""
    keys = list(state_keys)
    try:
        edited = parse(after)
    except TomlEditError as exc:  # e.g. `hooks = { state = { … } }`: an inline table takes no [hooks.state."…"]
        raise TomlEditError(
            f"omcm's tables cannot be added to this file ({exc}): it defines hooks.state or mcp_servers inline. "
            'Write them as [hooks.state."…"] / [mcp_servers.NAME] tables; omcm leaves the file as it is'
        ) from None
    if without_keys(parse(before), keys, mcp) != without_keys(edited, keys, mcp):
        raise TomlEditError("an edit would change values omcm does not own; omcm leaves the file as it is")
    return after
