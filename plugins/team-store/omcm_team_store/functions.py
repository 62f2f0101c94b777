"""The team server's functions, replaced (CREATE OR REPLACE) by every ``omcm team init``.

``omcm_team_ship`` and ``omcm_team_review`` run with the tables' owner's rights
(SECURITY DEFINER) for callers who are only members. Following PostgreSQL's
"Writing SECURITY DEFINER Functions Safely", nothing in them is found through
the caller's search path: each function sets ``search_path = pg_catalog,
pg_temp`` (the caller's temporary schema last: it is searched for tables,
sequences and types, never for functions or operators), and every table and
sequence is named with its schema, ``@S@`` below, filled in with the schema that
holds the tables; the schema's own functions are called with arguments of their
exact types, so an overload a member could add (where she may create objects)
is never a better match. A member's temporary ``omcm_team_items`` with a trigger, her
temporary ``omcm_team_meta`` or ``omcm_team_usage`` lifting the quotas, her
temporary ``omcm_team_seq`` forging sequence numbers, or a temporary type named
``text``: none is ever used (tests/team/test_team_definer.py plays each).

Unlike migrations, this script is not frozen: a fix to a function is a new
``VERSION`` here, applied by the next ``omcm team init`` (an older omcm never
puts back an older version: see :func:`install`).
"""

from __future__ import annotations

VERSION = 3  # the functions' own version, kept in omcm_team_meta ('functions')

SCRIPT = """
CREATE OR REPLACE FUNCTION @S@.omcm_team_group(what text) RETURNS text LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
    AS $f$ SELECT 'omcm_' || pg_catalog.current_database() || '_' || what $f$;

CREATE OR REPLACE FUNCTION @S@.omcm_team_setting(setting text, fallback bigint) RETURNS bigint LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
    AS $f$ SELECT coalesce((SELECT m.value::bigint FROM @S@.omcm_team_meta m WHERE m.name = setting), fallback) $f$;

-- Ship one machine's outbox rows (a JSON array, in seq order) as session_user; returns how many were new.
CREATE OR REPLACE FUNCTION @S@.omcm_team_ship(p_origin text, p_rows jsonb) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
    me text := session_user;
    origin_key text := session_user || '/' || p_origin;  -- nobody can advance another member's origin
    last bigint;
    r jsonb;
    found_row @S@.omcm_team_items%ROWTYPE;
    n integer := 0;
    size integer;
    add bigint;
    max_row integer := @S@.omcm_team_setting('max_row_bytes'::text, 4096::bigint);
    max_rows bigint := @S@.omcm_team_setting('member_rows_per_day'::text, 2000::bigint);
    max_bytes bigint := @S@.omcm_team_setting('member_bytes_per_day'::text, 2000000::bigint);
    max_entries bigint := @S@.omcm_team_setting('member_entries'::text, 5000::bigint);
    usage @S@.omcm_team_usage%ROWTYPE;
BEGIN
    IF NOT pg_has_role(session_user, @S@.omcm_team_group('member'::text), 'MEMBER') THEN
        RAISE EXCEPTION 'omcm team: % is not a member of this team (ask the admin: omcm team member add)', me
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF length(p_origin) > 64 THEN  -- a machine's id is 26 characters; a row of omcm_team_origins stays small
        RAISE EXCEPTION 'omcm team: a machine id is at most 64 characters' USING ERRCODE = 'program_limit_exceeded';
    END IF;
    PERFORM pg_advisory_xact_lock(1869439853);
    SELECT o.last_seq INTO last FROM @S@.omcm_team_origins o WHERE o.origin = origin_key;
    IF last IS NULL AND (SELECT count(*) FROM @S@.omcm_team_origins o WHERE o.user_id = me)
            >= @S@.omcm_team_setting('member_origins'::text, 1000::bigint) THEN
        -- Each machine (each fresh local store) is one row: a member cannot fill the server with them.
        RAISE EXCEPTION 'omcm team: % ships from too many machines (member_origins); ask the admin', me
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    last := coalesce(last, 0);
    INSERT INTO @S@.omcm_team_usage AS u (member) VALUES (me) ON CONFLICT DO NOTHING;
    SELECT * INTO usage FROM @S@.omcm_team_usage u WHERE u.member = me AND u.day = current_date;
    FOR r IN SELECT value FROM jsonb_array_elements(p_rows) LOOP
        CONTINUE WHEN (r->>'seq')::bigint <= last;
        last := (r->>'seq')::bigint;
        size := octet_length(r->>'kind') + octet_length(r->>'key') + octet_length(coalesce(r->'payload', '{}')::text);
        usage.rows := usage.rows + 1;
        usage.bytes := usage.bytes + size;
        IF usage.rows > max_rows OR usage.bytes > max_bytes THEN
            RAISE EXCEPTION 'omcm team: % is over the daily quota (rows or bytes); the outbox waits', me
                USING ERRCODE = 'program_limit_exceeded';
        END IF;
        n := n + 1;
        CONTINUE WHEN size > max_row OR jsonb_typeof(coalesce(r->'payload', '{}')) <> 'object'
            OR length(r->>'kind') > 100 OR length(r->>'project') > 64;
        add := least(greatest(coalesce((r->>'count')::bigint, 0), 0), 1);  -- a row adds at most 1
        SELECT * INTO found_row FROM @S@.omcm_team_items t
            WHERE t.kind = r->>'kind' AND t.project = r->>'project' AND t.key = r->>'key' FOR UPDATE;
        IF r->>'op' = 'delete' THEN
            -- Only the author deletes an entry (the admin prunes).
            UPDATE @S@.omcm_team_items t SET deleted = true, payload = '{}', count = 0,
                    server_seq = nextval(@SEQ@), updated_at = now()
                WHERE t.id = found_row.id AND t.author = me AND NOT t.deleted;
        ELSIF found_row.id IS NULL OR found_row.deleted THEN
            IF (SELECT count(*) FROM @S@.omcm_team_items t WHERE t.author = me AND NOT t.deleted) >= max_entries THEN
                CONTINUE;  -- over the member's quota of live entries: dropped, not an error
            END IF;
            INSERT INTO @S@.omcm_team_items AS t (kind, project, key, payload, count, deleted, updated_by,
                    server_seq, author, review, reviewed_by, reviewed_at)
                VALUES (r->>'kind', r->>'project', r->>'key', coalesce(r->'payload', '{}'), add, false, me,
                    nextval(@SEQ@), me, 'pending', NULL, NULL)
                ON CONFLICT (kind, project, key) DO UPDATE SET payload = excluded.payload,
                    count = excluded.count, deleted = false, updated_by = me, server_seq = excluded.server_seq,
                    author = me, review = 'pending', reviewed_by = NULL, reviewed_at = NULL, updated_at = now();
        ELSIF found_row.author = me THEN
            -- The author's own entry: merged; a changed text needs a new review.
            UPDATE @S@.omcm_team_items t SET payload = t.payload || coalesce(r->'payload', '{}'),
                    count = t.count + add, updated_by = me, server_seq = nextval(@SEQ@),
                    updated_at = now(),
                    review = CASE WHEN t.payload || coalesce(r->'payload', '{}') = t.payload THEN t.review
                                  ELSE 'pending' END
                WHERE t.id = found_row.id;
        ELSIF add > 0 THEN
            -- Someone else's entry: another member met it too; its text stays its author's.
            UPDATE @S@.omcm_team_items t SET count = t.count + add, server_seq = nextval(@SEQ@),
                    updated_at = now()
                WHERE t.id = found_row.id;
        END IF;
    END LOOP;
    UPDATE @S@.omcm_team_usage u SET rows = usage.rows, bytes = usage.bytes
        WHERE u.member = me AND u.day = current_date;
    INSERT INTO @S@.omcm_team_origins AS o (origin, last_seq, user_id) VALUES (origin_key, last, me)
        ON CONFLICT (origin) DO UPDATE SET last_seq = excluded.last_seq, updated_at = now();
    RETURN n;
END $f$;

-- A reviewer's verdict on entry p_id: 'approved' or 'rejected'.
CREATE OR REPLACE FUNCTION @S@.omcm_team_review(p_id bigint, p_verdict text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
    IF NOT pg_has_role(session_user, @S@.omcm_team_group('reviewer'::text), 'MEMBER') THEN
        RAISE EXCEPTION 'omcm team: % is not a reviewer of this team', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF p_verdict NOT IN ('approved', 'rejected') THEN
        RAISE EXCEPTION 'omcm team: a verdict is approved or rejected, not %', p_verdict;
    END IF;
    PERFORM pg_advisory_xact_lock(1869439853);
    UPDATE @S@.omcm_team_items t SET review = p_verdict, reviewed_by = session_user, reviewed_at = now(),
            server_seq = nextval(@SEQ@)
        WHERE t.id = p_id AND NOT t.deleted;
    RETURN FOUND;
END $f$;

REVOKE CREATE ON SCHEMA @S@ FROM PUBLIC;  -- a warning only where the admin does not own the schema
REVOKE ALL ON FUNCTION @S@.omcm_team_ship(text, jsonb), @S@.omcm_team_review(bigint, text) FROM PUBLIC;
"""


def install(conn) -> bool:
    """Replace the functions in the tables' schema unless the server has newer ones; True when replaced.

    Runs in the caller's transaction, under the write lock. The grants (migration 2) survive a replace.
    """
    from psycopg import sql

    found = conn.execute("SELECT value FROM omcm_team_meta WHERE name = 'functions'").fetchone()
    if found and int(found[0]) > VERSION:  # a newer omcm's functions: never put older ones back
        return False
    (name,) = conn.execute(
        "SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.oid = 'omcm_team_items'::pg_catalog.regclass"
    ).fetchone()
    schema = sql.Identifier(name).as_string(conn)
    sequence = sql.Literal(f"{schema}.omcm_team_seq").as_string(conn) + "::pg_catalog.regclass"
    conn.execute(SCRIPT.replace("@SEQ@", sequence).replace("@S@", schema).encode())
    conn.execute(
        "INSERT INTO omcm_team_meta(name, value) VALUES ('functions', %s) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (str(VERSION),),
    )
    return True
