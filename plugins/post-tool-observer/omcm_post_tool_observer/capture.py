"""A PostToolUse / PostToolUseFailure event -> the tool_observation payload the observer stores.

Per-tool compression, so that what is stored stays small and useful: Read keeps the first and last 50 lines,
Grep and Glob keep the file list, WebFetch the first 500 characters, Bash the
whole output with its exit code; anything longer than 100 lines becomes head 50
+ marker + tail 50, and nothing stored exceeds 10 KB. Unknown response shapes
are stored as JSON, not dropped. Everything is masked before it leaves here,
and masked *before* it is cut: a cut can drop a private key's BEGIN line or
half a token, and what is left no longer looks like a secret.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from omcm_core.agents.tool_kinds import kind_of
from omcm_core.redact import mask, mask_head, mask_structured, mask_tail

MAX_LENGTH = 10_000
MAX_LINES = 100
MARKER = "\n...[TRUNCATED]...\n"
WEBFETCH_CHARS = 500

FILE_TYPES = {
    ".py": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".rb": "ruby",
    ".md": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sh": "shell",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".ex": "elixir",
    ".exs": "elixir",
}
_EXIT = re.compile(r"^Exit code (\d+)")


def truncate(text: str) -> str:
    """Over 100 lines -> head 50 + marker + tail 50 (the start and the end say most); then the 10 KB cap."""
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        text = "\n".join(lines[:50]) + MARKER + "\n".join(lines[-50:])
    if len(text) > MAX_LENGTH:
        half = (MAX_LENGTH - len(MARKER)) // 2
        text = text[:half] + MARKER + text[-half:]
    return text


def mask_and_truncate(text: str) -> str:
    """``truncate(mask(text))`` without masking megabytes: each kept part is masked with its context.

    Only the kept parts are masked, each at most MAX_LENGTH long: a 64 MB command
    once held the GIL 35 s while it was masked whole.
    """
    if text.count("\n") >= MAX_LINES:
        head_end = _nth_newline(text, 50)
        tail_start = _nth_newline_from_end(text, 50) + 1
        head = mask_head(text, min(head_end, MAX_LENGTH))
        tail = mask_tail(text, min(len(text) - tail_start, MAX_LENGTH))
        text = head + MARKER + tail  # both parts masked: the byte cap below cuts masked text
    elif len(text) > MAX_LENGTH:
        half = (MAX_LENGTH - len(MARKER)) // 2
        return mask_head(text, half) + MARKER + mask_tail(text, half)
    else:
        return mask(text)
    return truncate(text)


def _nth_newline(text: str, n: int) -> int:
    """The index of the ``n``-th newline (there are at least ``n``)."""
    pos = -1
    for _ in range(n):
        pos = text.find("\n", pos + 1)
    return pos


def _nth_newline_from_end(text: str, n: int) -> int:
    pos = len(text)
    for _ in range(n):
        pos = text.rfind("\n", 0, pos)
    return pos


def file_type(path: str | None) -> str | None:
    if not path:
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    ext = ("." + name.rsplit(".", 1)[-1].lower()) if "." in name else ""
    return FILE_TYPES.get(ext, ext.lstrip(".") or None)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _lines(text: str | None) -> int | None:
    return None if text is None else len(text.splitlines())


def output_and_metadata(tool: str, tool_input: Mapping[str, Any], response: Any, error: str | None) -> tuple[str, dict]:
    """(compressed output, per-tool metadata) for one call."""
    r = response if isinstance(response, Mapping) else {}
    meta: dict[str, Any] = {}
    path = tool_input.get("file_path") or tool_input.get("notebook_path") or r.get("filePath")
    if tool in ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit") and isinstance(path, str):
        meta["filePath"] = path
        meta["fileType"] = file_type(path)
    if tool in ("Bash", "PowerShell") or kind_of(tool) == "shell":  # run_shell_command: Gemini CLI, Qwen Code
        meta["command"] = tool_input.get("command")
        code = None
        match = _EXIT.match(error or "")
        if match:
            code = int(match.group(1))
        for key in ("exitCode", "exit_code", "returncode"):
            if isinstance(r.get(key), int):
                code = r[key]
        meta["exitCode"] = code if code is not None else (0 if error is None else None)
        # Claude Code's {stdout, stderr}; another agent's text as the agent layer gives it ({"output": text}).
        stdout, stderr = _text(r.get("stdout", r.get("output"))), _text(r.get("stderr"))
        output = stdout + (f"\n[stderr]\n{stderr}" if stderr else "") if r else _text(response)
    elif tool == "Read":
        file = r.get("file") if isinstance(r.get("file"), Mapping) else {}
        content = _text(file.get("content")) if file else _text(response)
        meta["lineCount"] = file.get("totalLines") or file.get("numLines") or _lines(content)
        output = content
    elif tool in ("Write",):
        content = _text(tool_input.get("content"))
        meta["lineCount"] = _lines(content)
        output = f"{r.get('type', 'write')} {path}\n{content}"
    elif tool in ("Edit", "MultiEdit"):
        output = f"edit {path}\n- {_text(tool_input.get('old_string'))}\n+ {_text(tool_input.get('new_string'))}"
        if tool == "MultiEdit":
            output = f"multiedit {path}: {len(tool_input.get('edits') or [])} edits"
    elif tool in ("Grep", "Glob"):
        meta["pattern"] = tool_input.get("pattern")
        files = r.get("filenames") if isinstance(r.get("filenames"), list) else []
        meta["matchCount"] = r.get("numMatches") or r.get("numFiles") or len(files)
        output = "\n".join(map(str, files)) if files else _text(r.get("content") or response)
    elif tool == "WebFetch":
        meta["url"] = tool_input.get("url")
        meta["statusCode"] = r.get("code") if isinstance(r.get("code"), int) else None
        output = mask_head(_text(r.get("result") if r else response), WEBFETCH_CHARS)
    elif tool == "WebSearch":
        meta["query"] = tool_input.get("query")
        output = _text(r.get("results") if r else response)
    else:
        # Masked as a structure first: inside JSON text a key's quotes are escaped and its rules see no key.
        output = _text(mask_structured(response, max_chars=MAX_LENGTH))
    if error and not output:
        output = error
    meta = {k: v for k, v in meta.items() if v is not None}
    return mask_and_truncate(output), mask_structured(meta, max_chars=MAX_LENGTH)  # the command may be 64 MB


def observation(event, duration_ms: float | None, prompt_index: int, tool_index: int) -> dict[str, Any]:
    """The stored observation (toolName, toolInput, toolOutput, metadata, ...), masked and size-capped."""
    output, meta = output_and_metadata(event.tool_name, event.tool_input, event.tool_response, event.error)
    # {"password": ...} by key name, then by shape; each long string cut to its masked head and tail first.
    tool_input = mask_structured(event.tool_input, max_chars=MAX_LENGTH)
    text_input = json.dumps(tool_input, ensure_ascii=False, default=str)
    if len(text_input) > MAX_LENGTH:  # a huge Write: keep the call, cap its input
        tool_input = {"truncated": truncate(text_input)}
    return {
        "toolName": event.tool_name,
        "toolInput": tool_input,
        "toolOutput": output,
        "durationMs": duration_ms,
        "success": event.succeeded,
        "errorMessage": mask_and_truncate(event.error) if event.error else None,
        "promptIndex": prompt_index,
        "toolIndex": tool_index,
        "metadata": meta,
    }


def embedding_text(obs: Mapping[str, Any]) -> str:
    """The text embedded for search: tool, file/command/pattern/URL, and the start of the output."""
    meta = obs.get("metadata") or {}
    parts = [f"Tool: {obs['toolName']}"]
    for key, label in (("filePath", "File"), ("command", "Command"), ("pattern", "Pattern"), ("url", "URL")):
        if meta.get(key):
            parts.append(f"{label}: {meta[key]}")
    parts.append(f"Result: {'Success' if obs['success'] else 'Failed'}")
    if obs.get("errorMessage"):
        parts.append(f"Error: {obs['errorMessage'][:300]}")
    parts.append(obs.get("toolOutput", "")[:500])
    return "\n".join(parts)
