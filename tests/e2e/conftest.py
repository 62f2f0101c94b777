"""Fixtures of the end-to-end suite: the real Claude Code client, omcm installed, a fake API.

``claude_binary`` installs the pinned client once (see claude_client.py). When
that fails, the tests fail if the environment variable CI is set (tests never
skip silently in CI) and are skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_client import ClientUnavailable, install_client  # noqa: E402
from e2e_harness import Harness  # noqa: E402


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    try:
        return install_client()
    except ClientUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Claude Code client unavailable (CI is set, so this fails): {exc}")
        pytest.skip(f"Claude Code client unavailable: {exc}")


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
