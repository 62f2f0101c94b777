"""The server's tables, versioned like the local store's: append migrations, never edit one.

Migrations only add (tables, columns, indexes), so during an upgrade an older
omcm keeps working on a newer schema: it names the columns it reads and writes
and ignores the rest. ``NEEDS`` is the version this code cannot work below.
"""

from __future__ import annotations

import secrets

from omcm_team_store import functions

MIGRATIONS = [
    """
    CREATE SEQUENCE omcm_team_seq;
    CREATE TABLE omcm_team_items (
        kind text NOT NULL,
        project text NOT NULL,
        key text NOT NULL,
        payload jsonb NOT NULL DEFAULT '{}',
        count bigint NOT NULL DEFAULT 0,
        deleted boolean NOT NULL DEFAULT false,
        updated_by text,
        server_seq bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (kind, project, key)
    );
    CREATE INDEX omcm_team_items_seq ON omcm_team_items (server_seq);
    CREATE TABLE omcm_team_origins (
        origin text PRIMARY KEY,
        last_seq bigint NOT NULL,
        user_id text,
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE omcm_team_meta (name text PRIMARY KEY, value text NOT NULL);
    """,
    # 2: members write as themselves. Two group roles per database (``omcm_<db>_member``,
    # ``omcm_<db>_reviewer``); a member's role may only read the tables and call the functions below, which
    # stamp the author from session_user, keep each author's entries theirs, bound rows and quotas, and let
    # only reviewers approve. The table owner (whoever ran `omcm team init`) is the admin.
    """
    CREATE FUNCTION omcm_team_group(what text) RETURNS text LANGUAGE sql IMMUTABLE
        AS $f$ SELECT 'omcm_' || current_database() || '_' || what $f$;
    DO $d$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = omcm_team_group('member')) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', omcm_team_group('member'));
        END IF;
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = omcm_team_group('reviewer')) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', omcm_team_group('reviewer'));
        END IF;
    END $d$;
    ALTER TABLE omcm_team_items ADD COLUMN id bigserial;
    ALTER TABLE omcm_team_items ADD COLUMN author text;
    ALTER TABLE omcm_team_items ADD COLUMN review text NOT NULL DEFAULT 'pending';
    ALTER TABLE omcm_team_items ADD COLUMN reviewed_by text;
    ALTER TABLE omcm_team_items ADD COLUMN reviewed_at timestamptz;
    CREATE UNIQUE INDEX omcm_team_items_id ON omcm_team_items (id);
    CREATE INDEX omcm_team_items_author ON omcm_team_items (author) WHERE NOT deleted;
    CREATE TABLE omcm_team_usage (
        member text NOT NULL,
        day date NOT NULL DEFAULT current_date,
        rows bigint NOT NULL DEFAULT 0,
        bytes bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (member, day)
    );
    INSERT INTO omcm_team_meta(name, value) VALUES
        ('review', 'on'), ('max_row_bytes', '4096'), ('member_rows_per_day', '2000'),
        ('member_bytes_per_day', '2000000'), ('member_entries', '5000')
        ON CONFLICT (name) DO NOTHING;

    CREATE FUNCTION omcm_team_setting(setting text, fallback bigint) RETURNS bigint LANGUAGE sql STABLE
        AS $f$ SELECT coalesce((SELECT value::bigint FROM omcm_team_meta WHERE name = setting), fallback) $f$;

    -- Ship one machine's outbox rows (a JSON array, in seq order) as session_user; returns how many were new.
    CREATE FUNCTION omcm_team_ship(p_origin text, p_rows jsonb) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    DECLARE
        me text := session_user;
        origin_key text := session_user || '/' || p_origin;  -- nobody can advance another member's origin
        last bigint;
        r jsonb;
        found_row omcm_team_items%ROWTYPE;
        n integer := 0;
        size integer;
        add bigint;
        max_row integer := omcm_team_setting('max_row_bytes', 4096);
        usage omcm_team_usage%ROWTYPE;
    BEGIN
        IF NOT pg_has_role(session_user, omcm_team_group('member'), 'MEMBER') THEN
            RAISE EXCEPTION 'omcm team: % is not a member of this team (ask the admin: omcm team member add)', me
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        PERFORM pg_advisory_xact_lock(1869439853);
        SELECT o.last_seq INTO last FROM omcm_team_origins o WHERE o.origin = origin_key;
        last := coalesce(last, 0);
        INSERT INTO omcm_team_usage(member) VALUES (me) ON CONFLICT DO NOTHING;
        SELECT * INTO usage FROM omcm_team_usage u WHERE u.member = me AND u.day = current_date;
        FOR r IN SELECT value FROM jsonb_array_elements(p_rows) LOOP
            CONTINUE WHEN (r->>'seq')::bigint <= last;
            last := (r->>'seq')::bigint;
            size := octet_length(r->>'kind') + octet_length(r->>'key') + octet_length(coalesce(r->'payload', '{}')::text);
            usage.rows := usage.rows + 1;
            usage.bytes := usage.bytes + size;
            IF usage.rows > omcm_team_setting('member_rows_per_day', 2000)
               OR usage.bytes > omcm_team_setting('member_bytes_per_day', 2000000) THEN
                RAISE EXCEPTION 'omcm team: % is over the daily quota (rows or bytes); the outbox waits', me
                    USING ERRCODE = 'program_limit_exceeded';
            END IF;
            n := n + 1;
            CONTINUE WHEN size > max_row OR jsonb_typeof(coalesce(r->'payload', '{}')) <> 'object'
                OR length(r->>'kind') > 100 OR length(r->>'project') > 64;
            add := least(greatest(coalesce((r->>'count')::bigint, 0), 0), 1);  -- a row adds at most 1
            SELECT * INTO found_row FROM omcm_team_items t
                WHERE t.kind = r->>'kind' AND t.project = r->>'project' AND t.key = r->>'key' FOR UPDATE;
            IF r->>'op' = 'delete' THEN
                -- Only the author deletes an entry (the admin prunes).
                UPDATE omcm_team_items t SET deleted = true, payload = '{}', count = 0,
                        server_seq = nextval('omcm_team_seq'), updated_at = now()
                    WHERE t.id = found_row.id AND t.author = me AND NOT t.deleted;
            ELSIF found_row.id IS NULL OR found_row.deleted THEN
                IF (SELECT count(*) FROM omcm_team_items t WHERE t.author = me AND NOT t.deleted)
                   >= omcm_team_setting('member_entries', 5000) THEN
                    CONTINUE;  -- over the member's quota of live entries: dropped, not an error
                END IF;
                INSERT INTO omcm_team_items AS t (kind, project, key, payload, count, deleted, updated_by,
                        server_seq, author, review, reviewed_by, reviewed_at)
                    VALUES (r->>'kind', r->>'project', r->>'key', coalesce(r->'payload', '{}'), add, false, me,
                        nextval('omcm_team_seq'), me, 'pending', NULL, NULL)
                    ON CONFLICT (kind, project, key) DO UPDATE SET payload = excluded.payload,
                        count = excluded.count, deleted = false, updated_by = me, server_seq = excluded.server_seq,
                        author = me, review = 'pending', reviewed_by = NULL, reviewed_at = NULL, updated_at = now();
            ELSIF found_row.author = me THEN
                -- The author's own entry: merged; a changed text needs a new review.
                UPDATE omcm_team_items t SET payload = t.payload || coalesce(r->'payload', '{}'),
                        count = t.count + add, updated_by = me, server_seq = nextval('omcm_team_seq'),
                        updated_at = now(),
                        review = CASE WHEN t.payload || coalesce(r->'payload', '{}') = t.payload THEN t.review
                                      ELSE 'pending' END
                    WHERE t.id = found_row.id;
            ELSIF add > 0 THEN
                -- Someone else's entry: another member met it too; its text stays its author's.
                UPDATE omcm_team_items t SET count = t.count + add, server_seq = nextval('omcm_team_seq'),
                        updated_at = now()
                    WHERE t.id = found_row.id;
            END IF;
        END LOOP;
        UPDATE omcm_team_usage u SET rows = usage.rows, bytes = usage.bytes WHERE u.member = me AND u.day = current_date;
        INSERT INTO omcm_team_origins(origin, last_seq, user_id) VALUES (origin_key, last, me)
            ON CONFLICT (origin) DO UPDATE SET last_seq = excluded.last_seq, updated_at = now();
        RETURN n;
    END $f$;

    -- A reviewer's verdict on entry p_id: 'approved' or 'rejected'.
    CREATE FUNCTION omcm_team_review(p_id bigint, p_verdict text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $f$
    BEGIN
        IF NOT pg_has_role(session_user, omcm_team_group('reviewer'), 'MEMBER') THEN
            RAISE EXCEPTION 'omcm team: % is not a reviewer of this team', session_user
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF p_verdict NOT IN ('approved', 'rejected') THEN
            RAISE EXCEPTION 'omcm team: a verdict is approved or rejected, not %', p_verdict;
        END IF;
        PERFORM pg_advisory_xact_lock(1869439853);
        UPDATE omcm_team_items t SET review = p_verdict, reviewed_by = session_user, reviewed_at = now(),
                server_seq = nextval('omcm_team_seq')
            WHERE t.id = p_id AND NOT t.deleted;
        RETURN FOUND;
    END $f$;

    DO $d$ DECLARE member text := omcm_team_group('member'); reviewer text := omcm_team_group('reviewer');
    BEGIN
        EXECUTE 'REVOKE CREATE ON SCHEMA public FROM PUBLIC';
        EXECUTE 'REVOKE ALL ON omcm_team_items, omcm_team_origins, omcm_team_meta, omcm_team_schema, '
             || 'omcm_team_usage, omcm_team_seq, omcm_team_items_id_seq FROM PUBLIC';
        EXECUTE 'REVOKE ALL ON FUNCTION omcm_team_ship(text, jsonb), omcm_team_review(bigint, text) FROM PUBLIC';
        EXECUTE format('GRANT SELECT ON omcm_team_items, omcm_team_meta, omcm_team_schema TO %I', member);
        EXECUTE format('GRANT EXECUTE ON FUNCTION omcm_team_ship(text, jsonb) TO %I', member);
        EXECUTE format('GRANT EXECUTE ON FUNCTION omcm_team_review(bigint, text) TO %I', reviewer);
        EXECUTE format('GRANT %I TO %I', member, reviewer);
    END $d$;
    """,
    # 3: repairs what members' temporary objects could do to the functions of migration 2 (their search_path
    # let a member's temporary table, sequence or type shadow the team's). A forged server_seq above the
    # team's own sequence (a member's temporary sequence stamped her rows) is renumbered in order, so every
    # member's sync, whose cursor jumped past later entries, sees it is beyond the server and starts over.
    # The functions themselves are replaced by functions.install, on every `omcm team init`.
    """
    DO $d$ DECLARE
        top bigint := (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM omcm_team_seq);
        forged record;
    BEGIN
        FOR forged IN SELECT id FROM omcm_team_items WHERE server_seq > top ORDER BY server_seq, id LOOP
            UPDATE omcm_team_items SET server_seq = nextval('omcm_team_seq') WHERE id = forged.id;
        END LOOP;
        UPDATE omcm_team_meta SET value = least(value::bigint, top)::text WHERE name = 'purged_through';
    END $d$;
    """,
]
NEEDS = 2
# One number for pg_advisory_xact_lock: writers take turns, so server_seq values commit in order
# and a reader that saw seq N never later finds a row below N appear.
WRITE_LOCK = 0x6F6D636D


def version(conn) -> int:
    """The server's schema version; 0 when ``omcm team init`` never ran."""
    exists = conn.execute("SELECT to_regclass('omcm_team_schema') IS NOT NULL").fetchone()[0]
    if not exists:
        return 0
    return conn.execute("SELECT coalesce(max(version), 0) FROM omcm_team_schema").fetchone()[0]


def migrate(conn) -> tuple[int, int]:
    """Apply the missing migrations, each in its own transaction; returns (version before, version after)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS omcm_team_schema "
            "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
    before = version(conn)
    for number, script in enumerate(MIGRATIONS[before:], start=before + 1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            if version(conn) >= number:  # another omcm team init got there first
                continue
            conn.execute(script)
            conn.execute("INSERT INTO omcm_team_schema(version) VALUES (%s)", (number,))
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        functions.install(conn)  # every init: an upgrade replaces the functions in place
        conn.execute(
            "INSERT INTO omcm_team_meta(name, value) VALUES ('project_salt', %s) ON CONFLICT (name) DO NOTHING",
            (secrets.token_hex(32),),
        )
    return before, version(conn)


def superuser(conn) -> bool:
    """Whether this connection's role is a superuser (it would own the tables and run the functions)."""
    return bool(conn.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user").fetchone()[0])
