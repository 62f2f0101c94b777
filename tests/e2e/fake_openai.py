"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (for Qwen Code's e2e test).

The script is decided from each request, not from a counter, so the CLI's side
requests (titles, suggestions: no ``tools``) never shift it:

- a request that offers tools and holds N tool results, N < len(calls): a call
  of ``tool`` with ``calls[N]`` as its arguments;
- any other request (every call made, or no tools offered): a final text.

Every request body is kept in :attr:`FakeOpenAI.requests` for the assertions.
Streaming (``"stream": true``) is answered as server-sent events.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import JsonHandler, LoopbackServer

FINAL_TEXT = "All done."


class FakeOpenAI(LoopbackServer):
    def __init__(self, tool: str, calls: list[dict[str, Any]]) -> None:
        self.tool, self.calls = tool, calls
        super().__init__(_handler)

    def reply_for(self, body: dict) -> dict:
        """The assistant message for ``body``: a tool call or the final text."""
        messages = body.get("messages") or []
        done = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")
        if body.get("tools") and done < len(self.calls):
            call = {
                "id": f"call_{done + 1}",
                "type": "function",
                "function": {"name": self.tool, "arguments": json.dumps(self.calls[done])},
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"role": "assistant", "content": FINAL_TEXT}

    def tool_results(self) -> list[str]:
        """The text of each tool result, in order, as the longest conversation the model was sent holds them."""
        out: list[str] = []
        for body in self.requests:
            messages = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool"]
            if len(messages) > len(out):
                out = [
                    m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                    for m in messages
                ]
        return out


def _chunks(message: dict, model: str) -> list[dict]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
    if message.get("tool_calls"):
        delta: dict[str, Any] = {
            "role": "assistant",
            "tool_calls": [{"index": i, **call} for i, call in enumerate(message["tool_calls"])],
        }
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": message["content"]}, "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {**base, "choices": [], "usage": usage},
    ]


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:  # /v1/models
            self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._json(400, {"error": {"message": "bad json"}})
                return
            if not self.path.endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            with fake._lock:
                fake.requests.append(body)
            message = fake.reply_for(body)
            model = str(body.get("model") or "fake-model")
            if body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for chunk in _chunks(message, model):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                return
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            self._json(
                200,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                },
            )

    return Handler
