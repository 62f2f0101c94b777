"""Reading Claude Code's transcripts incrementally and storing the tool calls they hold.

The private half of :mod:`omcm_core.transcript_tail` (which owns the tables and
hands the calls out): each call reads at most :data:`MAX_READ` new bytes of a
file, keeps only whole lines, parses the ``assistant``/``user`` entries, and
stores each ``tool_use`` until its ``tool_result`` pairs with it, masked.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from typing import Any

from omcm_core.transcripts import claude_entry, message_blocks, result_text

MAX_READ = 1 << 20  # bytes per file per call
MAX_LINE = 512 << 10  # longer lines are skipped (an image pasted as base64, garbage)
FIRST_WINDOW = 8 << 20  # a file first seen at 2 GB is read from its last 8 MB
RESULT_CHARS = 4000  # stored per result, after masking
KEEP_S = 7 * 86400
MARK_PREFIX = b"b2:"  # a stored mark is this and a BLAKE2b digest (before: the raw bytes)


# -- reading --------------------------------------------------------------------
def ingest(store, path: str, now: float) -> None:
    row = store.query("SELECT dev, ino, mark, offset, skipping FROM transcript_files WHERE path = ?", (path,))
    try:
        # O_NONBLOCK: a FIFO planted at the path must not hang the hook; O_NOFOLLOW: no link games.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return
        offset, skipping = _resume(fd, row, info)
        if offset >= info.st_size:
            if not row or row[0][3] != offset:
                _save_file(store, path, info, _mark(fd, offset), offset, skipping, now, [])
            return
        chunk = os.pread(fd, min(MAX_READ, info.st_size - offset), offset)
        lines, consumed, skipping = _complete_lines(chunk, skipping)
        mark = _mark(fd, offset + consumed)
    finally:
        os.close(fd)
    _save_file(store, path, info, mark, offset + consumed, skipping, now, _entries(lines))


def _mark(fd: int, offset: int) -> bytes:
    """A hash of the bytes just before ``offset``: an appended file still has them, a rewritten one rarely does.

    A hash, not the bytes: the transcript's last 64 bytes may hold a token, and the store keeps the mark for good.
    """
    return mark_of(os.pread(fd, min(offset, 64), max(0, offset - 64)))


def mark_of(tail: bytes) -> bytes:
    from hashlib import blake2b  # only when a transcript is read

    return MARK_PREFIX + blake2b(tail, digest_size=16).digest()


def _resume(fd: int, row: Sequence[tuple], info: os.stat_result) -> tuple[int, bool]:
    """Where to go on reading: the stored offset, or the start when the file was truncated or replaced."""
    if row:
        dev, ino, mark, offset, skipping = row[0]
        if (
            (dev, ino) == (info.st_dev, info.st_ino)
            and offset <= info.st_size
            and _mark(fd, offset) == bytes(mark or b"")
        ):
            return offset, bool(skipping)
        return 0, False
    if info.st_size > FIRST_WINDOW:
        return info.st_size - FIRST_WINDOW, True  # mid-line: skip to the next newline
    return 0, False


def _complete_lines(chunk: bytes, skipping: bool) -> tuple[list[bytes], int, bool]:
    """Split a chunk into whole lines; returns them, the bytes consumed and whether a long line goes on."""
    start = 0
    if skipping:
        newline = chunk.find(b"\n")
        if newline < 0:
            return [], len(chunk), True
        start = newline + 1
    end = chunk.rfind(b"\n")
    if end < start:
        # No newline after start: a partial line. If it fills the whole read it is too long to keep.
        if len(chunk) - start >= MAX_READ // 2:
            return [], len(chunk), True
        return [], start, False
    lines = [line for line in chunk[start:end].split(b"\n") if 0 < len(line) <= MAX_LINE]
    return lines, end + 1, False


def _entries(lines: list[bytes]) -> list[dict]:
    entries = []
    for line in lines:
        if line[:1] != b"{":
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entry = claude_entry(entry)  # another agent's line (Qwen Code) in Claude's shape
            if entry.get("type") in ("assistant", "user"):
                entries.append(entry)
    return entries


# -- storing ----------------------------------------------------------------------
def _save_file(store, path, info, mark, offset, skipping, now, entries: list[dict]) -> None:
    if entries:
        from omcm_core.redact import prepare

        prepare()  # storing masks: import masking's detectors before taking the write lock
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO transcript_files(path, dev, ino, mark, offset, skipping, updated) VALUES(?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET dev = excluded.dev, ino = excluded.ino, mark = excluded.mark, "
            "offset = excluded.offset, skipping = excluded.skipping, updated = excluded.updated",
            (path, info.st_dev, info.st_ino, mark, offset, int(skipping), now),
        )
        for entry in entries:
            _store_entry(conn, entry, path, now)
        if entries:
            cutoff = now - KEEP_S
            for table in ("transcript_uses", "transcript_calls", "transcript_reported"):
                conn.execute(f"DELETE FROM {table} WHERE ts < ?", (cutoff,))


def _store_entry(conn, entry: dict, path: str, now: float) -> None:
    blocks = message_blocks(entry.get("message"))
    if entry.get("type") == "assistant":
        for block in blocks:
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                given = block.get("input")
                tool_input = given if isinstance(given, dict) else {}
                conn.execute(
                    "INSERT OR IGNORE INTO transcript_uses(tool_use_id, tool_name, input, ts) VALUES(?, ?, ?, ?)",
                    (block["id"], str(block.get("name", ""))[:200], _masked_json(tool_input), now),
                )
        return
    for block in blocks:
        if block.get("type") != "tool_result" or not isinstance(block.get("tool_use_id"), str):
            continue
        use = conn.execute(
            "SELECT tool_name, input FROM transcript_uses WHERE tool_use_id = ?", (block["tool_use_id"],)
        ).fetchone()
        if use is None:
            continue  # its tool_use was before the part we read: nothing to pair it with
        conn.execute(
            "INSERT OR IGNORE INTO transcript_calls(tool_use_id, transcript, session_id, cwd, agent_id, tool_name, "
            "input, is_error, result, written, ts) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                block["tool_use_id"],
                path,
                _str(entry.get("sessionId")),
                _str(entry.get("cwd")),
                _str(entry.get("agentId")),
                use[0],
                use[1],
                int(block.get("is_error") is True),
                _masked_text(result_text(block)),
                _timestamp(entry.get("timestamp"), now),
                now,
            ),
        )
        conn.execute("DELETE FROM transcript_uses WHERE tool_use_id = ?", (block["tool_use_id"],))


# -- small parsers ------------------------------------------------------------------
def _masked_text(text: str) -> str:
    """Masked, then cut (a secret across the cut is still recognised whole), without masking megabytes."""
    from omcm_core.redact import mask_head  # here: a call with nothing new to read never imports the rules

    return mask_head(text, RESULT_CHARS)


def _masked_json(value: dict) -> str:
    """The tool's input as JSON, masked, each long value cut (the keys, such as file_path, stay usable)."""
    from omcm_core import redact

    # By key name ({"password": ...} whatever it looks like); a long value is cut to its masked head and tail first.
    value = redact.mask_structured(value, max_chars=RESULT_CHARS)
    shown: dict[str, Any] = {}
    for key, item in list(value.items())[:50]:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=str)
        masked = _masked_text(text)
        # A number, a flag or a small structure that masking left alone stays what it was.
        shown[str(key)[:100]] = item if not isinstance(item, str) and masked == text else masked
    return json.dumps(shown, ensure_ascii=False, default=str)


def _str(value: Any) -> str | None:
    return value[:500] if isinstance(value, str) else None


def _timestamp(value: Any, default: float) -> float:
    """``2026-02-10T21:55:11.345Z`` -> epoch seconds, without importing datetime on the hook path."""
    if not isinstance(value, str) or len(value) < 19 or value[4] != "-" or value[10] != "T":
        return default
    try:
        year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
        hour, minute, second = int(value[11:13]), int(value[14:16]), int(value[17:19])
    except ValueError:
        return default
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return default
    # Days from the civil date (Howard Hinnant's algorithm); transcripts write UTC.
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return float(days * 86400 + hour * 3600 + minute * 60 + second)
