"""The plugin route's MCP server while omcm's environment is first built: ``python3 omcm_mcp_wait.py DATA``.

Claude Code starts the plugin's MCP server with the session, often before the
first install's build (bin/omcm_setup.py) is done. A server that fails then is
remembered as failed for a while, so the next sessions had no omcm tools. This
one answers at once: ``initialize`` with the ``tools.listChanged`` capability and
``tools/list`` with no tools. When ``DATA/venv/bin/omcm`` appears it starts the
real ``omcm mcp``, replays the client's ``initialize`` to it (its answer is not
forwarded: the client has one), sends the client
``notifications/tools/list_changed``, and from then on passes every line through
both ways, so the client asks again and gets omcm's tools. Standard library only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

#: How often to look for the environment (the build takes tens of seconds).
POLL_S = 1.0
#: The server's answer to anything but initialize/tools/list/ping while it waits.
NOT_READY = "omcm is still setting up its Python environment (about a minute); try again shortly"


class Waiting:
    """The server's state: the client's initialize request, and a lock for stdout."""

    def __init__(self, data: Path, out) -> None:
        self.data = data
        self.out = out
        self.lock = threading.Lock()
        self.initialize: dict | None = None
        self.child: subprocess.Popen | None = None
        self.pipe: IO[bytes] | None = None  # the real server's stdin, once it runs

    def send(self, message: dict | bytes) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        with self.lock:
            self.out.write(line)
            self.out.flush()

    def answer(self, request: dict) -> dict | None:
        """The reply to one message while waiting (None for a notification)."""
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            return None
        if method == "initialize":
            self.initialize = request
            asked = (request.get("params") or {}).get("protocolVersion") or "2025-06-18"
            result = {
                "protocolVersion": asked,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "omcm", "version": "setting-up"},
                "instructions": "omcm's tools appear once its environment is set up (first use).",
            }
            return {"jsonrpc": "2.0", "id": rid, "result": result}
        if method == "tools/list":
            return {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}
        if method == "ping":
            return {"jsonrpc": "2.0", "id": rid, "result": {}}
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32002, "message": NOT_READY}}

    def ready(self) -> Path | None:
        """The environment's omcm once built, in folders of ours only (as bin/omcm-hook checks)."""
        omcm = self.data / "venv" / "bin" / "omcm"
        try:
            ours = all(p.stat().st_uid == os.getuid() for p in (self.data, self.data / "venv"))
        except OSError:
            return None
        return omcm if ours and os.access(omcm, os.X_OK) else None

    def hand_over(self, omcm: Path) -> None:
        """Start the real server, replay the handshake, announce the tools; then pass lines through."""
        child = subprocess.Popen([str(omcm), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert child.stdin and child.stdout
        if self.initialize is not None:
            replay = dict(self.initialize, id="omcm-wait-initialize")
            child.stdin.write(json.dumps(replay).encode() + b"\n")
            child.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            child.stdin.flush()
            for line in child.stdout:  # its answer to the replayed initialize: the client has ours
                if b"omcm-wait-initialize" in line:
                    break
        self.child, self.pipe = child, child.stdin
        threading.Thread(target=self.pump, args=(child.stdout,), daemon=True).start()
        if self.initialize is not None:
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    def pump(self, stream) -> None:
        for line in stream:
            self.send(line)
        os._exit(0)  # the real server ended: so does this one


def main(argv: list[str]) -> None:
    state = Waiting(Path(argv[0]), sys.stdout.buffer)
    lines: list[bytes] = []
    cond = threading.Condition()
    closed = threading.Event()

    def read() -> None:
        for line in sys.stdin.buffer:
            with cond:
                lines.append(line)
                cond.notify()
        closed.set()
        with cond:
            cond.notify()

    def stop(*_) -> None:
        # At once and quietly: the client sends SIGINT when the session ends and waits little.
        if state.child is not None:
            state.child.terminate()
        os._exit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=read, daemon=True).start()
    while True:
        with cond:
            if not lines and not closed.is_set():
                cond.wait(POLL_S)
            pending, lines[:] = list(lines), []
        if state.child is None and (omcm := state.ready()) is not None:
            state.hand_over(omcm)
        for line in pending:
            if state.pipe is not None:
                try:
                    state.pipe.write(line)
                    state.pipe.flush()
                except OSError:  # the real server is gone; pump() ends this process
                    pass
                continue
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if isinstance(request, dict) and (reply := state.answer(request)) is not None:
                state.send(reply)
        if closed.is_set() and not lines:
            if state.child is not None and state.pipe is not None:
                state.pipe.close()
                state.child.wait()
            os._exit(0)  # not through finalization: the reader thread holds stdin's lock


if __name__ == "__main__":
    main(sys.argv[1:])
