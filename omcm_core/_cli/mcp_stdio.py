"""``omcm mcp``'s stdio loop: JSON-RPC 2.0, one message per line, the subset of MCP a tool server needs.

Claude Code starts this server with the session and waits for ``initialize``
and ``tools/list`` before its first model request, so both are answered from
the standard library alone: the handshake is constant and the tool list comes
from :mod:`omcm_core._cli.mcp_cache`. The plugins and the MCP SDK (which
validates arguments and runs the tools) are loaded in a background thread
shortly after the list is served, or by the first ``tools/call`` if it comes
sooner; when the loaded list differs from the one served, the cache is
rewritten and the client told (``notifications/tools/list_changed``).

Tool calls run one at a time on a worker thread, so ``ping`` is answered
while a search runs. The process exits at once when stdin closes or on
SIGINT (the client's way to stop a stdio server), whatever a tool is doing:
the tools only read.
"""

from __future__ import annotations

import json
import os
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from omcm_core._cli.invocation import Invocation

#: Protocol revisions reachable through ``initialize`` (the SDK's HANDSHAKE_PROTOCOL_VERSIONS, mcp 2.3).
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
INSTRUCTIONS = (
    "omcm's memory of this project: past tool calls, learned mistakes, memory archives, the notepad. "
    "Search first (short hits), then get one by id."
)
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
#: Seconds after ``tools/list`` before the plugins are loaded in the background (the client is busy starting).
WARM_DELAY_S = 2.0
_MAX_LINE = 16 << 20


def initialize_result(params: Any) -> dict:
    """The handshake answer: the client's revision when we speak it, else our newest (the client then decides)."""
    from omcm_core import __version__

    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    return {
        "protocolVersion": requested if requested in VERSIONS else VERSIONS[-1],
        "capabilities": {"tools": {"listChanged": True}},
        "serverInfo": {"name": "omcm", "version": __version__},
        "instructions": INSTRUCTIONS,
    }


class Server:
    """One session: the output stream, the remembered tool list and the lazily loaded tools."""

    def __init__(self, inv: Invocation, out: Any) -> None:
        self.inv = inv
        self.out = out
        self._write_lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._loaded: Any = None
        self._served: list | None = None
        self._cache: tuple | None = None  # (path, key)
        self._cancelled: set = set()
        self._calls: list = []
        self._calls_ready = threading.Condition()
        self._initialized = False
        self._warm_started = False

    # -- output -------------------------------------------------------------
    def send(self, message: dict) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        with self._write_lock:
            try:
                self.out.write(data + b"\n")
                self.out.flush()
            except (OSError, ValueError):  # the client closed our stdout: it is gone
                os._exit(0)

    def reply(self, ident: Any, result: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "result": result})

    def error(self, ident: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})

    # -- the tools ----------------------------------------------------------
    def _cache_place(self) -> tuple:
        if self._cache is None:
            from omcm_core._cli import mcp_cache

            self._cache = (
                mcp_cache.path_for(self.inv.home, self.inv.env, self.inv.cwd),
                mcp_cache.key(self.inv.env, self.inv.cwd, self.inv.home),
            )
        return self._cache

    def loaded(self) -> Any:
        """The plugins and the SDK, loaded once; the cache rewritten and the client told if the list changed."""
        with self._load_lock:
            if self._loaded is None:
                from omcm_core._cli import mcp, mcp_cache

                self._loaded = mcp.Loaded(self.inv)
                path, key = self._cache_place()
                if self._served != self._loaded.tools:
                    mcp_cache.write(path, key, self._loaded.tools, self._loaded.checks)
                    stale, self._served = self._served is not None, self._loaded.tools
                    if stale and self._initialized:  # the list served came from a cache this key did not catch
                        self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return self._loaded

    def tools(self) -> list:
        if self._served is None:
            from omcm_core._cli import mcp_cache

            path, key = self._cache_place()
            self._served = mcp_cache.read(path, key)
            if self._served is None:
                self._served = self.loaded().tools
        return self._served

    def _warm(self) -> None:
        import time

        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)  # this thread only (Linux)
        except (AttributeError, OSError):
            pass
        time.sleep(WARM_DELAY_S)
        try:
            self.loaded()
        except Exception as exc:  # the first tool call will report it
            print(f"omcm mcp: loading the tools failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    # -- tool calls, one at a time on a worker ------------------------------
    def _work(self) -> None:
        while True:
            with self._calls_ready:
                while not self._calls:
                    self._calls_ready.wait()
                ident, params = self._calls.pop(0)
            try:
                result = self.loaded().call(params["name"], params.get("arguments") or {})
            except Exception as exc:
                code = getattr(exc, "code", None)
                message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
                if ident not in self._cancelled:
                    self.error(ident, code if isinstance(code, int) else INTERNAL_ERROR, str(message))
                continue
            if ident not in self._cancelled:  # the client gave up on it: no answer (as the spec asks)
                self.reply(ident, result)

    def queue_call(self, ident: Any, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("name"), str):
            self.error(ident, INVALID_PARAMS, "tools/call needs params.name")
            return
        if params.get("arguments") is not None and not isinstance(params["arguments"], dict):
            self.error(ident, INVALID_PARAMS, "tools/call params.arguments must be an object")
            return
        with self._calls_ready:
            self._calls.append((ident, params))
            self._calls_ready.notify()

    # -- dispatch -----------------------------------------------------------
    def handle(self, message: Any) -> None:
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(message.get("method"), str)
        ):
            if isinstance(message, dict) and ("result" in message or "error" in message):
                return  # an answer to a request we never send
            self.error(message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST, "invalid request")
            return
        method, params = message["method"], message.get("params")
        if "id" not in message:  # a notification: never answered
            if method == "notifications/initialized":
                self._initialized = True
            elif method == "notifications/cancelled" and isinstance(params, dict):
                self._cancelled.add(params.get("requestId"))
            return
        ident = message["id"]
        if method == "initialize":
            self.reply(ident, initialize_result(params))
        elif method == "ping":
            self.reply(ident, {})
        elif method == "tools/list":
            try:
                self.reply(ident, {"tools": self.tools()})
            except Exception as exc:
                self.error(ident, INTERNAL_ERROR, f"omcm could not list its tools: {type(exc).__name__}: {exc}")
                return
            if not self._warm_started:
                self._warm_started = True
                threading.Thread(target=self._warm, name="omcm-mcp-warm", daemon=True).start()
        elif method == "tools/call":
            self.queue_call(ident, params)
        else:
            self.error(ident, METHOD_NOT_FOUND, f"method not found: {method}")

    def start(self) -> None:
        threading.Thread(target=self._work, name="omcm-mcp-call", daemon=True).start()


def read_messages(stream: Any):
    """(message or None for a parse error) per line; ends when stdin closes. A line past 16 MB is a parse error."""
    while True:
        line = stream.readline(_MAX_LINE)
        if not line:
            return
        if len(line) == _MAX_LINE and not line.endswith(b"\n"):
            while (rest := stream.readline(_MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            yield None
            continue
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except ValueError:
            yield None


def serve(inv: Invocation, stdin: Any = None, stdout: Any = None) -> int:
    """Serve until stdin closes or SIGINT; exits the process at once (see the module's docstring)."""
    import signal

    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(0))
    server = Server(inv, stdout or sys.stdout.buffer)
    server.start()
    for message in read_messages(stdin or sys.stdin.buffer):
        if message is None:
            server.error(None, PARSE_ERROR, "parse error")
        elif isinstance(message, list):  # a JSON-RPC batch (protocol 2025-03-26)
            for item in message or [None]:
                server.handle(item)
        else:
            server.handle(message)
    sys.stderr.flush()
    os._exit(0)  # stdin closed: the client is gone; a running tool call is abandoned (it only reads)


def main() -> int:
    """``omcm mcp`` without argparse, logging or plugins: what Claude Code runs."""
    from omcm_core._cli.invocation import Invocation

    return serve(Invocation(dict(os.environ)))
