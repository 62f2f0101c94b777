"""A fake model's HTTP server on 127.0.0.1, in a thread: what every fake API here has in common."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

Self = TypeVar("Self", bound="LoopbackServer")


class LoopbackServer:
    """Serves ``handler(self)`` on a free port of 127.0.0.1 while used as a context manager.

    ``requests`` collects what the fake was sent (under ``_lock``); ``base_url`` is what the agent's
    CLI is pointed at, with the API's path prefix (``url_path``).
    """

    url_path = "/v1"

    def __init__(self, handler: Callable[[Any], type[BaseHTTPRequestHandler]]) -> None:
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.url_path}"

    def __enter__(self: Self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class JsonHandler(BaseHTTPRequestHandler):
    """A fake API's request handler: quiet, with a JSON reply."""

    def log_message(self, *args: object) -> None:  # quiet: pytest shows the assertions
        pass

    def _json(self, status: int, data: dict) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
