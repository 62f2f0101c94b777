"""Fixtures of the reliability suite (all prefixed ``rel_`` so they clash with nothing)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reliability_harness import PLUGIN_SOURCES, PluginSite, install_plugins  # noqa: E402


@pytest.fixture(scope="session")
def rel_site(tmp_path_factory: pytest.TempPathFactory) -> PluginSite:
    """Every test plugin in ``plugins/``, pip-installed once into a private site folder."""
    root = tmp_path_factory.mktemp("rel-site")
    scratch = root / "build"
    scratch.mkdir()
    site = root / "site"
    install_plugins(sorted(p for p in PLUGIN_SOURCES.iterdir() if (p / "pyproject.toml").exists()), site, scratch)
    return PluginSite(site)


@pytest.fixture
def rel_world(tmp_path: Path) -> dict[str, Path]:
    """A sandbox: ``root`` holds OMCM_HOME (``home``), a project (``project``) and a HOME (``user``).

    Everything under ``root`` except ``home`` is snapshotted by the tests that
    promise not to write outside OMCM_HOME.
    """
    root = tmp_path / "world"
    project = root / "project"
    user = root / "user-home"
    for folder in (project / ".claude", user):
        folder.mkdir(parents=True)
    (project / "README.md").write_text("a project\n")
    return {"root": root, "home": root / "omcm-home", "project": project, "user": user}
