"""The guidance texts (past errors of a file, of Bash in this session, of an unread file), in Korean and English."""

from __future__ import annotations

import json
from typing import Any

from omcm_core.redact import mask

TEXT = {
    "ko": {
        "file_error": "⚠️ 이 파일 관련 과거 에러: {error}",
        "resolved_by": "해결 방법: {by} ({tool})",
        "resolved_raw": "해결 방법: {raw}",
        "file_path": "해결 경로: {path}",
        "bash_error": "💡 이 세션에서 Bash 에러 발생 이력: {error}",
        "bash_path": "이전 해결 경로: {path}",
        "unread_error": "⚠️ 이 세션은 아직 {file}을(를) 읽지 않았습니다. 같은 상황의 과거 에러: {error}",
    },
    "en": {
        "file_error": "⚠️ Past error with this file: {error}",
        "resolved_by": "Resolved by: {by} ({tool})",
        "resolved_raw": "Resolved by: {raw}",
        "file_path": "Resolution path: {path}",
        "bash_error": "💡 Bash error earlier in this session: {error}",
        "bash_path": "Previous resolution path: {path}",
        "unread_error": "⚠️ This session has not read {file} yet. The same situation failed before: {error}",
    },
}


def _parse(resolution: Any):
    try:
        value = json.loads(resolution)
    except (TypeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    sequence = value.get("toolSequence")
    if not isinstance(sequence, list):
        sequence = []
    return {"by": value.get("resolvedBy", ""), "tool": value.get("tool", ""), "path": " → ".join(map(str, sequence))}


def file_items(rows, language: str) -> list[str]:
    t = TEXT.get(language, TEXT["en"])
    items = []
    for error, resolution in rows:
        items.append(t["file_error"].format(error=error))
        parsed = _parse(resolution)
        if parsed is None:  # stored by someone else or damaged: show it as it is
            items.append(t["resolved_raw"].format(raw=resolution))
            continue
        items.append(t["resolved_by"].format(**parsed))
        if parsed["path"]:
            items.append(t["file_path"].format(path=parsed["path"]))
    return [mask(item) for item in items]  # rows may predate a masking rule: never print a secret back


def bash_items(row, language: str) -> list[str]:
    t = TEXT.get(language, TEXT["en"])
    error, resolution = row
    items = [t["bash_error"].format(error=error)]
    parsed = _parse(resolution)
    if parsed is None:
        items.append(t["resolved_raw"].format(raw=resolution))
        return [mask(item) for item in items]
    if parsed["by"]:
        items.append(t["resolved_by"].format(**parsed))  # the command that fixed it, not only "Bash → Bash"
    if parsed["path"]:
        items.append(t["bash_path"].format(path=parsed["path"]))
    return [mask(item) for item in items]


def unread_items(rows, file: str, language: str) -> list[str]:
    """A lesson learned on another file: the error, and the steps that fixed it (not that file's name)."""
    t = TEXT.get(language, TEXT["en"])
    items = []
    for error, resolution in rows:
        items.append(t["unread_error"].format(file=file, error=error))
        parsed = _parse(resolution)
        if parsed and parsed["path"]:
            items.append(t["file_path"].format(path=parsed["path"]))
    return [mask(item) for item in items]
