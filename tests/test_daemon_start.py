"""The warm dispatcher listens before it imports what only some calls need (the detect-secrets detectors)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from omcm_core._runtime import daemon

pytestmark = pytest.mark.slow

#: A detect_secrets whose import blocks until the test lets it finish.
BLOCKING_DETECTORS = """
import os, time
while not os.path.exists(os.environ["RELEASE_DETECTORS"]):
    time.sleep(0.02)
raise ImportError("the test's stand-in")
"""


@pytest.fixture
def env(tmp_path, bash_guard_site):
    fake = tmp_path / "fake"
    (fake / "detect_secrets").mkdir(parents=True)
    (fake / "detect_secrets" / "__init__.py").write_text(BLOCKING_DETECTORS)
    values = {
        **os.environ,
        "OMCM_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.pathsep.join([str(fake), str(bash_guard_site)]),
        "OMCM_LOAD_PLUGINS": "bash-guard",
        "RELEASE_DETECTORS": str(tmp_path / "release"),
    }
    yield values
    (tmp_path / "release").touch()
    daemon.stop(values)


def test_daemon_listens_while_the_detectors_are_still_importing(env, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "omcm_core", "daemon", "run"], env=env)
    try:
        deadline = time.monotonic() + 120  # generous for a loaded machine; the old order never listened here
        while not daemon.status(env) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert daemon.status(env), "the daemon did not listen while detect_secrets was importing"
        assert not (tmp_path / "release").exists()  # so the detectors were still blocked
    finally:
        (tmp_path / "release").touch()
        daemon.stop(env)
        proc.wait(timeout=60)
