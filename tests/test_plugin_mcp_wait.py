"""The plugin route's MCP server (bin/omcm mcp) before and after the first build of omcm's environment.

Claude Code remembers a server that failed; one that answered with no tools and
later says ``notifications/tools/list_changed`` is asked again. Here the real
``omcm mcp`` of this checkout takes over once the environment appears.
"""

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "claude-code", "version": "2.1.330"},
}

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")


class Server:
    def __init__(self, tmp_path: Path, data: Path) -> None:
        tools = tmp_path / "tools"
        tools.mkdir(exist_ok=True)
        if not (tools / "python3").exists():
            (tools / "python3").symlink_to(sys.executable)
        env = {"HOME": str(tmp_path), "PATH": f"{tools}:/usr/bin:/bin", "OMCM_HOME": str(tmp_path / "omcm-home")}
        env |= {"CLAUDE_PLUGIN_DATA": str(data), "OMCM_DAEMON": "0"}
        self.proc = subprocess.Popen(
            ["sh", str(ROOT / "bin" / "omcm"), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=60)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 60) -> dict:
        message = self.lines.get(timeout=timeout)
        assert message is not None, "the server ended"
        return message

    def request(self, rid: int, method: str, params: dict | None = None) -> dict:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            message = self.next()
            if message.get("id") == rid:
                return message


def real_environment(data: Path) -> None:
    """What bin/omcm_setup.py leaves: DATA/venv -> venv-<id>, whose omcm is this checkout's."""
    venv = data / "venv-1"
    (venv / "bin").mkdir(parents=True)
    omcm = venv / "bin" / "omcm"
    omcm.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m omcm_core "$@"\n')
    omcm.chmod(0o755)
    os.symlink("venv-1", data / "venv.tmp")
    os.replace(data / "venv.tmp", data / "venv")


def expected_tools(tmp_path: Path) -> set[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "omcm_core", "mcp", "--list"],
        capture_output=True,
        text=True,
        env={**os.environ, "OMCM_HOME": str(tmp_path / "omcm-home")},
        check=True,
    )
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


def test_a_first_install_serves_no_tools_then_announces_omcms(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    server = Server(tmp_path, data)
    try:
        init = server.request(1, "initialize", INIT)
        assert init["result"]["capabilities"]["tools"]["listChanged"] is True
        assert init["result"]["protocolVersion"] == "2025-06-18"
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert server.request(2, "tools/list")["result"]["tools"] == []
        refused = server.request(3, "tools/call", {"name": "search", "arguments": {"query": "x"}})
        assert "setting up" in refused["error"]["message"]
        real_environment(data)  # the build is done
        assert server.next()["method"] == "notifications/tools/list_changed"
        tools = {tool["name"] for tool in server.request(4, "tools/list")["result"]["tools"]}
        assert tools == expected_tools(tmp_path)
        assert server.request(5, "ping")["result"] == {}
        server.proc.stdin.close()
        assert server.proc.wait(timeout=60) == 0
    finally:
        server.close()


def test_a_built_environment_is_served_directly(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    real_environment(data)
    server = Server(tmp_path, data)
    try:
        init = server.request(1, "initialize", INIT)
        assert (
            init["result"]["serverInfo"]["name"] == "omcm" and init["result"]["serverInfo"]["version"] != "setting-up"
        )
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = {tool["name"] for tool in server.request(2, "tools/list")["result"]["tools"]}
        assert tools == expected_tools(tmp_path)
    finally:
        server.close()
