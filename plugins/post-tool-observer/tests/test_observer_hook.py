"""post-tool-observer end to end: real payloads, parallel writers, search, retention."""

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import omcm_post_tool_observer
import pytest

from omcm_core.store import Store
from omcm_core.testing import post_tool_payload, pre_tool_payload, run_hook, user_prompt_payload

ENV = {"OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}


def omcm(home, *args):
    env = {**os.environ, **ENV, "OMCM_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env)


def rows(home, sql="SELECT tool_name, success FROM observer_events ORDER BY id"):
    return Store(home).query(sql)


@pytest.mark.slow
def test_real_post_tool_payloads_are_all_recorded(shared_fixtures, tmp_path):
    files = sorted((shared_fixtures / "hook-payloads").glob("PostToolUse*.json"))
    expected = 0
    for path in files:
        payload = json.loads(path.read_text())
        proc = run_hook(path.read_bytes(), env={**ENV, "OMCM_HOME": str(tmp_path)})
        assert (proc.returncode, proc.stdout) == (0, b""), path.name
        expected += payload["tool_name"] not in ("TodoWrite", "TodoRead")
    recorded = rows(tmp_path)
    assert len(recorded) == expected
    assert sum(1 for _, ok in recorded if not ok) == len(
        list((shared_fixtures / "hook-payloads").glob("PostToolUseFailure*.json"))
    )
    assert not any(tool == "TodoWrite" for tool, _ in recorded)
    ((types,),) = Store(tmp_path).query("SELECT count(DISTINCT event_type) FROM observer_events")
    assert types == 1


def test_duration_from_payload_or_measured_from_pre_tool(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    dispatch(post_tool_payload("Bash", {"command": "ls"}, {"stdout": "a"}, duration_ms=250))
    pre = pre_tool_payload("Read", {"file_path": "/p/a.py"})
    dispatch(pre)
    time.sleep(0.05)
    dispatch(post_tool_payload("Read", {"file_path": "/p/a.py"}, {"type": "text"}, tool_use_id=pre["tool_use_id"]))
    (first,), (second,) = rows(omcm_home, "SELECT duration_ms FROM observer_events ORDER BY id")
    assert first == 250 and 40 <= second < 5000


def test_prompt_and_tool_indexes(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    for prompt in ("p1", "p2"):
        dispatch(user_prompt_payload(prompt))
        for _ in range(2):
            dispatch(post_tool_payload("Read", {"file_path": "/a"}, {}))
    dispatch(post_tool_payload("Read", {"file_path": "/a"}, {}, prompt_id="new-prompt-id"))
    positions = rows(omcm_home, "SELECT prompt_index, tool_index FROM observer_events ORDER BY id")
    assert positions == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)]


def test_a_background_agents_task_notification_is_not_a_new_prompt(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    dispatch(user_prompt_payload("check the deploys"))
    dispatch(post_tool_payload("Read", {"file_path": "/a"}, {}))
    notification = "<task-notification>\n<task-id>a1</task-id>\n<result>done</result>\n</task-notification>"
    dispatch(user_prompt_payload(notification))
    dispatch(post_tool_payload("Read", {"file_path": "/a"}, {}))
    dispatch(user_prompt_payload("thanks, now deploy"))
    dispatch(post_tool_payload("Read", {"file_path": "/a"}, {}))
    positions = rows(omcm_home, "SELECT prompt_index, tool_index FROM observer_events ORDER BY id")
    assert positions == [(1, 1), (1, 2), (2, 1)]


def test_with_prompt_ids_each_user_prompt_counts_once(omcm_dispatch, omcm_home):
    # Claude Code sends the same prompt_id to UserPromptSubmit and to that prompt's tool calls.
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    notification = "<task-notification>\n<task-id>a1</task-id>\n<result>done</result>\n</task-notification>"
    for prompt, prompt_id in (("p1", "P1"), ("p2", "P2"), (notification, "N3"), ("p4", "P4")):
        dispatch(user_prompt_payload(prompt, prompt_id=prompt_id))
        dispatch(post_tool_payload("Read", {"file_path": "/a"}, {}, prompt_id=prompt_id))
    positions = rows(omcm_home, "SELECT prompt_index, tool_index FROM observer_events ORDER BY id")
    assert positions == [(1, 1), (2, 1), (2, 2), (3, 1)]


@pytest.mark.slow
def test_many_dispatchers_at_once_lose_nothing(tmp_path):
    # What is under test is the store under 24 writers, not the time budget: on a machine at
    # load 40 a call can overrun 1.5 s, and a plugin over budget is abandoned by design.
    env = {**ENV, "OMCM_HOME": str(tmp_path), "OMCM__CORE__PLUGIN_BUDGET_MS": "60000"}
    payloads = [
        post_tool_payload("Bash", {"command": f"echo {i}"}, {"stdout": str(i)}, session_id=f"s{i % 4}")
        for i in range(48)
    ]
    with ThreadPoolExecutor(max_workers=24) as pool:
        procs = list(pool.map(lambda p: run_hook(p, env=env), payloads))
    assert all(p.returncode == 0 and p.stdout == b"" for p in procs)
    assert not any(b"locked" in p.stderr for p in procs)
    assert len(rows(tmp_path)) == 48
    assert (
        "database is locked" not in (tmp_path / "logs" / "omcm.jsonl").read_text()
        if (tmp_path / "logs" / "omcm.jsonl").exists()
        else True
    )


LABELLED = [
    ("Bash", {"command": "pytest tests/test_api.py"}, {"stdout": "3 failed: AssertionError in test_login"}, None),
    ("Bash", {"command": "npm run build"}, {"stdout": "webpack compiled successfully"}, None),
    (
        "Bash",
        {"command": "pip install requests"},
        None,
        "Exit code 1\nERROR: Could not find a version that satisfies requests",
    ),
    (
        "Read",
        {"file_path": "/srv/app/auth/login.py"},
        {"type": "text", "file": {"content": "def login(user, password_hash): ..."}},
        None,
    ),
    (
        "Edit",
        {"file_path": "/srv/app/db/migrations.py", "old_string": "add_column", "new_string": "add_index"},
        {},
        None,
    ),
    ("Grep", {"pattern": "def handle_request"}, {"filenames": ["/srv/app/http/server.py"], "numFiles": 1}, None),
    (
        "WebFetch",
        {"url": "https://docs.python.org/3/library/sqlite3.html"},
        {"result": "sqlite3 DB-API 2.0 interface", "code": 200},
        None,
    ),
    ("Bash", {"command": "docker compose up -d"}, None, "Exit code 1\nCannot connect to the Docker daemon"),
]
QUERIES = [
    ("login test failure", "pytest tests/test_api.py"),
    ("docker daemon", "docker compose up -d"),
    ("migrations", "/srv/app/db/migrations.py"),
    ("requests version", "pip install requests"),
    ("sqlite3", "https://docs.python.org/3/library/sqlite3.html"),
    ("handle_request", "def handle_request"),
]


@pytest.fixture
def labelled_home(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    for tool, tool_input, response, error in LABELLED:
        dispatch(post_tool_payload(tool, tool_input, response, error=error, session_id="lab"))
    return omcm_home


def test_full_text_relevance_on_a_labelled_set(labelled_home):
    from omcm_post_tool_observer import search

    store = Store(labelled_home)
    for query, expected in QUERIES:
        hits = search.full_text(store, query)
        assert hits, query
        top = hits[0]["command"] or hits[0]["file"]
        assert expected in top, (query, hits[0])


def test_search_command_filters_and_json(labelled_home):
    proc = omcm(labelled_home, "search", "daemon", "--failures", "--json")
    data = json.loads(proc.stdout)
    assert data["mode"] == "full-text" and [h["command"] for h in data["results"]] == ["docker compose up -d"]
    proc = omcm(labelled_home, "search", "requests", "--tool", "Read", "--json")
    assert json.loads(proc.stdout)["results"] == []
    proc = omcm(labelled_home, "search", 'NEAR("x" OR', "--json")  # FTS syntax in user text is just text
    assert proc.returncode == 0 and json.loads(proc.stdout)["results"] == []
    assert "docker compose" in omcm(labelled_home, "search", "docker").stdout


@pytest.mark.slow
def test_semantic_search_ranks_by_meaning(labelled_home):
    from omcm_post_tool_observer import embedder, search, worker

    from omcm_core.log import get_logger

    if not embedder.available():
        pytest.fail("the [embeddings] extra is part of the development install (.dev-extras, .dev-no-deps)")
    store = Store(labelled_home)
    with store.transaction() as conn:  # jobs were skipped with embeddings=false: queue them now
        conn.execute(
            "INSERT INTO observer_outbox(event_id, created, updated) SELECT event_id, 0, 0 FROM observer_events"
        )
    assert worker.run(store, labelled_home, get_logger(), idle_s=0) == len(LABELLED)
    hits = search.semantic(store, "container engine is not running")
    assert hits[0]["command"] == "docker compose up -d"
    hits = search.semantic(store, "user authentication code")
    assert hits[0]["file"] == "/srv/app/auth/login.py"
    hybrid = search.hybrid(store, "docker daemon")
    assert hybrid[0]["command"] == "docker compose up -d"


def test_outbox_job_is_written_with_its_event(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(
        names={"post-tool-observer": omcm_post_tool_observer},
        env={"OMCM__POST_TOOL_OBSERVER__WORKER_INTERVAL_S": "100000"},
    )
    from omcm_post_tool_observer import storage

    storage.ready(Store(omcm_home))
    storage.set_meta(Store(omcm_home), "worker_started", time.time())  # keep the background worker out of this test
    dispatch(post_tool_payload("Bash", {"command": "ls"}, {"stdout": "x"}))
    assert rows(omcm_home, "SELECT count(*) FROM observer_outbox o JOIN observer_events e USING(event_id)") == [(1,)]


def test_retention_by_age_and_size_then_vacuum(labelled_home):
    from omcm_post_tool_observer import retention

    from omcm_core.log import get_logger

    store = Store(labelled_home)
    with store.transaction() as conn:
        conn.execute("UPDATE observer_events SET ts = ts - 100 * 86400 WHERE tool_name = 'Bash'")
    result = retention.prune(store, max_age_days=30, max_mb=500, log=get_logger())
    assert result["deleted"] == 4 and len(rows(labelled_home)) == 4
    assert retention.prune(store, max_age_days=30, max_mb=0.0002, log=get_logger())["deleted"] >= 3
    assert store.query("SELECT count(*) FROM observer_fts WHERE observer_fts MATCH 'docker'") == [(0,)]
    assert not retention.due(store, 3600)


def test_doctor_reports_size_and_counts(labelled_home):
    doc = json.loads(omcm(labelled_home, "doctor", "--json").stdout)
    (report,) = [c["data"] for s in doc["sections"] for c in s["checks"] if c["id"] == "plugin.post-tool-observer"]
    assert report["observations"] == len(LABELLED) and report["store_bytes"] > 0


def test_a_projects_retention_settings_cannot_delete_another_projects_observations(omcm_dispatch, omcm_home, tmp_path):
    """Issue 24 item 2: one store holds every project's history; retention is the user's setting alone."""
    work, cloned = tmp_path / "work", tmp_path / "cloned"
    work.mkdir(), (cloned / ".claude").mkdir(parents=True)
    (cloned / ".claude" / "omcm.toml").write_text(
        "[post-tool-observer]\nmax_age_days = 0.000001\nmax_mb = 0.000001\nprune_interval_s = 0\n"
    )
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    dispatch.env.pop("CLAUDE_PROJECT_DIR", None)
    for n in range(30):
        dispatch(post_tool_payload("Bash", {"command": f"make step{n}"}, {"stdout": "ok"}, cwd=str(work)))
    env = {**os.environ, **ENV, "OMCM_HOME": str(omcm_home), "CLAUDE_PROJECT_DIR": str(cloned)}
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "observer-worker", "--prune"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cloned,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pruned 0 observations" in proc.stdout
    assert rows(omcm_home, "SELECT count(*) FROM observer_events") == [(30,)]
