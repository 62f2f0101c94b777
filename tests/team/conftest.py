"""Fixtures of the team-store tests: one real PostgreSQL server per test session."""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_server import PgServer, missing, start_server  # noqa: E402

_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A started PostgreSQL in a temporary folder. In CI a missing server fails the run instead of skipping."""
    if importlib.util.find_spec("omcm_team_store") is None:  # a tox cell without the plugin: nothing to serve
        pytest.skip("the team-store plugin (plugins/team-store) is not installed")
    reason = missing()
    if reason:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI needs the team-store tests: {reason}")
        pytest.skip(reason)
    server = start_server()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg_url(pg_server: PgServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A URL to a fresh database of its own on the server, dropped afterwards.

    A database per test, not a schema wiped in between: a background sync a
    hook started may still be running when its test ends, and must not write
    into the next test's tables.
    """
    import psycopg

    if not pg_server.running():
        pg_server.start()
    name = f"t{next(_numbers)}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_server.url.replace("/postgres?", f"/{name}?")
    if not pg_server.running():
        pg_server.start()
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
