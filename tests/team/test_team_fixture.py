"""The PostgreSQL fixture itself: a missing server skips with a reason locally and fails in CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("ci", ["true", ""])
def test_a_missing_server_fails_in_ci_and_skips_with_how_to_install_elsewhere(tmp_path, ci):
    for name in ("conftest.py", "pg_server.py"):  # the real fixture, in a run of its own
        (tmp_path / name).write_text((HERE / name).read_text())
    (tmp_path / "test_needs_pg.py").write_text("def test_it(pg_server):\n    pass\n")
    env = {**os.environ, "CI": ci, "OMCM_PG_BINDIR": str(tmp_path / "no-such-dir")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:xdist", "-p", "no:cacheprovider", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    if ci:
        assert proc.returncode != 0 and "CI needs the team-store tests" in proc.stdout, proc.stdout
    else:
        assert proc.returncode == 0 and "1 skipped" in proc.stdout and "apt-get install postgresql" in proc.stdout


def test_the_server_runs_without_root_privileges(pg_server):
    import psycopg

    with psycopg.connect(pg_server.url) as conn:
        data = conn.execute("SELECT current_setting('data_directory')").fetchone()[0]
    assert os.stat(data).st_uid != 0  # as root, the server runs as nobody; as a user, as that user
