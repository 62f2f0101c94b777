"""The secret shapes of issue 24 sent through the team path: none reaches the server nor another member.

Member A runs each shape as a Bash command (or an MCP tool's input) that fails
and then succeeds, with pre-tool-guide and post-tool-observer sharing; A ships,
a reviewer approves everything, B fetches and is guided. Each shape's random
part is then looked for in A's outbox, on the server, in B's copy and in what
B's Claude is told.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from machines import Machine

from omcm_core import team
from omcm_core.store import Store
from omcm_core.testing import Dispatcher, post_tool_payload, pre_tool_payload

pytestmark = pytest.mark.slow
pytest.importorskip("omcm_team_store", reason="the team-store plugin is not installed (a tox cell without it)")
guide = pytest.importorskip("omcm_pre_tool_guide", reason="pre-tool-guide is not installed")
observer = pytest.importorskip("omcm_post_tool_observer", reason="post-tool-observer is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
import secret_corpus  # noqa: E402

# The 29 shapes of issue 24 (tests/reliability/secret_corpus.py); the older corpus where they are not there yet.
SHAPES = [(s.name, s.value, s.needle) for s in getattr(secret_corpus, "ISSUE_24_SHAPES", [])] or [
    (name, text, needle) for name, text, needle in secret_corpus.corpus()
]


def sharing_env(m: Machine) -> dict[str, str]:
    return {
        **m.env,
        "OMCM__POST_TOOL_OBSERVER__SHARE": "true",
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
        "OMCM__PRE_TOOL_GUIDE__SHARE": "true",
    }


def call(value) -> tuple[str, dict]:
    return ("Bash", {"command": value}) if isinstance(value, str) else ("mcp__db__connect", value)


def dump(store: Store, table: str) -> str:
    return json.dumps(store.query(f"SELECT * FROM {table}"), ensure_ascii=False)


def test_no_secret_shape_reaches_the_server_or_another_member(tmp_path, pg_url):
    lead = Machine(tmp_path, "lead", pg_url)
    lead.omcm("team", "init", "--allow-superuser-owner")
    lead.omcm("team", "member", "add", "alice", "--no-password")
    lead.omcm("team", "member", "add", "bob", "--no-password")
    a = Machine(tmp_path, "a", pg_url.replace("omcm@", "alice@"))
    b = Machine(tmp_path, "b", pg_url.replace("omcm@", "bob@"))
    for m in (a, b):  # a sync "started just now": the test ships by hand, no background sync races it
        store = Store(m.home)
        team.ready(store)
        with store.transaction() as conn:
            team.set_meta(conn, "sync_spawned", time.time())
    plugins = {"pre-tool-guide": guide, "post-tool-observer": observer}
    on_a = Dispatcher(plugins, sharing_env(a))
    for n, (name, value, _) in enumerate(SHAPES):
        tool, tool_input = call(value)
        error = f"Exit code 1\nError: unauthorized ({name})"
        on_a({**post_tool_payload(tool, tool_input, error=error, session_id=f"s{n}"), "cwd": str(a.project)})
        on_a({**post_tool_payload(tool, tool_input, {"stdout": "ok"}, session_id=f"s{n}"), "cwd": str(a.project)})
    outbox = dump(Store(a.home), "team_outbox")
    assert outbox.count("pre-tool-guide/lesson") >= len(SHAPES)  # every shape was queued, as structure
    leaks = {"outbox": [name for name, _, needle in SHAPES if needle in outbox]}
    a.omcm("team", "sync")
    import psycopg

    with psycopg.connect(pg_url) as conn:
        on_server = json.dumps(conn.execute("SELECT key, payload::text FROM omcm_team_items").fetchall())
        pending = conn.execute("SELECT id FROM omcm_team_items WHERE NOT deleted").fetchall()
    leaks["server"] = [name for name, _, needle in SHAPES if needle in on_server]
    from omcm_team_store import admin, server

    with server.connect(pg_url) as conn:  # the lead approves everything: approval must not be what keeps a secret back
        for (entry,) in pending:
            assert admin.verdict(conn, entry, "approved")
    b.omcm("team", "sync")
    copy = dump(Store(b.home), "team_items")
    assert copy.count("pre-tool-guide/lesson") >= len(SHAPES)
    leaks["b's copy"] = [name for name, _, needle in SHAPES if needle in copy]
    on_b = Dispatcher({"pre-tool-guide": guide}, sharing_env(b))
    told = []
    for n, (name, value, _) in enumerate(SHAPES):
        tool, tool_input = call(value)
        error = f"Exit code 1\nError: unauthorized ({name})"
        on_b({**post_tool_payload(tool, tool_input, error=error, session_id=f"b{n}"), "cwd": str(b.project)})
        told.append(json.dumps(on_b({**pre_tool_payload(tool, tool_input, session_id=f"b{n}"), "cwd": str(b.project)})))
    leaks["b's Claude"] = [
        name
        for (name, value, needle), t in zip(SHAPES, told, strict=True)
        if needle in t and needle not in json.dumps(value)
    ]
    assert leaks == {"outbox": [], "server": [], "b's copy": [], "b's Claude": []}
    # And the path was exercised: B was told the team's lesson for most shapes (a few are not commands).
    commands = [v for _, v, _ in SHAPES if isinstance(v, str)]
    assert sum("not an instruction" in t for t in told) >= len(commands) * 2 // 3
    assert os.environ.get("OMCM_HOME") != str(b.home)
