"""A fake Anthropic Messages API that answers Claude Code from a script.

The test gives the turns the model "says" (text and tool_use blocks); every
request body is recorded, so a test can assert what reached the model: omcm's
injected context arrives as a ``<system-reminder>`` in the messages, a deny
reason as a ``tool_result``.

Only the main agent loop consumes the script. Claude Code also sends side
requests (a topic or title, a quota probe, a summary for compaction...): those
are told apart by :func:`is_main_loop` and get a harmless one-line answer.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Optional, Union

import attrs

MODEL = "claude-sonnet-4-5-20250929"
_ids = itertools.count(1)

Block = dict


@attrs.frozen
class Reply:
    """A scripted answer with more than blocks: ``input_tokens`` is the context size the API reports.

    Reporting a context near the model's window makes the client compact
    before its next request, as it would in a long session.
    """

    blocks: list
    input_tokens: Optional[int] = None


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
Turn = Union[list, Reply, Callable[[dict], Union[list, Reply]]]


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict, id: Optional[str] = None) -> Block:
    return {"type": "tool_use", "id": id or f"toolu_e2e{next(_ids):05d}", "name": name, "input": input}


def bash(command: str, id: Optional[str] = None) -> Block:
    return tool_use("Bash", {"command": command, "description": "run a command"}, id)


def read(path: str, id: Optional[str] = None) -> Block:
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

    def tool_results(self) -> dict:
        """tool_use_id -> (text of the result, is_error) for every tool_result in the messages."""
        found = {}
        for message in self.messages:
            for block in _blocks(message.get("content")):
                if block.get("type") == "tool_result":
                    found[block.get("tool_use_id")] = ("\n".join(_texts([block])), bool(block.get("is_error")))
        return found


_HOOK_CONTEXT = re.compile(r"(?P<label>[A-Za-z]+(?::\S+)?) hook additional context: (?P<body>.*?)(?=\S+ hook additional context: |\Z)", re.S)


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
    return not _is_compaction(body)


def _is_compaction(body: dict) -> bool:
    # The summary instruction rides in the last user message, possibly followed by system messages.
    tail = []
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        tail.extend(_texts(_blocks(message.get("content"))))
    return any(COMPACTION_MARK in piece for piece in tail)


#: The words of Claude Code's summary request (manual /compact and automatic compaction).
COMPACTION_MARK = "create a detailed summary of the conversation"


class FakeAnthropic:
    """The server: ``with FakeAnthropic(script) as api: ... api.base_url ... api.requests``."""

    def __init__(self, script: Iterable[Turn] = (), final_text: str = "Done."):
        self.script = list(script)
        self.final_text = final_text
        self.requests: list[Request] = []
        self.unknown_paths: list[str] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._served = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-anthropic", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def main_requests(self) -> list:
        return [r for r in self.requests if r.main_loop]

    @property
    def turns_served(self) -> int:
        """How many scripted turns were answered (the rest of the main loop got ``final_text``)."""
        return self._served

    def __enter__(self) -> "FakeAnthropic":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, method: str, path: str, headers: dict, body: Any) -> tuple[int, Any]:
        """(status, reply) for one request: a message dict, or a JSON body for other paths."""
        route = path.split("?", 1)[0]
        main = route == "/v1/messages" and is_main_loop(body)
        with self._lock:
            self.requests.append(Request(method, path, headers, body, main))
            if route == "/v1/messages/count_tokens":
                return 200, {"input_tokens": _estimate_tokens(body)}
            if route != "/v1/messages" or method != "POST":
                self.unknown_paths.append(f"{method} {path}")
                return 404, {"type": "error", "error": {"type": "not_found_error", "message": "fake: no such path"}}
            if not main:
                return 200, _message([text(self.final_text if not _is_compaction(body) else _SUMMARY)], body)
            turn = self.script[self._served] if self._served < len(self.script) else [text(self.final_text)]
            self._served += 1 if self._served < len(self.script) else 0
        reply = turn(body) if callable(turn) else turn
        if isinstance(reply, Reply):
            return 200, _message(reply.blocks, body, reply.input_tokens)
        return 200, _message(reply, body)


_SUMMARY = "<summary>The user asked for a scripted test session; nothing else happened.</summary>"


def _estimate_tokens(body: Any) -> int:
    return max(1, len(json.dumps(body)) // 4)


def _message(blocks: list, body: Any, input_tokens: Optional[int] = None) -> dict:
    stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    model = body.get("model") if isinstance(body, dict) else None
    return {
        "id": f"msg_e2e{next(_ids):05d}",
        "type": "message",
        "role": "assistant",
        "model": model or MODEL,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens or _estimate_tokens(body), "output_tokens": 10,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def sse_events(message: dict) -> Iterable[tuple[str, dict]]:
    """The Messages streaming events for a complete message, in the API's order."""
    head = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": head}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def _handler(api: FakeAnthropic):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # the test output stays readable
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in ("x-api-key", "authorization")}
            try:
                status, reply = api.answer(self.command, self.path, headers, body)
            except Exception as exc:  # a broken scripted turn: tell the client, keep the record
                api.errors.append(repr(exc))
                status, reply = 500, {"type": "error", "error": {"type": "api_error", "message": repr(exc)}}
            streaming = status == 200 and isinstance(body, dict) and body.get("stream") and reply.get("type") == "message"
            if streaming:
                data = "".join(f"event: {name}\ndata: {json.dumps(event)}\n\n" for name, event in sse_events(reply)).encode()
                kind = "text/event-stream"
            else:
                data, kind = json.dumps(reply).encode(), "application/json"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_e2e{next(_ids):05d}")
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_GET = do_PUT = do_DELETE = do_HEAD = _serve

    return Handler
