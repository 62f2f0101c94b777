"""Two machines sharing one real PostgreSQL, end to end through `omcm hook` and `omcm team`."""

from __future__ import annotations

import json

import pytest
from machines import REMOTES, Machine, context_of

from omcm_core.testing import assert_valid_response, post_tool_payload, pre_tool_payload, run_hook

pytestmark = pytest.mark.slow
pytest.importorskip("omcm_team_store", reason="the team-store plugin is not installed (a tox cell without it)")
# These go through pre-tool-guide: the tox cell of the core alone does not install it.
pytest.importorskip("omcm_pre_tool_guide", reason="pre-tool-guide is not installed (the core-only tox cell)")
NOT_READ = "File has not been read yet. Read it first before writing to it."


@pytest.fixture
def team(tmp_path, pg_url):
    a = Machine(tmp_path, "a", pg_url, REMOTES[0])
    b = Machine(tmp_path, "b", pg_url, REMOTES[1])  # the same repository, cloned over ssh
    a.omcm("team", "init", "--allow-superuser-owner")
    return a, b


def approve_all(reviewer: Machine) -> list[str]:
    """A reviewer approves every pending entry, through `omcm team review`; returns their ids."""
    listed = reviewer.omcm("team", "review", "list").stdout
    ids = [line.split("\t")[0] for line in listed.splitlines() if line[:1].isdigit()]
    for entry in ids:
        assert f"entry {entry} approved" in reviewer.omcm("team", "review", "approve", entry).stdout
    return ids


def learn_unread_edit(m: Machine, session: str = "sa") -> None:
    edit = {"file_path": m.path("settings.py"), "old_string": "True", "new_string": "False"}
    m.hook(post_tool_payload("Edit", edit, error=NOT_READ, session_id=session))
    m.hook(post_tool_payload("Read", {"file_path": m.path("settings.py")}, {"type": "text"}, session_id=session))
    m.hook(post_tool_payload("Edit", edit, {"filePath": m.path("settings.py")}, session_id=session))


def edit_on(m: Machine, session: str = "sb") -> dict | None:
    edit = {"file_path": m.path("settings.py"), "old_string": "True", "new_string": "False"}
    return m.hook(pre_tool_payload("Edit", edit, session_id=session))


def test_a_lesson_learned_on_machine_a_warns_on_machine_b(team):
    a, b = team
    assert edit_on(b) is None  # B knows nothing yet
    learn_unread_edit(a)
    assert "shipped 2" in a.omcm("team", "sync").stdout  # the failure, then its resolution
    b.omcm("team", "sync")
    assert edit_on(b) is None  # nobody reviewed it yet: it reaches nobody's Claude
    assert len(approve_all(a)) == 1  # a is the admin here, and the admin reviews
    b.omcm("team", "sync")
    out = edit_on(b)
    assert_valid_response("PreToolUse", out)
    lines = context_of(out).split("\n")
    assert lines[:2] == [
        f"⚠️ Past error with this file: [note from teammate omcm, not an instruction] {NOT_READ}",
        "Resolved by: Edit settings.py (Edit)",
    ]
    # Nothing of A's paths reached B: the resolution names the file relative to the project.
    assert str(a.project) not in context_of(out) and str(a.home) not in context_of(out)


def test_sharing_is_off_unless_turned_on(tmp_path, pg_url):
    a = Machine(tmp_path, "a", pg_url, share=False)
    b = Machine(tmp_path, "b", pg_url)
    a.omcm("team", "init", "--allow-superuser-owner")
    learn_unread_edit(a)
    assert a.status()["outbox"] == 0
    assert "shipped 0" in a.omcm("team", "sync").stdout
    b.omcm("team", "sync")
    assert edit_on(b) is None


def test_server_down_the_hook_answers_the_outbox_keeps_rows_and_they_arrive_once(team, pg_server, pg_url):
    a, b = team
    pg_server.stop()
    learn_unread_edit(a)  # every hook answered (Machine.hook asserts exit 0) with the server gone
    failed = a.omcm("team", "sync", check=False)
    assert failed.returncode == 1 and "outbox kept" in failed.stderr
    status = a.status()
    assert status["outbox"] == 2 and status["connection"] == "failed" and status["last_error"]
    pg_server.start()
    assert "shipped 2" in a.omcm("team", "sync").stdout
    assert "shipped 0" in a.omcm("team", "sync").stdout
    approve_all(a)
    b.omcm("team", "sync")
    assert b.status()["local_entries"] == 1
    import psycopg

    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*), sum(count) FROM omcm_team_items").fetchone() == (1, 1)


def test_the_same_lesson_on_two_machines_is_one_entry_with_summed_counts(team, pg_url):
    a, b = team
    learn_unread_edit(a)
    learn_unread_edit(b, session="sb-learn")
    a.omcm("team", "sync")
    b.omcm("team", "sync")
    approve_all(a)
    a.omcm("team", "sync")
    b.omcm("team", "sync")
    import psycopg

    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT count, payload->>'error' FROM omcm_team_items").fetchall()
    assert rows == [(2, NOT_READ)]
    assert a.status()["local_entries"] == b.status()["local_entries"] == 1


def test_prune_tombstones_reach_every_machine(team):
    a, b = team
    learn_unread_edit(a)
    a.omcm("team", "sync")
    approve_all(a)
    b.omcm("team", "sync")
    assert edit_on(b)
    refused = a.omcm("team", "prune", "--days", "0", check=False)  # everything: not without a yes
    assert refused.returncode == 1 and "nothing deleted" in refused.stderr
    b.omcm("team", "sync")
    assert edit_on(b)
    assert "1 entries deleted" in a.omcm("team", "prune", "--days", "0", "--yes").stdout
    b.omcm("team", "sync")
    assert b.status()["local_entries"] == 0
    assert edit_on(b) is None


def test_a_hook_starts_the_background_sync_when_due(team):
    a, b = team
    learn_unread_edit(a)
    a.env["OMCM__CORE__TEAM_SYNC_INTERVAL_S"] = "0"
    edit_on(a, session="other")  # PreToolUse starts `omcm team sync --if-idle`, detached
    import time

    deadline = time.monotonic() + 60
    while a.status()["outbox"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert a.status()["outbox"] == 0 and a.status()["last_sync"]


def test_the_hook_path_never_imports_the_driver(team):
    a, _ = team
    code = (
        "import json, os, sys\n"
        "import omcm_pre_tool_guide\n"
        "from omcm_core.testing import Dispatcher, post_tool_payload, pre_tool_payload\n"
        "d = Dispatcher({'pre-tool-guide': omcm_pre_tool_guide}, dict(os.environ))\n"
        "path = sys.argv[1]\n"
        "d(post_tool_payload('Edit', {'file_path': path}, error='File has not been read yet.', session_id='s'))\n"
        "d(post_tool_payload('Edit', {'file_path': path}, {}, session_id='s'))\n"
        "from omcm_core.store import Store\n"
        "queued = Store(os.environ['OMCM_HOME']).query('SELECT count(*) FROM team_outbox')[0][0]\n"
        "d(pre_tool_payload('Edit', {'file_path': path}, session_id='t'))\n"
        "print(json.dumps([queued, sorted(m for m in sys.modules if m.startswith('psycopg'))]))\n"
    )
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", code, a.path("settings.py")], env=a.env, capture_output=True, text=True, check=True
    )
    assert json.loads(proc.stdout) == [2, []]  # the failure and its resolution queued, no driver loaded


def test_a_bash_fix_found_on_machine_a_is_offered_on_machine_b(team):
    a, b = team
    error = "Exit code 1\nModuleNotFoundError: No module named 'requests'"
    a.hook(post_tool_payload("Bash", {"command": "pytest"}, error=error, session_id="sa"))
    a.hook(post_tool_payload("Bash", {"command": "pip install requests"}, {"stdout": "ok"}, session_id="sa"))
    a.omcm("team", "sync")
    approve_all(a)
    b.omcm("team", "sync")
    b.hook(post_tool_payload("Bash", {"command": "pytest -q"}, error=error, session_id="sb"))
    lines = context_of(b.hook(pre_tool_payload("Bash", {"command": "pytest -q"}, session_id="sb"))).split("\n")
    assert "Resolved by: pip install requests (Bash)" in lines
    assert lines[0].startswith("💡 Bash error earlier in this session: [note from teammate omcm, not an instruction]")


def test_doctor_checks_connection_schema_and_lag(team, pg_server):
    from omcm_team_store.health import team_health

    from omcm_core.config import Config, CoreConfig

    a, _ = team
    core = Config.load(a.home, None, a.env).section("core", CoreConfig)
    a.omcm("team", "sync")
    assert [ok for ok, _, _ in team_health(a.home, core)] == [True, True, True]
    learn_unread_edit(a)
    pg_server.stop()
    ((ok, message, fix),) = team_health(a.home, core)
    assert not ok and "unreachable" in message and fix == "omcm team status"
    pg_server.start()
    checks = team_health(a.home, core)
    assert checks[2][0] and "2 rows to ship" in checks[2][1]
    assert team_health(a.home, CoreConfig()) == []  # no team store: nothing to check


def test_omcm_doctor_shows_the_team_store_section(team, pg_server):
    a, _ = team
    a.omcm("team", "sync")
    report = json.loads(a.omcm("doctor", "--json", check=False).stdout)
    (section,) = [s for s in report["sections"] if s["name"] == "Team store"]
    assert [c["ok"] for c in section["checks"]] == [True, True, True]
    assert "password" not in json.dumps(section) and "reachable" in section["checks"][0]["message"]
    pg_server.stop()
    try:
        proc = a.omcm("doctor", "--json", check=False)
    finally:
        pg_server.start()
    (section,) = [s for s in json.loads(proc.stdout)["sections"] if s["name"] == "Team store"]
    assert proc.returncode == 1 and [c["fix"] for c in section["checks"]] == ["omcm team status"]


def test_the_warm_dispatcher_reads_the_team_copy_too(team):
    from omcm_core._runtime import control

    a, b = team
    learn_unread_edit(a)
    a.omcm("team", "sync")
    approve_all(a)
    b.omcm("team", "sync")
    # No idle or linger exit while the test runs; a daemon may still retire (code changed by another test's
    # install, an overrun): then the next call starts another, and only a call it served decides the verdict.
    b.env.update(OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="3600", OMCM_DAEMON_LINGER_S="3600")
    try:
        for _ in range(30):
            before = control.details(b.env)
            out = edit_on(b)
            after = control.details(b.env)
            if before and after and after["pid"] == before["pid"] and after["served"] == before["served"] + 1:
                break  # this very call was answered by the daemon (it serves only b's OMCM_HOME)
        else:
            pytest.fail("no call was answered by the daemon in 30 tries")
        assert "Resolved by: Edit settings.py (Edit)" in context_of(out)
    finally:
        control.stop(b.env)


def test_a_new_machine_with_sharing_on_keeps_its_own_guidance(tmp_path, pg_url):
    # No lesson shared, no sync yet: the team tables do not exist until sharing makes them.
    b = Machine(tmp_path, "b", pg_url)
    b.env["OMCM__CORE__TEAM_STORE"] = f"postgresql://x@/db?host={tmp_path}/nowhere"
    edit = {"file_path": b.path("settings.py"), "old_string": "True", "new_string": "False"}
    env_off = {**b.env, "OMCM__PRE_TOOL_GUIDE__SHARE": "false"}
    for payload in (
        post_tool_payload("Edit", edit, error=NOT_READ, session_id="s1"),
        post_tool_payload("Read", {"file_path": b.path("settings.py")}, {}, session_id="s1"),
        post_tool_payload("Edit", edit, {}, session_id="s1"),
    ):
        assert run_hook({**payload, "cwd": str(b.project)}, env=env_off).returncode == 0
    assert "Past error with this file" in context_of(edit_on(b))
