"""Fixtures of the team-store tests: one real PostgreSQL server per test session."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_server import PgServer, missing, start_server  # noqa: E402


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A started PostgreSQL in a temporary folder. In CI a missing server fails the run instead of skipping."""
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
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The server's URL with an empty schema for this test (tables dropped afterwards)."""
    if not pg_server.running():
        pg_server.start()
    yield pg_server.url
    if not pg_server.running():
        pg_server.start()
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
