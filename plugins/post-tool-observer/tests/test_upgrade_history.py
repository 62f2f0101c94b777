"""History survives the upgrade that scoped observations by project.

The store is built as the release before it (e5743f9) left it: its migrations
(the current list without the ``project`` column: migrations only append) and
its INSERT, which named no project. After the upgrade `omcm search` in the
project and Claude's MCP ``search`` find the calls made there, and none made
in another project.
"""

import json
import os
import re
import subprocess
import sys
import time
import uuid

import omcm_post_tool_observer
from omcm_post_tool_observer import storage

from omcm_core.store import Store
from omcm_core.testing import post_tool_payload

ENV = {"OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}

#: e5743f9's storage.record INSERT, which had no project column.
OLD_INSERT = (
    "INSERT INTO observer_events(event_id, session_id, ts, tool_name, tool_use_id, success, duration_ms, "
    "prompt_index, tool_index, file_path, command, output, payload_json, bytes, error) "
    "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _old_store(home, rows):
    store = Store(home)
    store.migrate(storage.PLUGIN, storage.MIGRATIONS[:3])  # the schema before the project column
    with store.transaction() as conn:
        for session, tool, file_path, command, output in rows:
            payload = json.dumps({"toolName": tool, "success": True})
            conn.execute(
                OLD_INSERT,
                (
                    str(uuid.uuid4()),
                    session,
                    time.time(),
                    tool,
                    None,
                    1,
                    1.0,
                    0,
                    0,
                    file_path,
                    command,
                    output,
                    payload,
                    len(payload),
                    None,
                ),
            )
    assert "project" not in {r[1] for r in store.query("PRAGMA table_info(observer_events)")}
    store.close()


def _transcript(claude_home, project, session):
    folder = claude_home / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{session}.jsonl").write_text(json.dumps({"cwd": str(project), "sessionId": session}) + "\n")


def test_calls_recorded_before_projects_are_found_in_their_project(omcm_dispatch, omcm_home, tmp_path):
    user_home, project, other = tmp_path / "user", tmp_path / "my_app", tmp_path / "other-app"
    for folder in (user_home, project, other):
        folder.mkdir()
    claude = user_home / ".claude"
    _transcript(claude, project, "s-here")
    _transcript(claude, other, "s-there")
    _old_store(
        omcm_home,
        [
            ("s-here", "Bash", None, "make zorblax", "built zorblax"),
            ("s-files", "Read", f"{project}/src/zorblax.py", None, "zorblax source"),
            ("s-there", "Bash", None, "make zorblax-other", "zorblax elsewhere"),
            ("s-files", "Read", f"{other}/zorblax.py", None, "zorblax in the other project"),
            ("s-across", "Bash", None, "zorblax before the upgrade", "ok"),
        ],
    )
    # A session that went on across the upgrade: its next call is recorded with the project.
    env = {**ENV, "CLAUDE_PROJECT_DIR": str(project), "HOME": str(user_home)}
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=env)
    payload = post_tool_payload("Bash", {"command": "make test"}, {"stdout": "zorblax after the upgrade"})
    dispatch({**payload, "session_id": "s-across", "cwd": str(project)})

    run_env = {**os.environ, **env, "OMCM_HOME": str(omcm_home)}
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "search", "zorblax", "--json", "--full-text"],
        capture_output=True,
        text=True,
        env=run_env,
        cwd=project,
    )
    assert proc.returncode == 0, proc.stderr
    found = {h["command"] or h["file"] for h in json.loads(proc.stdout)["results"]}
    assert found == {
        "make zorblax",
        f"{project}/src/zorblax.py",
        "zorblax before the upgrade",
        "make test",
    }
    # Claude's MCP search in the project sees the same calls.
    from omcm_post_tool_observer import tools

    from omcm_core.config import Config
    from omcm_core.context import Context

    store = Store(omcm_home)
    try:
        ctx = Context("post-tool-observer", omcm_home, project, Config.load(omcm_home, project, env), env, store)
        search = next(t for t in tools.offered(ctx) if t.name == "search")
        hits = search.function(query="zorblax", limit=20)["hits"]
        assert len(hits) == 4
        # Another project's calls stay out; --all-projects still shows them.
        left = store.query("SELECT command, file_path FROM observer_events WHERE project IS NULL")
        assert sorted(map(str, left)) == sorted(map(str, [("make zorblax-other", None), (None, f"{other}/zorblax.py")]))
    finally:
        store.close()
