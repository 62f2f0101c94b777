"""A scripted Gemini API server on 127.0.0.1 (for Gemini CLI's e2e test; ``GOOGLE_GEMINI_BASE_URL``).

Gemini CLI calls ``POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`` for
the conversation and ``:generateContent`` for its side requests (the
next-speaker check, routing), and may ask ``:countTokens``. The script is
decided from each request, not from a counter, so side requests never shift it:

- a request that offers tools and holds N function responses, N < len(calls): a
  ``functionCall`` of ``tool`` with ``calls[N]`` as its arguments;
- a request that asks for JSON (``responseMimeType``): one small object that
  answers the router's classifier and the next-speaker check;
- any other request: the final text.

Every request body (with its path) is kept in :attr:`FakeGemini.requests`.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import JsonHandler, LoopbackServer

FINAL_TEXT = "All done."
USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


class FakeGemini(LoopbackServer):
    url_path = ""

    def __init__(self, tool: str, calls: list[dict[str, Any]]) -> None:
        self.tool, self.calls = tool, calls
        self.paths: list[str] = []
        super().__init__(_handler)

    def conversation(self) -> list[dict]:
        """The requests that offered tools (the agent's own turns, not side requests)."""
        return [r for r in self.requests if r.get("tools")]

    def reply_for(self, body: dict) -> dict:
        """The model's ``content`` for ``body``: a function call, a JSON answer or the final text."""
        done = len(function_responses(body))
        if body.get("tools") and done < len(self.calls):
            call = {"name": self.tool, "args": self.calls[done], "id": f"call_{done + 1}"}
            return {"role": "model", "parts": [{"functionCall": call}]}
        config = body.get("generationConfig") or body.get("config") or {}
        if "json" in str(config.get("responseMimeType", "")):
            # One object for every structured side request: the router's classifier, the next-speaker check.
            text = json.dumps(
                {
                    "reasoning": "the task is finished",
                    "next_speaker": "user",
                    "complexity_reasoning": "a scripted task",
                    "complexity_score": 1,
                }
            )
            return {"role": "model", "parts": [{"text": text}]}
        return {"role": "model", "parts": [{"text": FINAL_TEXT}]}

    def tool_results(self) -> list[str]:
        """Each function response, as JSON text, in order, as the longest conversation sent holds them."""
        out: list[str] = []
        for body in self.requests:
            found = function_responses(body)
            if len(found) > len(out):
                out = [json.dumps(r) for r in found]
        return out


def function_responses(body: dict) -> list[dict]:
    return [
        part["functionResponse"]
        for content in body.get("contents") or []
        if isinstance(content, dict)
        for part in content.get("parts") or []
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
    ]


def _handler(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:  # a model listing
            with fake._lock:
                fake.paths.append(f"GET {self.path}")
            self._json(200, {"models": [{"name": "models/gemini-2.5-flash"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._json(400, {"error": {"code": 400, "message": "bad json", "status": "INVALID_ARGUMENT"}})
                return
            path = self.path.split("?")[0]
            with fake._lock:
                fake.paths.append(f"POST {self.path}")
            if path.endswith(":countTokens"):
                self._json(200, {"totalTokens": 10})
                return
            if not (path.endswith(":streamGenerateContent") or path.endswith(":generateContent")):
                self._json(404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}})
                return
            with fake._lock:
                fake.requests.append(body)
            answer = {
                "candidates": [{"content": fake.reply_for(body), "finishReason": "STOP", "index": 0}],
                "usageMetadata": USAGE,
                "modelVersion": "gemini-2.5-flash",
            }
            if path.endswith(":generateContent"):
                self._json(200, answer)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(b"data: " + json.dumps(answer).encode() + b"\r\n\r\n")
            self.wfile.flush()

    return Handler
