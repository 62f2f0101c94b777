"""Sharing lessons with the team (``[pre-tool-guide] share = true`` and ``[core] team_store`` set).

Each lesson is one team entry of kind ``pre-tool-guide/lesson`` keyed by the
file's base name and the normalized error, paths made relative to the project
and the home folder written ``~``: what leaves the machine names no local path.
A failure adds 1 to the entry's count; the fix that resolved it adds its
resolution. What travels is structure, not values: the tool, the normalized
error and the resolution's shape (a command's values replaced by ``<arg>``,
:func:`omcm_core.team.shape`). Guidance then reads the team's entries
from the local copy the background sync keeps, never from the network, and
shows each as a teammate's note: attributed to the author the server stamped,
at most ``team.QUOTE_MAX`` characters, never as an instruction. Lessons of
other projects only when a reviewer approved them.

The entry keys (``key_of``) are what servers already hold: keep them stable.
"""

from __future__ import annotations

from typing import Any

import attrs

KIND = "pre-tool-guide/lesson"


@attrs.frozen
class GuideConfig:
    """``[pre-tool-guide]``: every key the user's alone (no ``Project`` marker: lessons leave the machine
    only if the user says so)."""

    #: Share learned lessons (error, resolution, counts) with the team store; off unless turned on.
    share: bool = False


def enabled(ctx) -> bool:
    """Sharing is on; the team tables then exist (a machine that never learned nor synced has none yet)."""
    from omcm_core import team

    if not (team.configured(ctx) and ctx.config(GuideConfig).share):
        return False
    team.ready(ctx.store)
    return True


def safely(ctx, lookup, *args, default=None):
    """A team lookup that cannot cost the guidance this machine knows by itself."""
    try:
        return lookup(ctx, *args)
    except Exception as exc:
        ctx.log.error("team_lookup_failed", lookup=lookup.__name__, error=f"{type(exc).__name__}: {exc}")
        return default


def _local(text: str | None, ctx) -> str | None:
    if not text:
        return text
    from omcm_pre_tool_guide.normalize import unify_separators

    text = unify_separators(text)
    for root in (str(ctx.project_dir) if ctx.project_dir else None, ctx.env.get("HOME")):
        if root and root != "/":
            text = text.replace(unify_separators(root).rstrip("/") + "/", "~/" if root == ctx.env.get("HOME") else "")
    return text


def key_of(ctx, normalized: str, file_key: str | None) -> str:
    return f"{file_key or ''}\n{_local(normalized, ctx)}"


def share_failure(ctx, tool: str, raw: str, normalized: str, file_key: str | None) -> None:
    from omcm_core import team

    payload = {"tool": tool, "error": _local(normalized, ctx)[:MAX_ERROR], "file_key": file_key or ""}
    team.share(ctx, KIND, key_of(ctx, normalized, file_key), payload, count=1)


def shaped_resolution(ctx, resolution: dict[str, Any]) -> dict[str, Any]:
    """The resolution as it may travel: a command's shape, a file tool's relative path, short tool names."""
    from omcm_core.team import shape

    tool = str(resolution.get("tool") or "")[:40]
    by = resolution.get("resolvedBy")
    by = shape(by) if tool == "Bash" else _local(by, ctx)
    sequence = resolution.get("toolSequence")
    sequence = [str(step)[:20] for step in sequence[:MAX_STEPS]] if isinstance(sequence, list) else []
    return {"resolvedBy": (by or "")[:MAX_BY], "tool": tool, "toolSequence": sequence}


MAX_ERROR, MAX_BY, MAX_STEPS = 300, 200, 5


def share_resolution(ctx, normalized: str, file_key: str, resolution: dict[str, Any]) -> None:
    from omcm_core import team

    team.share(
        ctx, KIND, key_of(ctx, normalized, file_key), {"resolution": shaped_resolution(ctx, resolution)}, count=0
    )


def _quoted(ctx, rows) -> list[tuple[str, str]]:
    """(error, resolution JSON) rows of the local copy, as a teammate's note: bounded, attributed, reshaped.

    An entry may come from a member who wrote it by hand: the text is cut (at most ``team.QUOTE_MAX``
    characters per lesson in all), the command reshaped again, and the author is the server's stamp.
    """
    import json

    from omcm_core import team

    quoted = []
    for error, resolution, author in rows:
        try:
            value = json.loads(resolution)
        except (TypeError, ValueError):
            continue
        if not isinstance(value, dict) or not error:
            continue
        clean = shaped_resolution(ctx, value)
        clean["resolvedBy"] = " ".join(str(clean["resolvedBy"]).split())
        room = team.QUOTE_MAX - len(clean["resolvedBy"]) - len(clean["tool"]) - sum(map(len, clean["toolSequence"]))
        quoted.append((team.quote(author, str(error), max(room, 40)), json.dumps(clean, ensure_ascii=False)))
    return quoted


def file_lessons(ctx, file_key: str, exclude: set[str], limit: int = 2) -> list[tuple[str, Any]]:
    """Resolved team lessons about this file name in this project: (error, resolution JSON)."""
    from omcm_core import team

    project = team.project_id(ctx)
    if project is None:
        return []
    rows = ctx.store.query(
        f"SELECT json_extract(payload, '$.error'), json_extract(payload, '$.resolution'), author FROM {team.ITEMS} "
        "WHERE kind = ? AND project = ? AND key >= ? AND key < ? "
        "AND json_extract(payload, '$.resolution') IS NOT NULL ORDER BY server_seq DESC LIMIT ?",
        (KIND, project, file_key + "\n", file_key + "\x0b", limit + len(exclude)),
    )
    return _quoted(ctx, [(e, r, a) for e, r, a in rows if e and e not in exclude][:limit])


def unread_lessons(ctx, tool: str, signatures: tuple[str, ...], limit: int = 1) -> list[tuple[str, Any]]:
    """Resolved team lessons of ``tool`` refused on a file not read yet, from any project: approved ones only."""
    from omcm_core import team

    if not signatures:
        return []
    where = " OR ".join("key LIKE ?" for _ in signatures)
    rows = ctx.store.query(
        f"SELECT json_extract(payload, '$.error'), json_extract(payload, '$.resolution'), author FROM {team.ITEMS} "
        f"WHERE kind = ? AND approved = 1 AND json_extract(payload, '$.tool') = ? AND ({where}) "
        "AND json_extract(payload, '$.resolution') IS NOT NULL ORDER BY count DESC, server_seq DESC LIMIT ?",
        (KIND, tool, *(f"%{s}%" for s in signatures), limit),
    )
    return _quoted(ctx, rows)


def bash_lesson(ctx, normalized: str) -> tuple[str, Any] | None:
    """The team's resolution of this normalized Bash error in this project, if any."""
    from omcm_core import team

    project = team.project_id(ctx)
    if project is None:
        return None
    rows = ctx.store.query(
        f"SELECT json_extract(payload, '$.error'), json_extract(payload, '$.resolution'), author FROM {team.ITEMS} "
        "WHERE kind = ? AND project = ? AND substr(key, instr(key, char(10)) + 1) = ? "
        "AND json_extract(payload, '$.resolution') IS NOT NULL ORDER BY server_seq DESC LIMIT 1",
        (KIND, project, _local(normalized, ctx)),
    )
    quoted = _quoted(ctx, rows)
    return quoted[0] if quoted else None
