"""Real Claude Code transcripts -> the hook payloads Claude Code would have sent.

A transcript is JSONL: assistant lines carry ``tool_use`` blocks, user lines
carry the matching ``tool_result`` blocks (``is_error`` for failures) and, in
the line's ``toolUseResult``, the structured tool response. For each tool call
this yields a PreToolUse payload, then a PostToolUse (with ``tool_response``)
or a PostToolUseFailure (with ``error``), with the transcript's session id,
cwd and tool_use_id. Used by tests, the demo and anyone who wants to feed past
sessions to their plugins.

Other agents' transcripts (docs/agents.md, "Per-agent state"): Qwen Code's
``transcript_path`` is a JSONL file of its own (``~/.qwen/projects/<project>/chats/<session>.jsonl``)
whose lines carry Gemini-style ``message.parts`` (``text``, ``functionCall``,
``functionResponse``); Codex CLI's is a rollout file (``~/.codex/sessions/…/rollout-*.jsonl``)
of ``response_item`` lines (``message``, ``function_call``, ``function_call_output``);
Gemini CLI 0.61's (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) has ``user``
and ``gemini`` lines (``content``, ``toolCalls``) between ``$set`` updates.
:func:`claude_entry` turns each into Claude's shape, so every reader (replay,
unreported tool calls, memory L1, persistent-mode's todo list) reads them; a
line of no known shape is of no type a reader takes, so plugins find nothing
there and do less (:data:`AGENT_TRANSCRIPTS` is what ``omcm doctor --agent X`` says).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

#: What omcm's transcript readers get from each agent's ``transcript_path`` (a doctor line per agent).
AGENT_TRANSCRIPTS = {
    "claude": "transcript read: memory L1, unreported tool calls and persistent-mode's todo list work",
    "qwen": "transcript read (~/.qwen/projects/…/chats/<session>.jsonl, converted line by line): memory L1 and "
    "persistent-mode's todo list (todo_write) work; unreported tool calls are not read (its hooks' call ids "
    "are not its transcript's)",
    "codex": "transcript read (~/.codex/sessions/…/rollout-*.jsonl, converted line by line): memory L1 and "
    "unreported tool calls work; persistent-mode continues no todo list (Codex keeps its plan out of the file)",
    "gemini": "transcript read (~/.gemini/tmp/<project>/chats/session-*.jsonl, converted line by line): memory L1 "
    "works; unreported tool calls are not read (Gemini's hooks carry no call id to tell a reported call from "
    "an unreported one); persistent-mode continues no todo list (Gemini CLI has no todo tool)",
}
#: Agents whose hooks carry no call id (Gemini CLI) or another than their transcript's (Qwen Code 0.24.4:
#: ``toolu_<ms>_<random>`` in the hook, ``call_N`` in the chat file): their transcripts cannot say which
#: calls no hook reported.
NO_CALL_IDS = ("gemini", "qwen")


def agent_without_call_ids(event: object) -> bool:
    """``event`` came from an agent in :data:`NO_CALL_IDS` (the edge names its sessions ``NAME:<id>``)."""
    extra = getattr(event, "extra", None) or {}
    session = getattr(event, "session_id", "") or ""
    return "agent_session_id" in extra and isinstance(session, str) and session.split(":", 1)[0] in NO_CALL_IDS


#: The session id prefix of a converted Qwen Code line: the dispatcher's edge names its sessions the same way.
QWEN_SESSION = "qwen:"


def claude_entry(entry: dict) -> dict:
    """A transcript line in Claude Code's shape: Qwen Code's (``message.parts``) converted, any other as it is.

    ``text`` parts become text blocks (a model's ``thought`` parts are left out),
    ``functionCall`` a ``tool_use``, ``functionResponse`` a ``tool_result`` (``is_error``
    when its response holds an ``error``); the role ``model`` is ``assistant``, the
    line type ``tool_result`` is ``user``; the session id gets the ``qwen:`` prefix.
    """
    if entry.get("type") == "response_item" and isinstance(entry.get("payload"), dict):
        return _codex_entry(entry)
    if entry.get("type") in ("gemini", "user") and "content" in entry and "message" not in entry:
        return _gemini_entry(entry)
    message = entry.get("message")
    if not isinstance(message, dict) or "content" in message or not isinstance(message.get("parts"), list):
        return entry
    blocks: list[dict] = []
    for part in message["parts"]:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and not part.get("thought"):
            blocks.append({"type": "text", "text": part["text"]})
        call, answer = part.get("functionCall"), part.get("functionResponse")
        if isinstance(call, dict):
            args = call.get("args")
            block = {"type": "tool_use", "id": call.get("id"), "name": str(call.get("name") or "")}
            blocks.append({**block, "input": args if isinstance(args, dict) else {}})
        if isinstance(answer, dict):
            response = answer.get("response")
            failed = isinstance(response, dict) and response.get("error") not in (None, "")
            text = _response_text(response)
            blocks.append({"type": "tool_result", "tool_use_id": answer.get("id"), "content": text, "is_error": failed})
    role = "assistant" if message.get("role") == "model" else "user"
    kind = role if entry.get("type") in ("user", "assistant", "tool_result") else entry.get("type")
    out = {**entry, "type": kind, "message": {"role": role, "content": blocks}}
    session = entry.get("sessionId")
    if isinstance(session, str) and session and not session.startswith(QWEN_SESSION):
        out["sessionId"] = QWEN_SESSION + session
    return out


#: Context Codex CLI (``<environment_context>``…) and Gemini CLI (``<session_context>``) write as a user's message.
_CODEX_INJECTED = re.compile(r"\A\s*<([a-z_]+)>.*</\1>\s*\Z", re.DOTALL)
_EXIT = re.compile(r"^Process exited with code ([0-9]+)$", re.MULTILINE)


#: How Codex CLI reports a call a PreToolUse hook denied, as the call's output (0.171).
_CODEX_BLOCKED = "Command blocked by PreToolUse hook"
#: Codex's shell function calls, which its hooks report as ``Bash`` with ``tool_input.command``.
_CODEX_SHELLS = ("exec_command", "shell", "local_shell")


def _codex_tool(name: str, args: dict) -> tuple[str, dict]:
    """A rollout's function call named as Codex's hooks name it: the shell is ``Bash`` with a ``command``,
    so a call the hooks reported and its transcript line are one call to the readers."""
    if name not in _CODEX_SHELLS:
        return name, args
    command = args.get("cmd", args.get("command"))
    if isinstance(command, list):  # the older `shell` tool: an argv
        command = " ".join(str(part) for part in command)
    return "Bash", {"command": command} if isinstance(command, str) else args


def _codex_entry(entry: dict) -> dict:
    """A Codex rollout ``response_item`` in Claude's shape: a message, a function call or its output.

    Other items (reasoning, session metadata, token counts, events) are left as they are, of no type a
    reader takes. A call's output ``is_error`` when it says the process exited with a code other than 0.
    """
    item = entry["payload"]
    kind, role = item.get("type"), "assistant"
    blocks: list[dict[str, Any]] = []
    if kind == "message" and item.get("role") in ("user", "assistant"):
        role = item["role"]
        for part in item.get("content") if isinstance(item.get("content"), list) else []:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and not (role == "user" and _CODEX_INJECTED.match(text)):
                blocks.append({"type": "text", "text": text})
        if not blocks:
            return entry
    elif kind in ("function_call", "custom_tool_call"):
        raw = item.get("arguments") if kind == "function_call" else item.get("input")
        try:
            args = json.loads(raw) if kind == "function_call" and isinstance(raw, str) else {"input": raw}
        except ValueError:
            args = {"arguments": raw}
        name, args = _codex_tool(str(item.get("name") or ""), args if isinstance(args, dict) else {"arguments": args})
        blocks.append({"type": "tool_use", "id": item.get("call_id"), "name": name, "input": args})
    elif kind in ("function_call_output", "custom_tool_call_output"):
        role, text = "user", _response_text(item.get("output"))
        code = _EXIT.search(text[:2000])
        failed = bool(code and code.group(1) != "0") or text.startswith(_CODEX_BLOCKED)
        blocks.append({"type": "tool_result", "tool_use_id": item.get("call_id"), "content": text, "is_error": failed})
    else:
        return entry
    return {"type": role, "timestamp": entry.get("timestamp"), "message": {"role": role, "content": blocks}}


def _gemini_entry(entry: dict) -> dict:
    """A Gemini CLI chat line in Claude's shape: ``gemini`` (text, ``toolCalls``) or ``user`` (text, results).

    Gemini CLI appends a model message again when its tool calls are known (same ``id``): the
    readers pair calls by id, so the repeat adds nothing. Its injected ``<session_context>`` is no prompt.
    """
    content, calls = entry.get("content"), entry.get("toolCalls")
    blocks: list[dict[str, Any]] = []
    if entry["type"] == "gemini":
        role = "assistant"
        if isinstance(content, str) and content:
            blocks.append({"type": "text", "text": content})
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                args = call.get("args")
                block: dict[str, Any] = {"type": "tool_use", "id": call.get("id"), "name": str(call.get("name") or "")}
                blocks.append({**block, "input": args if isinstance(args, dict) else {}})
    else:
        parts = [{"text": content}] if isinstance(content, str) else content if isinstance(content, list) else []
        role, blocks = "user", claude_entry({"message": {"role": "user", "parts": parts}})["message"]["content"]
        blocks = [b for b in blocks if not (b["type"] == "text" and _CODEX_INJECTED.match(b["text"]))]
    if not blocks:
        return entry
    return {"type": role, "timestamp": entry.get("timestamp"), "message": {"role": role, "content": blocks}}


def _response_text(response: Any) -> str:
    if isinstance(response, dict):
        for key in ("error", "output", "llmContent", "content"):
            if isinstance(response.get(key), str):
                return response[key]
    if isinstance(response, str):
        return response
    return json.dumps(response, ensure_ascii=False, default=str)[:100_000]


def message_blocks(message: Any) -> list[dict]:
    """The content blocks (text, tool_use, tool_result...) of a transcript entry's ``message``."""
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def result_text(block: dict) -> str:
    """A ``tool_result`` block's text, whether its content is a string or a list of parts."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _base(entry: dict, session_id: str | None, transcript: Path, event: str) -> dict[str, Any]:
    payload = {
        "session_id": entry.get("sessionId") or session_id or transcript.stem,
        "transcript_path": str(transcript),
        "cwd": entry.get("cwd") or "",
        "hook_event_name": event,
    }
    mode = entry.get("permissionMode")
    if isinstance(mode, str):
        payload["permission_mode"] = mode
    if entry.get("agentId"):
        payload["agent_id"] = entry["agentId"]
    return payload


def read_jsonl(source: Path | BinaryIO, max_bytes: int | None = None) -> Iterator[dict]:
    """The JSON objects of a JSONL file, one per line, in file order; other and damaged lines are skipped.

    ``source`` is a path, or a binary file the caller opened (and closes): a
    file in an untrusted project is opened with ``files.open_confined`` first.
    With ``max_bytes`` only the file's last ``max_bytes`` are read, less the
    line the window cuts (logs and transcripts grow without bound). ``OSError``
    from opening the file reaches the caller.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as fh:
            yield from _jsonl_lines(fh, max_bytes)
    else:
        yield from _jsonl_lines(source, max_bytes)


def _jsonl_lines(fh: BinaryIO, max_bytes: int | None) -> Iterator[dict]:
    if max_bytes is not None:
        start = max(0, fh.seek(0, 2) - max_bytes)
        fh.seek(max(0, start - 1))
        if start and fh.read(1) != b"\n":
            fh.readline()  # the rest of the cut line
    for raw in fh:
        try:
            entry = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry


def transcript_entries(path: Path) -> Iterator[dict]:
    """The JSON objects of a transcript, one per line, in Claude Code's shape; damaged lines are skipped."""
    return (claude_entry(entry) for entry in read_jsonl(path))


def replay_transcript(path: Path, session_id: str | None = None) -> Iterator[dict[str, Any]]:
    """Yield hook payloads in transcript order. Unreadable lines are skipped."""
    path = Path(path)
    pending: dict[Any, tuple[dict, dict]] = {}  # tool_use_id (any JSON value) -> (tool_use block, its line)
    for entry in transcript_entries(path):
        kind = entry.get("type")
        if kind == "assistant":
            for block in message_blocks(entry.get("message")):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    pending[block["id"]] = (block, entry)
                    payload = _base(entry, session_id, path, "PreToolUse")
                    payload.update(
                        tool_name=str(block.get("name", "")),
                        tool_input=block.get("input") if isinstance(block.get("input"), dict) else {},
                        tool_use_id=block["id"],
                    )
                    yield payload
        elif kind == "user":
            for block in message_blocks(entry.get("message")):
                if block.get("type") != "tool_result":
                    continue
                use = pending.pop(block.get("tool_use_id"), None)
                if use is None:
                    continue
                tool_use, _ = use
                failed = bool(block.get("is_error"))
                payload = _base(entry, session_id, path, "PostToolUseFailure" if failed else "PostToolUse")
                payload.update(
                    tool_name=str(tool_use.get("name", "")),
                    tool_input=tool_use.get("input") if isinstance(tool_use.get("input"), dict) else {},
                    tool_use_id=tool_use["id"],
                )
                if failed:
                    payload["error"] = result_text(block)
                    payload["is_interrupt"] = False
                else:
                    response = entry.get("toolUseResult")
                    payload["tool_response"] = response if response is not None else result_text(block)
                yield payload


def failed_results(path: Path) -> int:
    """How many tool results in the transcript are errors (for checking a replay)."""
    count = 0
    for payload in replay_transcript(path):
        count += payload["hook_event_name"] == "PostToolUseFailure"
    return count
