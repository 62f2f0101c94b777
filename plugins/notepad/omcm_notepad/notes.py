"""What the hooks and the CLI do with the notepad: remember, prune, read for Claude, stats.

Every failure is logged and answered as "no notepad": the user's session never
breaks because of a notepad (a refused symlink, a lock held too long, a full disk).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import attrs

from omcm_core.confined import UnsafePathError
from omcm_core.redact import mask
from omcm_notepad import document, edit, storage, tags
from omcm_notepad.settings import NotepadConfig


def hook_lock_timeout(budget_ms: int) -> float:
    """How long a hook waits for the lock: the plugin's budget less time to write."""
    return max(0.2, budget_ms / 1000 - 0.3)


@attrs.frozen
class Saved:
    entries: int
    priority: bool
    pruned: int
    dropped: int
    size: int


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def for_claude(text: str, limit: int) -> str:
    """Text from the file as Claude may see it: valid UTF-8, secrets masked, bounded."""
    text = mask(encode(text).decode("utf-8", "replace"))
    return text if len(text) <= limit else text[: max(0, limit - 12)].rstrip() + " [truncated]"


def problem(project: Path | None) -> str | None:
    """Why the notepad cannot be used (for ``omcm doctor``), or None."""
    if project is None:
        return None
    try:
        storage.read(project)
    except UnsafePathError as exc:
        return str(exc)  # "refused <path>: <why> ..."
    except OSError as exc:
        return f"unreadable: {exc}"
    return None


def load(project: Path | None, log) -> document.Document | None:
    """The parsed notepad, or None (no project, no file, refused or unreadable: logged)."""
    if project is None:
        return None
    try:
        data = storage.read(project)
    except UnsafePathError as exc:
        log.warning("notepad_refused", why=str(exc), project=str(project))
        return None
    except OSError as exc:
        log.error("notepad_unreadable", error=f"{type(exc).__name__}: {exc}", project=str(project))
        return None
    return document.parse(decode(data)) if data is not None else None


def _finish(doc, config: NotepadConfig, now: datetime, keep: list, log) -> tuple:
    pruned = edit.prune(doc, now - timedelta(days=config.working_memory_days))
    dropped = edit.cap(doc, config.max_bytes, keep)
    for entry in dropped:
        log.warning("notepad_entry_dropped_size_cap", stamp=entry.lines[0].strip(), max_bytes=config.max_bytes)
    size = edit.size(doc)
    if size > config.max_bytes:
        log.warning("notepad_over_cap", bytes=size, max_bytes=config.max_bytes, why="text omcm does not manage")
    return pruned, len(dropped), size


def change(project: Path, notes: list, config: NotepadConfig, now: datetime, log, timeout: float) -> Saved | None:
    """Apply ``notes`` (tags.Note), prune and cap, under the lock; None if it could not be done."""

    def apply(data):
        doc = document.parse(decode(data)) if data is not None else edit.new_document()
        added, priority = [], False
        for note in notes:
            if note.priority:
                edit.set_priority(doc, note.text)
                priority = True
            else:
                added.append(edit.add_entry(doc, now, note.text))
        pruned, dropped, size = _finish(doc, config, now, added, log)
        if data is None and not notes:
            return None, Saved(0, False, 0, 0, 0)  # pruning nothing: do not create a file
        return encode(doc.render()), Saved(len(added), priority, pruned, dropped, size)

    try:
        return storage.update(project, apply, timeout, create=bool(notes))  # pruning alone creates nothing
    except UnsafePathError as exc:
        log.warning("notepad_refused", why=str(exc), project=str(project))
    except TimeoutError as exc:
        log.error("notepad_lock_timeout", error=str(exc), project=str(project), notes=len(notes))
    except OSError as exc:
        log.error("notepad_write_failed", error=f"{type(exc).__name__}: {exc}", project=str(project))
    return None


def context(doc: document.Document | None, config: NotepadConfig, now: datetime) -> str | None:
    """SessionStart's additionalContext: the priority context and, if configured, recent entries."""
    if doc is None:
        return None
    parts = []
    priority = document.priority_text(doc)
    if priority:
        parts.append(
            f"[notepad] Priority context ({storage.relative_path()}):\n"
            + for_claude(priority, config.priority_max_chars)
        )
    cutoff = now - timedelta(days=config.working_memory_days)
    entries = edit.recent(doc, config.inject_entries, cutoff)
    if entries:
        lines = [for_claude("".join(e.lines).strip(), tags.MAX_NOTE + 40) for e in entries]  # + its ### line
        parts.append(f"[notepad] Recent working memory ({storage.relative_path()}):\n" + "\n\n".join(lines))
    return "\n\n".join(parts) or None


def continuation(doc: document.Document | None, config: NotepadConfig) -> str | None:
    priority = document.priority_text(doc) if doc is not None else ""
    if not priority:
        return None
    return f"[notepad] Priority context ({storage.relative_path()}):\n" + for_claude(
        priority, config.priority_max_chars
    )


def stats(doc: document.Document | None, config: NotepadConfig, now: datetime) -> dict:
    if doc is None:
        return {"exists": False}
    block = doc.section(document.WORKING)
    entries = block.entries if block else []
    dated = sorted(e.when for e in entries if e.when is not None)
    cutoff = now - timedelta(days=config.working_memory_days)
    return {
        "exists": True,
        "bytes": edit.size(doc),
        "max_bytes": config.max_bytes,
        "priority_chars": len(document.priority_text(doc)),
        "working_memory_entries": len(entries),
        "expired_entries": sum(1 for w in dated if w < cutoff),
        "oldest_entry": dated[0].strftime(document.STAMP) if dated else None,
        "sections": [b.name for b in doc.blocks if b.name],
    }
