"""Secrets never reach the model, if the user wants (issue 34 item 6): ``[core] mask_tool_output``.

Off by default. When on, PostToolUse answers with ``updatedToolOutput``: the
tool's output with every secret masked by the same rules as recording
(:func:`omcm_core.redact.mask_structured`, so the output keeps its shape: a
Bash result stays ``{"stdout", "stderr", ...}``, which Claude Code requires or
it ignores the field). Claude then sees ``[REDACTED:...]`` where a command
printed a key, and so cannot use that key either: the trade-off the user
chooses (docs/reliability.md §9c).

Claude Code takes ``updatedToolOutput`` for every tool since 2.1.121; the
client's version is the newest top-level ``version`` in the session's
transcript (as persistent-mode's Stop form reads it). An older or unknown
client gets no field: it would either ignore it or, before 2.1.121, apply it to
MCP tools only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from omcm_core.log import get_logger

_log = get_logger(component="tool_output_mask")

MIN_CLIENT = (2, 1, 121)
TAIL_BYTES = 256 * 1024  # the transcript's end read for the version (every line of it names one)
_VERSION = re.compile(r"(\d{1,4})\.(\d{1,4})\.(\d{1,6})")


def client_version(transcript_path: str | None) -> tuple[int, ...] | None:
    """The version of the Claude Code that wrote the newest transcript line naming one, or None."""
    if not transcript_path:
        return None
    try:
        with open(transcript_path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            tail = f.read(TAIL_BYTES)
    except OSError:
        return None
    for line in reversed(tail.split(b"\n")):
        if b'"version"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the first, cut line, or not JSON
        # Only the client writes top-level keys; a tool's output cannot pose as the client.
        version = record.get("version") if isinstance(record, dict) else None
        found = _VERSION.fullmatch(version) if isinstance(version, str) else None
        if found:
            return tuple(int(part) for part in found.groups())
    return None


def updated_output(event: Any, enabled: bool) -> Any:
    """The masked tool output to send as ``updatedToolOutput``, or None (off, old client, nothing masked)."""
    if not enabled or getattr(event, "hook_event_name", None) != "PostToolUse":
        return None
    response = getattr(event, "tool_response", None)
    if response is None or response == "":
        return None
    version = client_version(getattr(event, "transcript_path", None))
    if version is None or version < MIN_CLIENT:
        _log.info(
            "tool_output_not_masked", reason="client too old or unknown", client=".".join(map(str, version or ()))
        )
        return None
    from omcm_core.redact import mask_structured

    masked = mask_structured(response)
    if masked == response:
        return None
    _log.info("tool_output_masked", tool=getattr(event, "tool_name", None))
    return masked


def apply(response: dict | None, masked: Any) -> dict | None:
    """``response`` (the merged answer) with ``hookSpecificOutput.updatedToolOutput`` set to ``masked``."""
    if masked is None:
        return response
    out = dict(response or {})
    specific = dict(out.get("hookSpecificOutput") or {"hookEventName": "PostToolUse"})
    specific["updatedToolOutput"] = masked
    out["hookSpecificOutput"] = specific
    return out
