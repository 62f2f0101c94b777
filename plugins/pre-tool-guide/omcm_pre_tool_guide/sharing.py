"""Sharing lessons with the team (``[pre-tool-guide] share = true`` and ``[core] team_store`` set).

Each lesson is one team entry of kind ``pre-tool-guide/lesson`` keyed by the
file's base name and the normalized error, paths made relative to the project
and the home folder written ``~``: what leaves the machine names no local path.
A failure adds 1 to the entry's count; the fix that resolved it adds its
resolution. Guidance then reads the team's entries from the local copy the
background sync keeps, never from the network.
"""

from __future__ import annotations

from typing import Any

import attrs

KIND = "pre-tool-guide/lesson"


@attrs.frozen
class GuideConfig:
    """``[pre-tool-guide]``."""

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
    from omcm_pre_tool_guide.normalize import display_error

    payload = {"tool": tool, "error": _local(display_error(raw, None), ctx), "file_key": file_key or ""}
    team.share(ctx, KIND, key_of(ctx, normalized, file_key), payload, count=1)


def share_resolution(ctx, normalized: str, file_key: str, resolution: dict[str, Any]) -> None:
    from omcm_core import team

    shown = dict(resolution, resolvedBy=_local(resolution.get("resolvedBy"), ctx))
    team.share(ctx, KIND, key_of(ctx, normalized, file_key), {"resolution": shown}, count=0)


def file_lessons(ctx, file_key: str, exclude: set[str], limit: int = 2) -> list[tuple[str, Any]]:
    """Resolved team lessons about this file name in this project: (error, resolution JSON)."""
    from omcm_core import team

    project = team.project_id(ctx)
    if project is None:
        return []
    rows = ctx.store.query(
        f"SELECT json_extract(payload, '$.error'), json_extract(payload, '$.resolution') FROM {team.ITEMS} "
        "WHERE kind = ? AND project = ? AND key >= ? AND key < ? "
        "AND json_extract(payload, '$.resolution') IS NOT NULL ORDER BY server_seq DESC LIMIT ?",
        (KIND, project, file_key + "\n", file_key + "\x0b", limit + len(exclude)),
    )
    return [(e, r) for e, r in rows if e and e not in exclude][:limit]


def unread_lessons(ctx, tool: str, signatures: tuple[str, ...], limit: int = 1) -> list[tuple[str, Any]]:
    """Resolved team lessons of ``tool`` refused on a file not read yet, from any project of the team."""
    from omcm_core import team

    if not signatures:
        return []
    where = " OR ".join("key LIKE ?" for _ in signatures)
    return ctx.store.query(
        f"SELECT json_extract(payload, '$.error'), json_extract(payload, '$.resolution') FROM {team.ITEMS} "
        f"WHERE kind = ? AND json_extract(payload, '$.tool') = ? AND ({where}) "
        "AND json_extract(payload, '$.resolution') IS NOT NULL ORDER BY count DESC, server_seq DESC LIMIT ?",
        (KIND, tool, *(f"%{s}%" for s in signatures), limit),
    )


def bash_lesson(ctx, normalized: str) -> tuple[str, Any] | None:
    """The team's resolution of this normalized Bash error in this project, if any."""
    from omcm_core import team

    project = team.project_id(ctx)
    if project is None:
        return None
    rows = ctx.store.query(
        f"SELECT json_extract(payload, '$.error'), json_extract(payload, '$.resolution') FROM {team.ITEMS} "
        "WHERE kind = ? AND project = ? AND substr(key, instr(key, char(10)) + 1) = ? "
        "AND json_extract(payload, '$.resolution') IS NOT NULL ORDER BY server_seq DESC LIMIT 1",
        (KIND, project, _local(normalized, ctx)),
    )
    return rows[0] if rows else None
