"""The vocabulary of the fake API: scripted blocks and turns, and the recorded requests.

A script is a list of turns; a turn is the list of content blocks the model
answers with (``[text("ok"), bash("ls")]``), a :class:`Reply`, or a function of
the request body returning either.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any, Union

import attrs

_ids = itertools.count(1)


def next_id() -> int:
    return next(_ids)


Block = dict


@attrs.frozen
class Reply:
    """A scripted answer with more than blocks: ``input_tokens`` is the context size the API reports.

    Reporting a context near the model's window makes the client compact
    before its next request, as it would in a long session.
    """

    blocks: list
    input_tokens: int | None = None


#: A context size above the client's automatic compaction threshold (967,000
#: of a 980,000-token window in 2.1.330).
NEAR_FULL_CONTEXT = 975_000


def compact_after(blocks: list) -> Reply:
    """Answer ``blocks`` and report a nearly full context: the client compacts before its next request.

    The client refuses to compact fewer than three exchanges ("too_few_groups"),
    so give this turn after at least two others.
    """
    return Reply(blocks, input_tokens=NEAR_FULL_CONTEXT)


#: A scripted turn: the blocks the model answers with, a :class:`Reply`, or a
#: function of the request (its JSON body) returning either, to answer from what it sees.
Turn = Union[list, Reply, Callable[[dict], list | Reply]]  # noqa: UP007  (evaluated at import time)


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict, id: str | None = None) -> Block:
    return {"type": "tool_use", "id": id or f"toolu_e2e{next_id():05d}", "name": name, "input": input}


def bash(command: str, id: str | None = None) -> Block:
    return tool_use("Bash", {"command": command, "description": "run a command"}, id)


def read(path: str, id: str | None = None) -> Block:
    return tool_use("Read", {"file_path": str(path)}, id)


@attrs.frozen
class Request:
    """One request Claude Code sent: its path, headers and JSON body."""

    method: str
    path: str
    headers: dict
    body: Any
    main_loop: bool

    @property
    def messages(self) -> list:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    def all_text(self) -> str:
        """Every piece of text in the messages (text blocks, tool results), for asserting on context."""
        return "\n".join(_texts(self.messages))

    def system_text(self) -> str:
        system = self.body.get("system", "") if isinstance(self.body, dict) else ""
        return system if isinstance(system, str) else "\n".join(_texts(system))

    def hook_contexts(self, hook: str = "") -> list[str]:
        """Hook context the client put in the messages, newest last, for hooks whose label starts with ``hook``.

        Claude Code 2.1.330 sends it as a system message starting
        ``PreToolUse:Read hook additional context: ...`` (SessionStart's context
        shares its block with the environment text that follows).
        """
        found = []
        for piece in _texts(self.messages):
            for match in _HOOK_CONTEXT.finditer(piece):
                if match["label"].startswith(hook):
                    found.append(match["body"])
        return found

    def stop_feedback(self) -> list[str]:
        """The reasons of Stop hooks that blocked, oldest first, as the client put them in the conversation.

        Claude Code 2.1.330 sends a blocked Stop's reason as a user message
        ``Stop hook feedback:\n<reason>`` (and repeats it in a system message
        ``Stop hook blocking error from command: ...``, not returned here);
        2.1.332 wraps the same lines in ``<system-reminder>`` after a paragraph
        on how to treat hook output.
        """
        return [text for kind, text in self._stop_pieces() if kind == "block"]

    def stop_context(self) -> list[str]:
        """The ``additionalContext`` of Stop hooks that continued with context (client 2.1.163+), oldest first.

        Both 2.1.330 and 2.1.332 send it as a user message
        ``<system-reminder>\nStop hook additional context: <text>\n</system-reminder>``
        (no hook-output preamble, no system-message copy).
        """
        return [text for kind, text in self._stop_pieces() if kind == "context"]

    def continuations(self) -> list[str]:
        """Every Stop continuation the model got, oldest first, whichever form: block reasons and context."""
        return [text for _, text in self._stop_pieces()]

    def _stop_pieces(self) -> list[tuple[str, str]]:
        found = []
        for message in self.messages:
            if message.get("role") != "user":
                continue
            for piece in _texts(_blocks(message.get("content"))):
                if piece.startswith(STOP_FEEDBACK):
                    found.append(("block", piece[len(STOP_FEEDBACK) :]))
                elif piece.startswith(_REMINDER_OPEN) and "\n" + STOP_FEEDBACK in piece:
                    body = piece.split("\n" + STOP_FEEDBACK, 1)[1]
                    found.append(("block", body.removesuffix(_REMINDER_CLOSE)))
                elif piece.startswith(_REMINDER_OPEN + STOP_CONTEXT):
                    body = piece[len(_REMINDER_OPEN + STOP_CONTEXT) :].removesuffix(_REMINDER_CLOSE)
                    found.append(("context", body))
        return found

    def tool_results(self) -> dict:
        """tool_use_id -> (text of the result, is_error) for every tool_result in the messages."""
        found = {}
        for message in self.messages:
            for block in _blocks(message.get("content")):
                if block.get("type") == "tool_result":
                    found[block.get("tool_use_id")] = ("\n".join(_texts([block])), bool(block.get("is_error")))
        return found


#: How the client introduces a blocked Stop's reason in the next request.
STOP_FEEDBACK = "Stop hook feedback:\n"
#: How it introduces a Stop hook's additionalContext (a continuation without a block).
STOP_CONTEXT = "Stop hook additional context: "
_REMINDER_OPEN, _REMINDER_CLOSE = "<system-reminder>\n", "\n</system-reminder>"

_HOOK_CONTEXT = re.compile(
    r"(?P<label>[A-Za-z]+(?::\S+)?) hook additional context: (?P<body>.*?)(?=\S+ hook additional context: |\Z)", re.S
)


def _blocks(content) -> list:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _texts(items: Iterable) -> Iterable[str]:
    for item in items:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            yield item["text"]
        content = item.get("content")
        if isinstance(content, (str, list)):
            yield from _texts(_blocks(content))


def is_main_loop(body: Any) -> bool:
    """Whether a /v1/messages body is the agent loop (it offers the tools) rather than a side request.

    Title, topic and quota requests offer no tools. Compaction's summary
    request is answered as a side request too: it asks for a summary and the
    script should not have to know when the client decides to compact.
    """
    if not isinstance(body, dict):
        return False
    names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Bash" not in names and "Read" not in names:
        return False
    return not is_compaction(body)


def is_compaction(body: Any) -> bool:
    # The summary instruction rides in the last user message, possibly followed by system messages.
    if not isinstance(body, dict):
        return False
    tail = []
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        tail.extend(_texts(_blocks(message.get("content"))))
    return any(COMPACTION_MARK in piece for piece in tail)


#: The words of Claude Code's summary request (manual /compact and automatic compaction).
COMPACTION_MARK = "create a detailed summary of the conversation"
