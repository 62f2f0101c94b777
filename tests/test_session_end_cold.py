"""A cold SessionEnd (no warm dispatcher) answers at once and does its work after.

Claude Code cancels SessionEnd hooks after 1.5 s shared by all of them and
ignores their answer; short sessions (`claude mcp list`, a one-turn `claude -p`)
have no warm dispatcher, so the call imported every plugin first and, on a busy
machine, printed "SessionEnd hook ... failed: Hook cancelled". Here a plugin's
``session_end`` waits for a file the test writes only once ``omcm hook
SessionEnd`` has exited: it can only finish if the work outlives the hook.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="a detached child needs fork (POSIX)")

PLUGIN = """
import os, time
from pathlib import Path
from omcm_core import hookimpl


@hookimpl
def session_end(event, ctx):
    folder = Path(os.environ["SLOWEND_DIR"])
    (folder / "started").write_text(str(os.getpid()))
    for _ in range(400):  # up to 20 s
        if (folder / "go").exists():
            break
        time.sleep(0.05)
    (folder / "done").write_text("go" if (folder / "go").exists() else "no go")
"""


@pytest.fixture
def world(tmp_path):
    site, home = tmp_path / "site", tmp_path / "home"
    (site / "omcm_slowend-0.1.dist-info").mkdir(parents=True)
    (site / "omcm_slowend-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: omcm-slowend\nVersion: 0.1\n"
    )
    (site / "omcm_slowend-0.1.dist-info" / "entry_points.txt").write_text("[omcm]\nslowend = omcm_slowend\n")
    (site / "omcm_slowend.py").write_text(PLUGIN)
    home.mkdir()
    (home / "config.toml").write_text("[core]\nsession_end_budget_ms = 30000\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OMCM", "CLAUDE"))},
        "OMCM_HOME": str(home),
        "OMCM_LOAD_PLUGINS": "slowend",
        "PYTHONPATH": str(site),
        "SLOWEND_DIR": str(tmp_path),
        "OMCM_DAEMON_IDLE_S": "5",
    }
    yield tmp_path, env
    subprocess.run([sys.executable, "-m", "omcm_core", "daemon", "stop"], env=env, capture_output=True, timeout=60)


def session_end(tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    payload = {"hook_event_name": "SessionEnd", "session_id": "s1", "cwd": str(tmp_path), "reason": "other"}
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", "hook", "SessionEnd"],
        input=json.dumps(payload).encode(),
        capture_output=True,  # returns once both pipes close: a child holding them would hold this too
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


def wait_for(path: Path, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.read_text() if path.exists() else ""


def test_a_cold_session_end_answers_before_its_plugins_run(world):
    tmp_path, env = world
    done = session_end(tmp_path, env)
    assert done.returncode == 0 and done.stdout == b"", done.stderr
    assert not (tmp_path / "done").exists()  # answered while the plugin still waits
    assert wait_for(tmp_path / "started")  # ...in a process of its own, which goes on
    assert int((tmp_path / "started").read_text()) != os.getpid()
    (tmp_path / "go").write_text("")
    assert wait_for(tmp_path / "done") == "go"


def test_in_process_mode_still_runs_session_end_before_answering(world):
    tmp_path, env = world
    (tmp_path / "go").write_text("")  # nothing to wait for
    done = session_end(tmp_path, {**env, "OMCM_DAEMON": "0"})  # tests and people debugging: all in process
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "done").read_text() == "go"
