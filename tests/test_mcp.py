"""``omcm mcp`` through the MCP SDK's own client, and the project scope of ``omcm search`` and ``omcm lessons``.

The data is recorded the way Claude Code would: ``omcm hook`` processes in two
projects. The server is a real ``omcm mcp`` subprocess on stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from omcm_core.testing import post_tool_payload, run_hook

PLUGINS = "post-tool-observer,pre-tool-guide,memory-rotation,notepad"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def env_for(home: Path, project: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "OMCM_HOME": str(home),
        "OMCM_LOAD_PLUGINS": PLUGINS,
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
        **extra,
    }


@pytest.fixture
def two_projects(tmp_path):
    home = tmp_path / "home"
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    for project, word in ((alpha, "alphawidget"), (beta, "betawidget")):
        project.mkdir()
        env = env_for(home, project)
        for n in range(3):
            out = {"stdout": f"built {word} part {n} with token {SECRET}", "stderr": "", "exitCode": 0}
            payload = post_tool_payload("Bash", {"command": f"make {word}-{n}"}, out, cwd=str(project))
            assert run_hook(payload, env=env).returncode == 0
        # A lesson: an Edit of settings.py failed, then succeeded after a Read.
        edit = {"file_path": str(project / "settings.py"), "old_string": "a", "new_string": "b"}
        session = f"s-{word}"
        for payload in (
            post_tool_payload("Edit", edit, error=f"String to replace not found in {word}", session_id=session),
            post_tool_payload("Read", {"file_path": edit["file_path"]}, {"type": "text"}, session_id=session),
            post_tool_payload("Edit", edit, {"filePath": edit["file_path"]}, session_id=session),
        ):
            assert run_hook({**payload, "cwd": str(project)}, env=env).returncode == 0
    return home, alpha, beta


def mcp_session(env: dict, cwd: Path, calls: list[tuple[str, dict]]) -> tuple[list, list[str]]:
    """Start ``omcm mcp``, list its tools, make ``calls``; (tools, the text of each answer)."""

    async def talk():
        params = StdioServerParameters(command=sys.executable, args=["-m", "omcm_core", "mcp"], env=env, cwd=str(cwd))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            answers = []
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                assert not result.is_error, result
                answers.append("".join(part.text for part in result.content))
            return tools, answers

    return anyio.run(talk)


def test_tools_are_listed_read_only_with_their_schemas(two_projects):
    home, alpha, _ = two_projects
    tools, _ = mcp_session(env_for(home, alpha), alpha, [])
    by_name = {tool.name: tool for tool in tools}
    assert {"search", "get", "lessons", "memory_search", "notepad"} <= set(by_name)
    assert set(by_name["search"].input_schema["properties"]) == {"query", "limit", "tool", "failures", "all_projects"}
    assert all(tool.annotations.read_only_hint for tool in tools)


def test_search_is_scoped_to_the_project_masked_and_get_returns_one_call(two_projects):
    home, alpha, _ = two_projects
    _, (scoped, everywhere) = mcp_session(
        env_for(home, alpha),
        alpha,
        [("search", {"query": "widget part"}), ("search", {"query": "widget part", "all_projects": True})],
    )
    scoped, everywhere = json.loads(scoped), json.loads(everywhere)
    assert scoped["scope"] == str(alpha)
    assert len(scoped["hits"]) == 3 and all("alphawidget" in hit["what"] for hit in scoped["hits"])
    assert {hit["what"].split()[1].split("-")[0] for hit in everywhere["hits"]} == {"alphawidget", "betawidget"}
    assert SECRET not in json.dumps(everywhere)
    first = scoped["hits"][0]["id"]
    beta_id = next(h["id"] for h in everywhere["hits"] if "betawidget" in h["what"])
    _, (whole, refused) = mcp_session(env_for(home, alpha), alpha, [("get", {"id": first}), ("get", {"id": beta_id})])
    call = json.loads(whole)
    assert call["command"].startswith("make alphawidget") and "built alphawidget" in call["output"]
    assert SECRET not in whole and "[REDACTED" in whole
    assert "another project" in json.loads(refused)["error"]


def test_answers_are_bounded(two_projects):
    home, alpha, _ = two_projects
    env = env_for(home, alpha, OMCM__CORE__MCP_ANSWER_CHARS="300")
    _, (answer,) = mcp_session(env, alpha, [("search", {"query": "", "limit": 20, "all_projects": True})])
    assert len(answer) <= 300 and "answer cut at 300" in answer


def test_lessons_tool_and_the_lessons_command_list_and_forget(two_projects):
    home, alpha, _ = two_projects
    env = env_for(home, alpha)
    _, (mine, everyone) = mcp_session(
        env, alpha, [("lessons", {"file": "settings.py"}), ("lessons", {"file": "settings.py", "all_projects": True})]
    )
    mine, everyone = json.loads(mine)["lessons"], json.loads(everyone)["lessons"]
    assert len(mine) == 1 and "alphawidget" in mine[0]["error"] and mine[0]["resolved_by"]
    assert len(everyone) == 2

    def omcm(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env, cwd=alpha
        )

    listed = json.loads(omcm("lessons", "--json").stdout)["lessons"]
    assert [lesson["id"] for lesson in listed] == [mine[0]["id"]]
    assert omcm("lessons", "forget", str(mine[0]["id"])).returncode == 0
    assert json.loads(omcm("lessons", "--json").stdout)["lessons"] == []
    assert len(json.loads(omcm("lessons", "--json", "--all-projects").stdout)["lessons"]) == 1
    assert omcm("lessons", "forget", "999999").returncode == 1


def test_omcm_search_defaults_to_the_current_project(two_projects):
    home, alpha, beta = two_projects

    def search(cwd: Path, *args: str) -> list[dict]:
        proc = subprocess.run(
            [sys.executable, "-m", "omcm_core", "search", "part", "--json", *args],
            capture_output=True,
            text=True,
            env={k: v for k, v in env_for(home, cwd).items() if k != "CLAUDE_PROJECT_DIR"},
            cwd=cwd,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["results"]

    assert {h["command"].split()[1].split("-")[0] for h in search(beta)} == {"betawidget"}
    assert {h["command"].split()[1].split("-")[0] for h in search(beta, "--all-projects")} == {
        "alphawidget",
        "betawidget",
    }


def test_memory_search_and_notepad_never_create_files(two_projects):
    home, alpha, _ = two_projects
    _, (memory, notepad) = mcp_session(
        env_for(home, alpha), alpha, [("memory_search", {"query": "x"}), ("notepad", {})]
    )
    assert json.loads(memory)["hits"] == [] and "no notepad" in notepad
    assert not (alpha / ".claude" / "memory").exists() and not (alpha / ".omc").exists()
