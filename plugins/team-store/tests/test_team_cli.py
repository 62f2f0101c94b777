"""`omcm team` as the team-store plugin contributes it: found through the plugin, clear without its driver."""

from __future__ import annotations

import os
import subprocess
import sys


def omcm(tmp_path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OMCM")}
    base.update(OMCM_HOME=str(tmp_path / "home"), OMCM_DAEMON="0", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], env=base, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )


def test_omcm_team_is_the_plugins_command(tmp_path):
    listed = " ".join(omcm(tmp_path, "--help").stdout.split())
    assert "team share lessons with a team through PostgreSQL (docs/teams.md) [team-store]" in listed
    gone = omcm(tmp_path, "team", "status", env={"OMCM_DISABLE_PLUGINS": "team-store"})
    assert gone.returncode == 2 and "'team' is not an omcm command" in gone.stderr


def test_status_without_the_driver_says_what_to_install_and_no_traceback(tmp_path):
    # A psycopg that cannot be imported, ahead of the real one on the path.
    fake = tmp_path / "fake" / "psycopg"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no psycopg here')\n")
    env = {"PYTHONPATH": str(fake.parent), "OMCM__CORE__TEAM_STORE": "postgresql://omcm@/team?host=/nowhere"}
    proc = omcm(tmp_path, "team", "status", env=env)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert (
        "connection_error: the PostgreSQL driver psycopg is not installed: omcm plugins install 'psycopg[binary]'"
        in proc.stdout
    )


def test_doctor_says_to_install_the_plugin_when_a_team_store_is_set_without_it(tmp_path):
    fake = tmp_path / "fake" / "omcm_team_store"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('not installed here')\n")
    env = {"PYTHONPATH": str(fake.parent), "OMCM__CORE__TEAM_STORE": "postgresql://omcm@/team?host=/nowhere"}
    proc = omcm(tmp_path, "doctor", "--json", env=env)
    import json

    (section,) = [s for s in json.loads(proc.stdout)["sections"] if s["name"] == "Team store"]
    ((check),) = section["checks"]
    assert check["id"] == "team.missing" and "plugins install" in check["fix"] and "team-store" in check["fix"]
    assert "Traceback" not in proc.stderr
