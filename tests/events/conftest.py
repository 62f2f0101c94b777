"""The third-party test plugin answering every event, built as a wheel and installed into a private folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).parent / "plugin"


@pytest.fixture(scope="session")
def every_event_site(tmp_path_factory) -> Path:
    """Put the folder on PYTHONPATH to make the plugin's entry point visible to a subprocess."""
    work = tmp_path_factory.mktemp("every-event")
    src = work / "src"
    shutil.copytree(PLUGIN, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    wheels = work / "wheels"
    subprocess.run(pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(src)], check=True)
    wheel = next(wheels.glob("omcm_every_event-*.whl"))
    subprocess.run(pip + ["install", "--no-deps", "--target", str(work / "site"), str(wheel)], check=True)
    return work / "site"
