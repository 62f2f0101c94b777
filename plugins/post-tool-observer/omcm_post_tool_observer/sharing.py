"""Sharing observations with the team (``[post-tool-observer] share = true`` and ``[core] team_store`` set).

Each recorded observation becomes one team entry of kind
``post-tool-observer/observation``, keyed by its session and tool_use_id so the
same call queued twice is one entry. What is queued is built from the row the
observer just stored, which capture already masked: nothing here reads the raw
tool call. It is kept small (the head of the output, a short input) and names
no local path: paths under the project become relative, the home folder ``~``,
and the file of a call outside both only its base name. A command is shared as
its shape (``team.shape``: every value a ``<arg>``), never as typed. ``team.share`` masks
once more before the outbox.

``omcm search --team`` reads the team's entries from the local copy
(``team_items``) the background sync keeps; never the network.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

KIND = "post-tool-observer/observation"
MAX_OUTPUT = 2000  # characters of the (masked) output that leave the machine
MAX_INPUT = 300  # the command, pattern, query or URL
MAX_ERROR = 500


def enabled(ctx, config) -> bool:
    """Sharing is on (the user's own config) and a team store is set."""
    from omcm_core import team

    return bool(config.share) and team.configured(ctx)


def _roots(ctx) -> list[tuple[str, str]]:
    """(root, what it becomes): the project first (it is often under the home folder), then home."""
    roots = []
    if ctx.project_dir and str(ctx.project_dir) not in ("", "/"):
        roots.append((str(ctx.project_dir).rstrip("/"), ""))
    home = ctx.env.get("HOME")
    if home and home != "/":
        roots.append((home.rstrip("/"), "~/"))
    return roots


def local_text(text: str | None, ctx) -> str | None:
    """``text`` with the project's and the home folder's absolute paths written relative / ``~``."""
    if not text:
        return text
    for root, short in _roots(ctx):
        # The root itself, or followed by "/": never the start of a longer name (/src/shop vs /src/shop2).
        pattern = re.compile(re.escape(root) + r"(/|(?![\w.-]))")
        text = pattern.sub(lambda m, s=short: s if m.group(1) else (s.rstrip("/") or "."), text)
    return text


def relative_path(path: str | None, ctx) -> str | None:
    """A file's path as it may leave the machine: relative to the project, ``~/...``, or its base name."""
    if not path:
        return path
    unified = path.replace("\\", "/")
    for root, short in _roots(ctx):
        if unified == root:
            return short.rstrip("/") or "."
        if unified.startswith(root + "/"):
            return short + unified[len(root) + 1 :]
    is_absolute = unified.startswith("/") or (len(unified) > 1 and unified[1] == ":")
    return unified.rsplit("/", 1)[-1] if is_absolute else unified


def _cut(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def payload_of(ctx, event_id: str, with_output: bool = False) -> tuple[str, dict[str, Any]] | None:
    """(key, payload) of a stored observation; None if it is gone.

    What travels is structure, not values: the output stays home unless the
    user turned on ``[post-tool-observer] share_output`` (``with_output``).
    """
    rows = ctx.store.query(
        "SELECT session_id, tool_use_id, ts, tool_name, success, output, error, payload_json "
        "FROM observer_events WHERE event_id = ?",
        (event_id,),
    )
    if not rows:
        return None
    session, tool_use_id, ts, tool, success, output, error, stored = rows[0]
    meta = (json.loads(stored).get("metadata") or {}) if stored else {}
    from omcm_core.team import shape

    command = meta.get("command")
    # A command travels as its shape (values replaced by <arg>); a pattern, query or URL masked and cut.
    summary = shape(command) if command else (meta.get("pattern") or meta.get("query") or meta.get("url"))
    payload = {
        "tool": tool,
        "input": _cut(local_text(str(summary), ctx), MAX_INPUT) if summary else None,
        "file": relative_path(meta.get("filePath"), ctx),
        "output": _cut(local_text(output, ctx), MAX_OUTPUT) if with_output else None,
        "error": _cut(local_text(error, ctx), MAX_ERROR),
        "success": bool(success),
        "exitCode": meta.get("exitCode"),
        "ts": round(ts, 3) if ts else time.time(),
    }
    return f"{session or ''}/{tool_use_id or event_id}", payload


def share_recorded(ctx, event_id: str) -> None:
    """Queue the observation ``event_id`` (just stored, already masked) for the team."""
    from omcm_core import team
    from omcm_post_tool_observer import ObserverConfig

    built = payload_of(ctx, event_id, with_output=ctx.config(ObserverConfig).share_output)
    if built is not None:
        key, payload = built
        team.share(ctx, KIND, key, payload, count=1)


# -- omcm search --team ------------------------------------------------------------------
def search(ctx, words: list[str], tool: str | None, file: str | None, failures: bool, limit: int) -> list[dict]:
    """The team's shared observations whose payload contains every word (case-insensitive substring), newest first."""
    from omcm_core import team
    from omcm_core.redact import mask_structured

    team.ready(ctx.store)
    where, params = ["kind = ?"], [KIND]
    for word in words:
        where.append("instr(lower(payload), lower(?)) > 0")
        params.append(word)
    if tool:
        where.append("lower(json_extract(payload, '$.tool')) = lower(?)")
        params.append(tool)
    if file:
        where.append("instr(lower(coalesce(json_extract(payload, '$.file'), '')), lower(?)) > 0")
        params.append(file)
    if failures:
        where.append("json_extract(payload, '$.success') = 0")
    rows = ctx.store.query(
        f"SELECT project, key, payload, updated_by FROM {team.ITEMS} WHERE {' AND '.join(where)} "
        "ORDER BY json_extract(payload, '$.ts') DESC, server_seq DESC LIMIT ?",
        (*params, max(limit, 0)),
    )
    here = team.project_id(ctx)
    hits = []
    for project, key, payload, by in rows:
        item = mask_structured(json.loads(payload))  # again on the way out: another machine's older rules
        hits.append(
            {
                "by": by,
                "this_project": bool(here) and project == here,
                "key": key,
                "tool": item.get("tool"),
                "file": item.get("file"),
                "input": item.get("input"),
                "success": bool(item.get("success")),
                "error": item.get("error"),
                "output": item.get("output"),
                "ts": item.get("ts"),
            }
        )
    return hits
