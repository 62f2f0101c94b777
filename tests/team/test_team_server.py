"""The team store's server side on a real PostgreSQL: schema versions, idempotent shipping, masking."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from omcm_core import team
from omcm_core.config import Config, CoreConfig
from omcm_core.context import Context

pytest.importorskip("omcm_team_store", reason="the team-store plugin is not installed (a tox cell without it)")
from omcm_team_store import admin, schema, server  # noqa: E402
from omcm_team_store.sync import sync  # noqa: E402


def rows(n: int, start: int = 1, key: str = "k") -> list[dict]:
    return [
        {"seq": s, "kind": "t/x", "project": "p", "key": key, "op": "add", "count": 1, "payload": json.dumps({"n": s})}
        for s in range(start, start + n)
    ]


@pytest.fixture
def conn(pg_url):
    c = server.connect(pg_url)
    schema.migrate(c)
    yield c
    c.close()


def test_init_is_versioned_and_idempotent(pg_url):
    with server.connect(pg_url) as c:
        assert schema.version(c) == 0
        assert schema.migrate(c) == (0, len(schema.MIGRATIONS))
        salt = server.salt(c)
        assert schema.migrate(c) == (len(schema.MIGRATIONS), len(schema.MIGRATIONS))
        assert server.salt(c) == salt  # the project ids stay stable across re-runs


def test_a_batch_shipped_twice_counts_once(conn):
    assert server.ship(conn, "o1", rows(3)) == 3
    assert server.ship(conn, "o1", rows(3)) == 0  # the retry after a lost acknowledgement
    assert server.ship(conn, "o1", rows(4)) == 1  # a longer retry: only the new row counts
    assert server.ship(conn, "o2", rows(2)) == 2  # another machine's sequence is its own
    ((count, payload),) = conn.execute("SELECT count, payload FROM omcm_team_items").fetchall()
    assert count == 6 and payload == {"n": 2}  # merged key by key, last shipped wins


def test_changes_come_in_server_order_whatever_the_clients_clocks(conn):
    server.ship(conn, "late-clock", rows(1, key="first"))
    server.ship(conn, "early-clock", rows(1, key="second"))
    assert [r[3] for r in server.changes(conn, 0, 10)] == ["first", "second"]
    after = server.changes(conn, 0, 10)[0][-1]
    assert [r[3] for r in server.changes(conn, after, 10)] == ["second"]


def test_a_tombstone_then_a_new_lesson_starts_the_count_over(conn):
    server.ship(conn, "o", rows(2))
    server.ship(conn, "o", [{**rows(1, start=3)[0], "op": "delete", "count": 0, "payload": "{}"}])
    assert conn.execute("SELECT deleted, count FROM omcm_team_items").fetchone() == (True, 0)
    server.ship(conn, "o", rows(1, start=4))
    assert conn.execute("SELECT deleted, count, payload FROM omcm_team_items").fetchone() == (False, 1, {"n": 4})


def test_an_older_omcm_works_on_a_newer_schema(tmp_path, conn, pg_url):
    # What a later migration may do: add a column and a table, and record version N+1.
    conn.execute("ALTER TABLE omcm_team_items ADD COLUMN language text DEFAULT 'en'")
    conn.execute("CREATE TABLE omcm_team_future (x int)")
    conn.execute("INSERT INTO omcm_team_schema(version) VALUES (%s)", (len(schema.MIGRATIONS) + 1,))
    home = tmp_path / "home"
    ctx = _ctx(home, pg_url)
    team.share(ctx, "t/x", "k", {"a": 1})
    report = sync(home, ctx.core_config)
    assert (report.shipped, report.fetched, report.error) == (1, 1, None)


def test_a_server_without_the_schema_keeps_the_outbox_and_says_what_to_run(tmp_path, pg_url):
    home = tmp_path / "home"
    ctx = _ctx(home, pg_url)
    team.share(ctx, "t/x", "k", {"a": 1})
    report = sync(home, ctx.core_config)
    assert "omcm team init" in report.error
    assert ctx.store.query("SELECT count(*) FROM team_outbox") == [(1,)]


def test_shared_rows_are_masked_and_name_no_path(tmp_path, conn, pg_url):
    home = tmp_path / "home"
    project = tmp_path / "secret-project-name"
    project.mkdir()
    ctx = _ctx(home, pg_url, project)
    team.share(ctx, "t/x", "k", {"error": "auth failed: password=hunter2 token ghp_" + "a" * 36, "gone": None})
    sync(home, ctx.core_config)
    ((proj, payload, user),) = conn.execute("SELECT project, payload::text, author FROM omcm_team_items")
    assert "hunter2" not in payload and "ghp_" + "a" * 36 not in payload and "gone" not in payload
    assert "secret-project-name" not in proj and len(proj) == 32
    assert user == "omcm"  # stamped by the server: the role the sync connected as


def test_the_url_password_never_reaches_output_or_logs(tmp_path, pg_server):
    url = pg_server.url.replace("omcm@", "omcm:S3cretPw@").replace("/postgres", "/nosuchdb")
    env = {"OMCM_HOME": str(tmp_path / "home"), "OMCM__CORE__TEAM_STORE": url, "PATH": "/usr/bin:/bin"}
    for args in (["team", "status", "--json"], ["team", "sync"], ["team", "init"]):
        proc = subprocess.run([sys.executable, "-m", "omcm_core", *args], env=env, capture_output=True, text=True)
        assert proc.returncode == 1 and "S3cretPw" not in proc.stdout + proc.stderr
        assert "nosuchdb" in proc.stdout + proc.stderr  # the failure is still said
    logs = "".join(p.read_text() for p in (tmp_path / "home").rglob("*.log")) if (tmp_path / "home").exists() else ""
    assert "S3cretPw" not in logs
    assert server.mask_url("host=db password='a b' user=x") == "host=db password=*** user=x"


def _ctx(home, url, project=None):
    env = {"OMCM__CORE__TEAM_STORE": url}
    return Context("tester", home, project, Config.load(home, project, env), env)


def test_core_config_reads_the_team_store_from_env_not_from_a_project(tmp_path):
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "omcm.toml").write_text('[core]\nteam_store = "postgresql://evil/db"\nlanguage = "ko"\n')
    core = Config.load(tmp_path / "home", project, {}).section("core", CoreConfig)
    assert core.team_store == "" and core.language == "ko"
    env = {"OMCM__CORE__TEAM_STORE": "postgresql://team/db"}
    assert Config.load(tmp_path / "home", project, env).section("core", CoreConfig).team_store == "postgresql://team/db"


def test_a_project_cannot_turn_sharing_on(tmp_path):
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "omcm.toml").write_text("[pre-tool-guide]\nshare = true\n")
    assert "share" not in Config.load(tmp_path / "home", project, {}).sections.get("pre-tool-guide", {})
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text("[pre-tool-guide]\nshare = true\n")
    assert Config.load(tmp_path / "home", project, {}).sections["pre-tool-guide"]["share"] is True


@pytest.mark.parametrize(
    "url",
    ["https://user:tok@GitHub.com/Acme/Shop.git", "git@github.com:acme/shop.git", "ssh://git@github.com/acme/shop/"],
)
def test_one_project_id_for_every_clone_url(url):
    assert team.normalize_remote(url) == "github.com/acme/shop"


def test_another_server_means_the_local_copy_starts_over(tmp_path, conn, pg_url):
    admin.set_review(conn, on=False)  # the local copy then holds unreviewed entries too
    home = tmp_path / "home"
    ctx = _ctx(home, pg_url)
    team.share(ctx, "t/x", "k", {"a": 1})
    sync(home, ctx.core_config)
    assert ctx.store.query("SELECT count(*) FROM team_items") == [(1,)]
    # The server is replaced by an empty one (another URL, or dropped and created again).
    conn.execute("DROP SCHEMA public CASCADE")
    conn.execute("CREATE SCHEMA public")
    schema.migrate(conn)
    report = sync(home, ctx.core_config)
    assert report.error is None and ctx.store.query("SELECT count(*) FROM team_items") == [(0,)]
    assert team.get_meta(ctx.store, "cursor") is None


def test_forget_deletes_the_entry_on_every_machine(tmp_path, conn, pg_url):
    admin.set_review(conn, on=False)
    homes = [tmp_path / "a", tmp_path / "b"]
    ctxs = [_ctx(h, pg_url) for h in homes]
    team.share(ctxs[0], "t/x", "k", {"a": 1})
    team.share(ctxs[1], "t/x", "k", {"b": 2})
    for h, c in zip(homes, ctxs, strict=True):
        sync(h, c.core_config)
    sync(homes[0], ctxs[0].core_config)
    assert ctxs[0].store.query("SELECT count, payload FROM team_items") == [(2, '{"a": 1, "b": 2}')]
    team.forget(ctxs[1], "t/x", "k")
    sync(homes[1], ctxs[1].core_config)
    sync(homes[0], ctxs[0].core_config)
    assert [c.store.query("SELECT count(*) FROM team_items") for c in ctxs] == [[(0,)], [(0,)]]
    assert conn.execute("SELECT deleted FROM omcm_team_items").fetchall() == [(True,)]


def test_an_unreachable_server_never_grows_the_outbox_past_its_cap(tmp_path, monkeypatch):
    from omcm_team_store import sync as sync_module

    monkeypatch.setattr(sync_module, "MAX_OUTBOX", 3)
    home = tmp_path / "home"
    ctx = _ctx(home, f"postgresql://x@/db?host={tmp_path}/nowhere")
    for n in range(5):
        team.share(ctx, "t/x", f"k{n}", {})
    assert sync(home, ctx.core_config).error
    assert ctx.store.query("SELECT key FROM team_outbox ORDER BY seq") == [("k2",), ("k3",), ("k4",)]
