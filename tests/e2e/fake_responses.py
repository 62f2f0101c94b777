"""A scripted OpenAI Responses API server on 127.0.0.1 (for Codex CLI's e2e test), streaming server-sent events.

The script is decided from each request, not from a counter, so a side request
never shifts it: a request that offers tools and holds N tool results
(``function_call_output`` items), N < len(commands), is answered with a call of
the shell tool Codex offered running ``commands[N]``; any other with a final text.
Every request body is kept in :attr:`FakeResponses.requests` for the assertions.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import JsonHandler, LoopbackServer

FINAL_TEXT = "All done."
#: Codex's shell tools by name -> how the command goes into its arguments.
_SHELL_TOOLS = {
    "exec_command": lambda cmd: {"cmd": cmd},
    "shell_command": lambda cmd: {"command": cmd},
    "shell": lambda cmd: {"command": ["bash", "-lc", cmd]},
}


def tool_names(body: dict) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")]


def outputs(body: dict) -> list[str]:
    """The text of each tool result the request carries, in order."""
    found = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            out = item.get("output")
            found.append(out if isinstance(out, str) else json.dumps(out))
    return found


class FakeResponses(LoopbackServer):
    def __init__(self, commands: list[str]) -> None:
        self.commands = commands
        super().__init__(_handler)

    def item_for(self, body: dict) -> dict:
        """The output item answering ``body``: a shell call or the final message."""
        done = len(outputs(body))
        tool = next((name for name in _SHELL_TOOLS if name in tool_names(body)), None)
        if tool is not None and done < len(self.commands):
            return {
                "type": "function_call",
                "id": f"fc_{done + 1}",
                "call_id": f"call_{done + 1}",
                "name": tool,
                "arguments": json.dumps(_SHELL_TOOLS[tool](self.commands[done])),
            }
        return {
            "type": "message",
            "id": "msg_final",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}],
        }

    def tool_results(self) -> list[str]:
        """The tool results as the longest conversation the model was sent holds them."""
        return max((outputs(b) for b in self.requests), key=len, default=[])


def _events(item: dict, n: int) -> list[dict]:
    response = {"id": f"resp_{n}", "object": "response", "status": "in_progress", "output": []}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    events.append({"type": "response.output_item.added", "output_index": 0, "item": item})
    if item["type"] == "message":
        text = item["content"][0]["text"]
        events.append({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "delta": text})
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    done = {**response, "status": "completed", "output": [item], "usage": usage}
    events.append({"type": "response.completed", "response": done})
    return events


def _handler(fake: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # /v1/models
            self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            if (self.headers.get("Content-Encoding") or "").lower() == "zstd":
                self._json(400, {"error": {"message": "zstd request bodies are not supported by the fake"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._json(400, {"error": {"message": "bad json"}})
                return
            if not self.path.endswith("/responses"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            with fake._lock:
                fake.requests.append(body)
                n = len(fake.requests)
            item = fake.item_for(body)
            payload = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in _events(item, n))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

    return Handler
