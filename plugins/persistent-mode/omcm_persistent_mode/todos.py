"""The todo list and the last assistant text, as Claude Code records them in the transcript. No I/O.

Claude Code keeps two kinds of todo list, both visible only in the transcript:

- ``TodoWrite``: every call carries the whole list,
  ``{"todos": [{"content", "status", "activeForm"}]}``; the latest call is the list.
- The task tools (Claude Code 2.1): ``TaskCreate`` ``{"subject", "description",
  "activeForm"}`` whose result names the id (``toolUseResult.task.id``, or the
  text ``Task #N created``), and ``TaskUpdate`` ``{"taskId", "status"}``. A
  TaskCreate is a pending task before its result is written (that line often
  comes after the Stop); an update finds its task by id, subject or order.

Whichever kind was used last is the list. Lines of subagents (``isSidechain``)
are skipped: their todos are not the session's. Only lines that can matter are
decoded, so a long transcript stays cheap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from attrs import frozen

from omcm_core.transcripts import claude_entry  # Qwen Code's lines in Claude's shape

#: The todo tools: Claude Code's, and Qwen Code's (the same ``{"todos": [{"content", "status"}]}`` input).
_TODO_TOOLS = ("TodoWrite", "todo_write")

DONE = ("completed", "done", "cancelled", "deleted")
_CREATED = re.compile(r"Task #(\w+) created")
_INTERESTING = (b"TodoWrite", b"todo_write", b"TaskCreate", b"TaskUpdate", b"Task #", b"is_error")


@frozen
class Todo:
    content: str
    status: str

    @property
    def done(self) -> bool:
        return self.status in DONE


@frozen
class TodoList:
    items: tuple

    @property
    def completed(self) -> int:
        return sum(1 for t in self.items if t.done)

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def pending(self) -> int:
        return self.total - self.completed

    def next_task(self) -> str | None:
        """The task in progress, else the first pending one."""
        for wanted in ("in_progress", None):
            for todo in self.items:
                if not todo.done and (wanted is None or todo.status == wanted):
                    return todo.content
        return None


def _records(lines: Iterable[bytes]) -> Iterable[dict]:
    for line in lines:
        if not any(marker in line for marker in _INTERESTING):
            continue
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(record, dict) and not record.get("isSidechain"):
            yield claude_entry(record)


def _blocks(record: dict) -> list:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _todowrite(payload: Any) -> tuple | None:
    todos = payload.get("todos") if isinstance(payload, dict) else None
    if not isinstance(todos, list):
        return None
    items = []
    for todo in todos:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str):
            items.append(Todo(todo["content"], str(todo.get("status") or "pending")))
    return tuple(items)


class _Task:
    """One task of the task tools' list; ``task_id`` stays None until a result or an update names it."""

    def __init__(self, subject: str, task_id: str | None = None, status: str = "pending") -> None:
        self.subject, self.task_id, self.status = subject, task_id, status


class _Tasks:
    """The task tools' list, rebuilt from TaskCreate calls (and their results) and TaskUpdate calls.

    The client writes a TaskCreate's result line late (often after the Stop), so
    a TaskCreate counts as a pending task at once. A TaskUpdate finds its task by
    id, else by subject, else by order (the client numbers tasks 1, 2, 3...).
    """

    def __init__(self) -> None:
        self.items: list[_Task] = []
        self.by_call: dict[str, _Task] = {}  # TaskCreate tool_use id -> its task, until the result names the id
        self.updates: dict[str, tuple] = {}  # TaskUpdate tool_use id -> (task, status before), until its result
        self.seen: set = set()  # the client may write one tool call on two lines

    def _find(self, task_id: str, subject: str | None) -> _Task | None:
        for task in self.items:
            if task.task_id == task_id:
                return task
        unnamed = [t for t in self.items if t.task_id is None]
        if subject:
            for task in unnamed:
                if task.subject == subject:
                    return task
        if task_id.isdigit() and 0 < int(task_id) <= len(self.items):
            task = self.items[int(task_id) - 1]
            if task.task_id is None:
                return task
        return None

    def tool_use(self, block: dict) -> None:
        call = str(block.get("id"))
        if call in self.seen:
            return
        self.seen.add(call)
        payload = block.get("input") if isinstance(block.get("input"), dict) else {}
        if block.get("name") == "TaskCreate":
            task = _Task(str(payload.get("subject") or payload.get("description") or "task"))
            self.items.append(task)
            self.by_call[str(block.get("id"))] = task
        elif block.get("name") == "TaskUpdate" and payload.get("taskId") is not None:
            task_id = str(payload["taskId"])
            subject = payload.get("subject") if isinstance(payload.get("subject"), str) else None
            task = self._find(task_id, subject)
            if task is None:
                task = _Task(subject or f"task #{task_id}")
                self.items.append(task)
            self.updates[call] = (task, task.status)
            task.task_id = task_id
            if subject:
                task.subject = subject
            if payload.get("status"):
                task.status = str(payload["status"])

    def result(self, record: dict, block: dict) -> None:
        call = str(block.get("tool_use_id"))
        failed = block.get("is_error") is True  # e.g. "No such tool available": nothing was created or changed
        update = self.updates.pop(call, None)
        if update is not None and failed:
            update[0].status = update[1]
        task = self.by_call.pop(call, None)
        if task is not None and failed:
            self.items.remove(task)
            return
        if task is None or task.task_id is not None:
            return
        extra = record.get("toolUseResult")
        found = extra.get("task") if isinstance(extra, dict) else None
        task_id = found.get("id") if isinstance(found, dict) else None
        if task_id is None:
            text = block.get("content") if isinstance(block.get("content"), str) else json.dumps(block.get("content"))
            match = _CREATED.search(text or "")
            task_id = match.group(1) if match else None
        if task_id is not None:
            task.task_id = str(task_id)

    def todos(self) -> tuple:
        return tuple(Todo(t.subject, t.status) for t in self.items if t.status != "deleted")


def extract(lines: Iterable[bytes]) -> TodoList | None:
    """The session's current todo list, or None when the transcript shows none."""
    latest_write: tuple | None = None
    tasks = _Tasks()
    write_at = tasks_at = -1
    for index, record in enumerate(_records(lines)):
        for block in _blocks(record):
            kind = block.get("type")
            if kind == "tool_use" and block.get("name") in _TODO_TOOLS:
                found = _todowrite(block.get("input"))
                if found is not None:
                    latest_write, write_at = found, index
            elif kind == "tool_use" and block.get("name") in ("TaskCreate", "TaskUpdate"):
                tasks.tool_use(block)
                tasks_at = index
            elif kind == "tool_result":
                tasks.result(record, block)
    if tasks_at > write_at and tasks.todos():
        return TodoList(tasks.todos())
    if latest_write is not None:
        return TodoList(latest_write)
    return None


def last_assistant_text(lines: list) -> str | None:
    """The text of the newest main-thread assistant message (the transcript may lag the Stop)."""
    for line in reversed(lines):
        if b'"assistant"' not in line or b'"text"' not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(record, dict) or record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        record = claude_entry(record)
        texts = [b.get("text") for b in _blocks(record) if b.get("type") == "text" and isinstance(b.get("text"), str)]
        if texts:
            return "\n".join(texts)
    return None


def api_error(lines: list) -> dict | None:
    """The turn's API error when the newest main-thread assistant line is one, else None.

    Claude Code records a failed request as a synthetic assistant message with
    ``isApiErrorMessage: true``; in ``-p`` it may exit before a StopFailure hook
    has run, so this line is the only trace. Returns ``{"key", "error", "at"}``.
    """
    for line in reversed(lines):
        if b'"assistant"' not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(record, dict) or record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        record = claude_entry(record)
        if record.get("isApiErrorMessage") is not True:
            return None
        texts = [b.get("text") for b in _blocks(record) if isinstance(b.get("text"), str)]
        error = record.get("error") if isinstance(record.get("error"), str) else " ".join(texts)
        key = record.get("uuid") if isinstance(record.get("uuid"), str) else str(record.get("timestamp"))
        at = record.get("timestamp") if isinstance(record.get("timestamp"), str) else "?"
        return {"key": key[:100], "error": (error or "unknown")[:100], "at": at[:40]}
    return None


_VERSION = re.compile(r"\d{1,4}\.\d{1,4}\.\d{1,6}")
#: Lines decoded, newest first, before the version is given up as unknown.
_VERSION_LINES = 20


def client_version(lines: list) -> str | None:
    """The Claude Code version that wrote the newest transcript line naming one (its top-level ``version``).

    Only the client writes top-level keys; a tool's output sits inside a string
    or under ``toolUseResult``, so it cannot pose as the client. None when unknown.
    """
    tried = 0
    for line in reversed(lines):
        if b'"version"' not in line:
            continue
        tried += 1
        if tried > _VERSION_LINES:
            break
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        version = record.get("version") if isinstance(record, dict) else None
        if isinstance(version, str) and _VERSION.fullmatch(version):
            return version
    return None
