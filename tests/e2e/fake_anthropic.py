"""A fake Anthropic Messages API that answers Claude Code from a script.

The test gives the turns the model "says" (text and tool_use blocks, built
with the helpers of api_messages.py, re-exported here); every request is
recorded, so a test can assert what reached the model: omcm's injected context
arrives as a system message in the messages, a deny reason as a ``tool_result``.

Only the main agent loop consumes the script. Claude Code also sends side
requests (a title, a quota probe, a summary for compaction...): those are told
apart by :func:`is_main_loop` and get a harmless answer. A subagent offers
tools too, so its requests consume the script like the main loop's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from api_messages import (  # noqa: F401  (re-exported: tests build their scripts from here)
    COMPACTION_MARK,
    NEAR_FULL_CONTEXT,
    Reply,
    Request,
    Turn,
    bash,
    compact_after,
    is_compaction,
    is_main_loop,
    next_id,
    read,
    text,
    tool_use,
)

MODEL = "claude-sonnet-4-5-20250929"


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

    def __enter__(self) -> FakeAnthropic:
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
            if route == "/api/hello":  # the client's reachability probe (with non-essential traffic on)
                return 200, {}
            if route != "/v1/messages" or method != "POST":
                self.unknown_paths.append(f"{method} {path}")
                return 404, {"type": "error", "error": {"type": "not_found_error", "message": "fake: no such path"}}
            if not main:
                return 200, _message([text(self.final_text if not is_compaction(body) else _SUMMARY)], body)
            if self._served < len(self.script):
                turn = self.script[self._served]
                self._served += 1
            else:
                turn = [text(self.final_text)]
        reply = turn(body) if callable(turn) else turn
        if isinstance(reply, Reply):
            return 200, _message(reply.blocks, body, reply.input_tokens)
        return 200, _message(reply, body)


_SUMMARY = "<summary>The user asked for a scripted test session; nothing else happened.</summary>"


def _estimate_tokens(body: Any) -> int:
    return max(1, len(json.dumps(body)) // 4)


def _message(blocks: list, body: Any, input_tokens: int | None = None) -> dict:
    stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    model = body.get("model") if isinstance(body, dict) else None
    return {
        "id": f"msg_e2e{next_id():05d}",
        "type": "message",
        "role": "assistant",
        "model": model or MODEL,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens or _estimate_tokens(body),
            "output_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def sse_events(message: dict) -> Iterable[tuple[str, dict]]:
    """The Messages streaming events for a complete message, in the API's order."""
    head = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": head}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
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
            streaming = (
                status == 200 and isinstance(body, dict) and body.get("stream") and reply.get("type") == "message"
            )
            if streaming:
                data = "".join(
                    f"event: {name}\ndata: {json.dumps(event)}\n\n" for name, event in sse_events(reply)
                ).encode()
                kind = "text/event-stream"
            else:
                data, kind = json.dumps(reply).encode(), "application/json"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_e2e{next_id():05d}")
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_GET = do_PUT = do_DELETE = do_HEAD = _serve

    return Handler
