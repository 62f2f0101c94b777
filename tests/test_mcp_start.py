"""``omcm mcp`` answers the handshake and the tool list without the SDK or the plugins, and stops at once.

A real ``omcm mcp`` subprocess fed JSON-RPC lines as Claude Code sends them;
what it imported is read from ``-X importtime`` (no timed assertions).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

PLUGINS = "post-tool-observer,pre-tool-guide,memory-rotation,notepad"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
#: Only a tool call (or a stale list) needs these.
HEAVY = ("mcp", "mcp_types", "pydantic", "anyio", "pluggy", "attrs", "omcm_core.records", "omcm_core._runtime")


@pytest.fixture
def env(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    return {
        **os.environ,
        "OMCM_HOME": str(tmp_path / "home"),
        "OMCM_LOAD_PLUGINS": PLUGINS,
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
        "CLAUDE_PROJECT_DIR": str(project),
    }


def talk(env: dict, lines: list, *options: str) -> subprocess.CompletedProcess:
    data = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in lines)
    return subprocess.run(
        [sys.executable, *options, "-m", "omcm_core", "mcp"],
        input=data,
        capture_output=True,
        text=True,
        env=env,
        cwd=env["CLAUDE_PROJECT_DIR"],
        timeout=120,
    )


def answers(proc: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines()]


def imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_second_start_lists_tools_without_the_sdk_or_the_plugins(env):
    first = answers(talk(env, [INIT, INITIALIZED, LIST]))
    proc = talk(env, [INIT, INITIALIZED, LIST], "-X", "importtime")
    second = answers(proc)
    assert second == first
    assert second[0]["result"]["serverInfo"]["name"] == "omcm"
    assert second[0]["result"]["protocolVersion"] == "2025-06-18"
    assert {t["name"] for t in second[1]["result"]["tools"]} >= {"search", "get", "lessons", "memory_search", "notepad"}
    modules = imported(proc.stderr)
    assert "omcm_core._cli.mcp_stdio" in modules  # the listing is real
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))
    assert heavy == []


def test_a_stale_list_is_corrected_and_the_client_told(env):
    talk(env, [INIT, INITIALIZED, LIST])
    (cache,) = (Path(env["OMCM_HOME"]) / "cache").glob("mcp-tools-*.json")
    data = json.loads(cache.read_text())
    real = data["tools"]
    data["tools"] = [{"name": "gone", "description": "a plugin removed since", "inputSchema": {"type": "object"}}]
    cache.write_text(json.dumps(data))
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "notepad", "arguments": {}}}
    lines = [INIT, INITIALIZED, LIST, call]
    # Keep stdin open until the call is answered: a closed stdin ends the server.
    with subprocess.Popen(
        [sys.executable, "-m", "omcm_core", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=env["CLAUDE_PROJECT_DIR"],
    ) as proc:
        for message in lines:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        seen = []
        while not any(m.get("id") == 3 for m in seen):
            seen.append(json.loads(proc.stdout.readline()))
        proc.stdin.write(json.dumps({**LIST, "id": 4}) + "\n")
        proc.stdin.flush()
        seen.append(json.loads(proc.stdout.readline()))
        proc.kill()
    assert [t["name"] for t in seen[1]["result"]["tools"]] == ["gone"]  # what the cache said
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in seen
    (called,) = (m for m in seen if m.get("id") == 3)
    assert "no notepad" in called["result"]["content"][0]["text"]
    assert seen[-1]["result"]["tools"] == real
    assert json.loads(cache.read_text())["tools"] == real


def test_protocol_edges(env):
    proc = talk(
        env,
        [
            INIT,
            INITIALIZED,
            {"jsonrpc": "2.0", "id": 5, "method": "ping"},
            "not json",
            {"jsonrpc": "2.0", "id": 6, "method": "resources/list"},
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {}}},
            {"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}},
            [{"jsonrpc": "2.0", "id": 9, "method": "ping"}],
            {"jsonrpc": "2.0", "id": 10, "result": {}},
        ],
    )
    assert proc.returncode == 0
    by_id = {m.get("id"): m for m in answers(proc)}
    assert by_id[5]["result"] == {} and by_id[9]["result"] == {}
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[6]["error"]["code"] == -32601
    assert by_id[7]["error"]["code"] == -32602
    assert by_id[8]["result"]["protocolVersion"] == "2025-11-25"  # our newest; the client decides
    assert 10 not in by_id  # a response is never answered
    assert len(answers(proc)) == 7


@pytest.mark.parametrize("how", ["stdin closed", "SIGINT"])
def test_stops_while_a_tool_call_is_loading(env, how):
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {}}}
    with subprocess.Popen(
        [sys.executable, "-m", "omcm_core", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=env["CLAUDE_PROJECT_DIR"],
    ) as proc:
        for message in (INIT, INITIALIZED, call):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        if how == "SIGINT":
            proc.send_signal(signal.SIGINT)
        else:
            proc.stdin.close()
        # Far below the seconds the SDK needs to load; the bench measures the real figure.
        assert proc.wait(timeout=15) == 0
