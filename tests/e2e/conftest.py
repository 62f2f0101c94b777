"""Fixtures of the end-to-end suite: the real Claude Code client, omcm installed, a fake API.

``claude_binary`` installs the pinned client once (see claude_client.py). When
that fails, the tests fail if the environment variable CI is set (tests never
skip silently in CI) and are skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_client import CLIENT_VERSION, ClientUnavailable, install_client  # noqa: E402
from e2e_harness import Harness  # noqa: E402

#: The newest client the registry served when last checked; `OMCM_E2E_CLIENT=latest` runs the suite against it.
LATEST_CLIENT = "2.1.332"


def client_version() -> str:
    """The client the suite drives: the pinned one, or OMCM_E2E_CLIENT (a version, or ``latest``)."""
    wanted = os.environ.get("OMCM_E2E_CLIENT", "").strip()
    return LATEST_CLIENT if wanted == "latest" else wanted or CLIENT_VERSION


def client_or_skip(version: str) -> Path:
    try:
        return install_client(version)
    except ClientUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Claude Code client {version} unavailable (CI is set, so this fails): {exc}")
        pytest.skip(f"Claude Code client {version} unavailable: {exc}")


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    try:
        return install_client(client_version())
    except ClientUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Claude Code client unavailable (CI is set, so this fails): {exc}")
        pytest.skip(f"Claude Code client unavailable: {exc}")


@pytest.fixture(scope="session")
def misbehaving_site(tmp_path_factory) -> Path:
    """The reliability suite's rel-hang and rel-raise plugins pip-installed into a private folder (for PYTHONPATH)."""
    sources = Path(__file__).resolve().parents[1] / "reliability" / "plugins"
    work = tmp_path_factory.mktemp("misbehaving")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-build-isolation",
        "--no-deps",
        "--no-index",
        "--disable-pip-version-check",
        "-q",
        "--target",
        str(work / "site"),
    ]
    for name in ("rel-hang", "rel-raise"):
        copy = work / name
        copy.mkdir()
        for item in ("pyproject.toml", f"omcm_{name.replace('-', '_')}.py"):
            (copy / item).write_bytes((sources / name / item).read_bytes())
        cmd.append(str(copy))
    subprocess.run(cmd, check=True, capture_output=True)
    return work / "site"


@pytest.fixture
def e2e_factory(tmp_path: Path, claude_binary: Path):
    """``e2e_factory(extra_env={...}, config="...")``: a :class:`Harness` with its own options (see Harness)."""
    made = []

    def make(name: str = "world", **options) -> Harness:
        harness = Harness(tmp_path / name, claude_binary, **options)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.fixture
def e2e(e2e_factory) -> Harness:
    """A private HOME with omcm installed, an OMCM_HOME and a trusted project: ``e2e.session(script, prompt)``."""
    return e2e_factory()


@pytest.fixture(scope="session")
def every_event_site(tmp_path_factory) -> Path:
    """The third-party plugin answering every event (tests/events/plugin) pip-installed into a folder for PYTHONPATH."""
    work = tmp_path_factory.mktemp("every-event")
    source = Path(__file__).resolve().parents[1] / "events" / "plugin"
    shutil.copytree(source, work / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        pip + ["install", "--no-deps", "--no-build-isolation", "--target", str(work / "site"), str(work / "src")],
        check=True,
        capture_output=True,
    )
    return work / "site"


@pytest.fixture
def every_event_world(e2e_factory, every_event_site, claude_binary, tmp_path):
    """A harness whose only plugin is every-event, noting each call it gets in ``harness.log`` (JSON lines)."""
    log = tmp_path / "calls.jsonl"
    harness = e2e_factory(
        extra_env={
            "PATH": f"{claude_binary.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": str(every_event_site),
            "OMCM_LOAD_PLUGINS": "every-event",
            "OMCM_PASS_ENV": "EVERY_EVENT_*",
            "EVERY_EVENT_LOG": str(log),
        }
    )
    harness.log = log
    return harness
