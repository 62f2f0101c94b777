"""post-tool-observer's observations shared through one real PostgreSQL, end to end through `omcm hook` and `omcm search --team`."""

from __future__ import annotations

import json
import time

import pytest
from machines import REMOTES, Machine

from omcm_core.testing import post_tool_payload

pytestmark = pytest.mark.slow
pytest.importorskip("omcm_team_store", reason="the team-store plugin is not installed (a tox cell without it)")
pytest.importorskip("omcm_post_tool_observer", reason="post-tool-observer is not installed (the core-only tox cell)")

GITHUB_TOKEN = "ghp_" + "Zq9Yx8Wv7Ut6Sr5Qp4On3Ml2Kj1Ih0Gf9Ed8"


def observer(m: Machine, share: bool = True) -> Machine:
    m.env.update(
        OMCM_LOAD_PLUGINS="post-tool-observer,team-store",
        OMCM__POST_TOOL_OBSERVER__EMBEDDINGS="false",
        OMCM__POST_TOOL_OBSERVER__SHARE="true" if share else "false",
        # The output travels only when the user says so (structure, not values): these tests look for it.
        OMCM__POST_TOOL_OBSERVER__SHARE_OUTPUT="true",
    )
    # Tests sync by hand: a sync "started just now" keeps the hooks from starting one that races them.
    from omcm_core import team
    from omcm_core.store import Store

    store = Store(m.home)
    team.ready(store)
    with store.transaction() as conn:
        team.set_meta(conn, "sync_spawned", time.time())
    return m


@pytest.fixture
def team(tmp_path, pg_url):
    lead = Machine(tmp_path, "lead", pg_url)  # the admin: creates the schema and the members
    lead.omcm("team", "init", "--allow-superuser-owner")
    for name in ("alice", "bob"):
        lead.omcm("team", "member", "add", name, "--no-password")
    lead.omcm("team", "review", "mode", "off")  # observations are searched, not shown to Claude unasked
    a = observer(Machine(tmp_path, "a", pg_url.replace("omcm@", "alice@"), REMOTES[0]))
    b = observer(Machine(tmp_path, "b", pg_url.replace("omcm@", "bob@"), REMOTES[1]))  # the same repository, over ssh
    return a, b


def failing_migration(m: Machine) -> None:
    out = f"{m.project}/shop/migrations/0042_flimflam.py: column flimflam_total does not exist\nauth {GITHUB_TOKEN}\n"
    m.hook(post_tool_payload("Bash", {"command": f"cd {m.project} && ./manage.py migrate"}, {"stdout": out}))
    m.hook(post_tool_payload("Read", {"file_path": m.path("settings.py")}, {"type": "text"}))


def search(m: Machine, *args: str) -> list[dict]:
    return json.loads(m.omcm("search", "--team", "--json", *args).stdout)["results"]


def test_an_observation_recorded_on_a_is_found_on_b(team, pg_url):
    a, b = team
    failing_migration(a)
    assert "shipped 2" in a.omcm("team", "sync").stdout
    b.omcm("team", "sync")
    (hit,) = search(b, "flimflam")
    assert hit["by"] == "alice" and hit["this_project"] is True and hit["tool"] == "Bash"
    assert hit["output"].startswith("shop/migrations/0042_flimflam.py: column flimflam_total")
    assert [h["file"] for h in search(b, "--tool", "Read")] == ["settings.py"]
    shown = b.omcm("search", "--team", "flimflam").stdout
    assert "by alice, this project" in shown and "flimflam_total" in shown
    # What reached the server: no local absolute path, no secret.
    import psycopg

    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT key, payload::text FROM omcm_team_items").fetchall()
    text = json.dumps(rows)
    assert len(rows) == 2 and GITHUB_TOKEN not in text
    assert str(a.project) not in text and str(a.home) not in text and str(a.project.parent) not in text


def test_a_machine_with_share_off_ships_no_observation(tmp_path, pg_url):
    a = observer(Machine(tmp_path, "a", pg_url), share=False)
    b = observer(Machine(tmp_path, "b", pg_url))
    a.omcm("team", "init", "--allow-superuser-owner")
    a.omcm("team", "review", "mode", "off")
    failing_migration(a)
    assert "shipped 0" in a.omcm("team", "sync").stdout
    b.omcm("team", "sync")
    assert search(b, "flimflam") == []
    assert "flimflam" in a.omcm("search", "flimflam").stdout  # recorded locally all the same
