"""Observations shared with the team: only when turned on, masked, small, no local path; never at the hook's cost.

Through real `omcm hook` subprocesses and a real store; no team server is
needed: what is checked is the local outbox the background sync would ship.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from omcm_core import team
from omcm_core.store import Store
from omcm_core.testing import post_tool_payload, run_hook

KIND = "post-tool-observer/observation"
UNREACHABLE = "postgresql://omcm@127.0.0.1:1/omcm?connect_timeout=1"
AWS_KEY = "AKIA" + "Q7ZK3M2XW9RTB4PD"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def machine(tmp_path):
    """An OMCM_HOME, a project under a fake home folder, and the environment a hook runs with."""
    user_home = tmp_path / "home" / "alice"
    project = user_home / "src" / "shop"
    (project / ".claude").mkdir(parents=True)
    omcm_home = tmp_path / "omcm-home"
    env = {
        "OMCM_HOME": str(omcm_home),
        "HOME": str(user_home),
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM_LOAD_PLUGINS": "post-tool-observer",
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
        "OMCM__CORE__TEAM_STORE": UNREACHABLE,
        "OMCM__POST_TOOL_OBSERVER__SHARE": "true",
        "OMCM__CORE__PLUGIN_BUDGET_MS": "60000",
        "OMCM__CORE__TEAM_SYNC_INTERVAL_S": "86400",
    }
    # A sync started "just now": the hooks start no background sync against the unreachable server.
    store = Store(omcm_home)
    team.ready(store)
    with store.transaction() as conn:
        team.set_meta(conn, "sync_spawned", time.time())
    return {"env": env, "project": project, "home": user_home, "omcm_home": omcm_home}


def hook(m, payload):
    proc = run_hook({**payload, "cwd": str(m["project"])}, env=m["env"])
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr
    return proc


def outbox(m) -> list[tuple[str, str, dict]]:
    store = Store(m["omcm_home"])
    team.ready(store)
    rows = store.query("SELECT kind, key, payload FROM team_outbox ORDER BY seq")
    return [(kind, key, json.loads(payload)) for kind, key, payload in rows]


def observations(m) -> int:
    return Store(m["omcm_home"]).query("SELECT count(*) FROM observer_events")[0][0]


def bash(m, command="pytest -q", stdout="", **extra):
    return post_tool_payload("Bash", {"command": command}, {"stdout": stdout, "stderr": ""}, **extra)


def test_nothing_is_queued_unless_share_is_on_and_a_team_store_is_set(machine):
    machine["env"]["OMCM__POST_TOOL_OBSERVER__SHARE"] = "false"
    hook(machine, bash(machine))
    machine["env"]["OMCM__POST_TOOL_OBSERVER__SHARE"] = "true"
    machine["env"]["OMCM__CORE__TEAM_STORE"] = ""
    hook(machine, bash(machine))
    assert observations(machine) == 2 and outbox(machine) == []
    machine["env"]["OMCM__CORE__TEAM_STORE"] = UNREACHABLE
    hook(machine, bash(machine, stdout="3 passed"))
    ((kind, _key, payload),) = outbox(machine)
    assert kind == KIND
    assert payload["tool"] == "Bash" and payload["input"] == "pytest -q" and payload.get("output") is None
    assert payload["success"] is True and payload["ts"] > 0


def test_the_output_stays_home_unless_the_user_shares_it(machine):
    """Structure, not values: the command's shape leaves, what it printed only with share_output."""
    hook(machine, bash(machine, command="psql -U admin -c 'select 1'", stdout="row: alice@example.com 4111"))
    machine["env"]["OMCM__POST_TOOL_OBSERVER__SHARE_OUTPUT"] = "true"
    hook(machine, bash(machine, stdout="3 passed"))
    (_, _, first), (_, _, second) = outbox(machine)
    assert first.get("output") is None and "alice" not in json.dumps(first)
    assert first["input"].startswith("psql -U <arg> -c <arg>") and "admin" not in first["input"]
    assert second["output"] == "3 passed"


def test_secrets_are_masked_and_no_local_path_leaves(machine):
    machine["env"]["OMCM__POST_TOOL_OBSERVER__SHARE_OUTPUT"] = "true"  # the output, when shared, is cleaned too
    project, home = str(machine["project"]), str(machine["home"])
    out = f"{project}/app/views.py:3: error\nconfig at {home}/.aws/credentials\nkey {AWS_KEY} token {GITHUB_TOKEN}\n"
    hook(machine, bash(machine, command=f"cd {project} && GH={GITHUB_TOKEN} make", stdout=out))
    hook(machine, post_tool_payload("Read", {"file_path": f"{project}/app/views.py"}, {"type": "text"}))
    hook(machine, post_tool_payload("Read", {"file_path": f"{home}/notes.md"}, {"type": "text"}))
    hook(machine, post_tool_payload("Read", {"file_path": "/etc/hosts"}, {"type": "text"}))
    rows = outbox(machine)
    text = json.dumps(rows)
    assert AWS_KEY not in text and GITHUB_TOKEN not in text
    assert project not in text and home not in text
    assert rows[0][2]["output"].startswith("app/views.py:3: error\nconfig at ~/.aws/credentials")
    assert rows[0][2]["input"] == "cd <arg> && <arg> make"  # the command's shape, no value
    assert [payload["file"] for _, _, payload in rows[1:]] == ["app/views.py", "~/notes.md", "hosts"]


def test_the_output_that_leaves_is_a_small_head(machine):
    machine["env"]["OMCM__POST_TOOL_OBSERVER__SHARE_OUTPUT"] = "true"
    hook(machine, bash(machine, stdout="x" * 9000))
    ((_, _, payload),) = outbox(machine)
    assert len(payload["output"]) <= 2000


def test_the_same_call_queued_twice_has_one_key(machine):
    payload = bash(machine, tool_use_id="toolu_same")
    hook(machine, payload)
    hook(machine, payload)
    keys = {key for _, key, _ in outbox(machine)}
    assert len(keys) == 1 and "toolu_same" in keys.pop()


def test_excluded_tools_are_never_shared(machine):
    hook(machine, post_tool_payload("TodoWrite", {"todos": []}, {}))
    machine["env"]["OMCM__POST_TOOL_OBSERVER__EXCLUDE_TOOLS"] = '["Bash"]'
    hook(machine, bash(machine))
    assert outbox(machine) == []
    hook(machine, post_tool_payload("Read", {"file_path": "/etc/hosts"}, {"type": "text"}))
    assert [payload["tool"] for _, _, payload in outbox(machine)] == ["Read"]


def test_a_projects_config_cannot_turn_sharing_on(machine):
    machine["env"]["OMCM__POST_TOOL_OBSERVER__SHARE"] = "false"
    (machine["project"] / ".claude" / "omcm.toml").write_text("[post-tool-observer]\nshare = true\n")
    hook(machine, bash(machine))
    assert observations(machine) == 1 and outbox(machine) == []
    assert "config_project_key_ignored" in (machine["omcm_home"] / "logs" / "omcm.jsonl").read_text()


def test_a_sharing_failure_still_records_locally_and_answers_nothing(machine):
    store = Store(machine["omcm_home"])
    with store.transaction() as conn:
        conn.execute("DROP TABLE team_outbox")  # every queued row now fails
    hook(machine, bash(machine, stdout="still recorded"))
    assert observations(machine) == 1
    log = (machine["omcm_home"] / "logs" / "omcm.jsonl").read_text()
    assert "team_share_failed" in log


def omcm(m, *args):
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args],
        env={**os.environ, **m["env"]},
        cwd=str(m["project"]),
        capture_output=True,
        text=True,
        timeout=120,
    )


def put_team_items(m, *items):
    store = Store(m["omcm_home"])
    with store.transaction() as conn:
        for seq, (key, payload, by) in enumerate(items, 1):
            conn.execute(
                "INSERT INTO team_items(kind, project, key, payload, count, updated_by, server_seq) "
                "VALUES(?, 'p-other', ?, ?, 1, ?, ?)",
                (KIND, key, json.dumps(payload), by, seq),
            )


def keys(m, *args):
    proc = omcm(m, "search", "--team", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return [hit["key"] for hit in json.loads(proc.stdout)["results"]]


def test_search_team_reads_the_local_copy_with_the_filters(machine):
    put_team_items(
        machine,
        (
            "s/1",
            {"tool": "Bash", "input": "make", "output": "linker: zorblax undefined", "success": False, "ts": 2},
            "bob",
        ),
        ("s/2", {"tool": "Read", "file": "app/zorblax.py", "output": "pass", "success": True, "ts": 1}, "carol"),
        ("s/3", {"tool": "Bash", "input": "ls", "output": "nothing here", "success": True, "ts": 3}, "bob"),
    )
    found = json.loads(omcm(machine, "search", "--team", "ZORBLAX", "--json").stdout)["results"]
    assert [(hit["key"], hit["by"], hit["this_project"]) for hit in found] == [
        ("s/1", "bob", False),
        ("s/2", "carol", False),
    ]
    assert keys(machine, "zorblax", "--tool", "read") == ["s/2"]
    assert keys(machine, "--failures") == ["s/1"]
    assert keys(machine, "--file", "app/") == ["s/2"]
    assert keys(machine, "--limit", "1") == ["s/3"]
    shown = omcm(machine, "search", "--team", "zorblax")
    assert shown.returncode == 0 and "linker: zorblax undefined" in shown.stdout and "other project" in shown.stdout


def test_search_team_without_a_team_store_says_so(machine):
    machine["env"]["OMCM__CORE__TEAM_STORE"] = ""
    proc = omcm(machine, "search", "--team", "anything")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no team store" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_doctor_says_whether_observations_are_shared(machine):
    assert "team sharing: on" in omcm(machine, "doctor").stdout
    machine["env"]["OMCM__POST_TOOL_OBSERVER__SHARE"] = "false"
    assert "team sharing: off" in omcm(machine, "doctor").stdout
