"""Core and plugins of different revisions: installed from a source that changed since, or from other commits.

Every bundled plugin is version 0.1.0, so versions cannot tell a new core with
old plugins (``pipx install --force ./`` after a ``git pull``: ``omcm lessons``
is then an invalid choice). The source each came from can: PEP 610 records the
folder (or the repository and commit) a distribution was installed from; a
folder whose files are newer than the installed distribution, or two commits
of one repository, mean the installation is not one revision. Editable
installs run their source as it is and are left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from omcm_core._cli.doctor.records import Check, Probe, ok, warning

#: Files looked at per source folder at most (a checkout's sources, not its data).
MAX_FILES = 5000
_SKIP = {".git", "__pycache__", "build", "dist", ".venv", "venv", "node_modules", ".tox", ".mypy_cache"}


def _installed_at(distribution: str) -> float | None:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import distribution as find

    try:
        found = find(distribution)
    except PackageNotFoundError:
        return None
    path = getattr(found, "_path", None)  # the .dist-info folder, written at install
    try:
        return os.stat(Path(str(path)) / "METADATA").st_mtime if path else None
    except OSError:
        return None


def newest_source(folder: Path) -> float:
    """The newest mtime among ``folder``'s source files (bounded; caches and builds skipped)."""
    newest, seen = 0.0, 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.endswith(".egg-info")]
        for name in files:
            if name.endswith((".py", ".toml", ".c", ".md", ".json", ".cfg")):
                seen += 1
                try:
                    newest = max(newest, os.stat(os.path.join(root, name)).st_mtime)
                except OSError:
                    continue
                if seen >= MAX_FILES:
                    return newest
    return newest


def stale(distributions: list[str]) -> tuple[list[str], str | None]:
    """(the distributions older than their source, the source to update from)."""
    from omcm_core._cli.plugin_install import CORE, source_of

    found: list[str] = []
    commits: dict[str, set[str]] = {}
    for dist in [CORE, *distributions]:
        origin, editable = source_of(dist)
        if editable or origin == dist:
            continue
        if "@" in origin and "+" in origin.split("://")[0]:  # git+URL@commit
            repo, _, commit = origin.rpartition("@")
            commits.setdefault(repo.split("#")[0].rsplit("/plugins/", 1)[0], set()).add(commit)
            continue
        folder = Path(origin)
        installed = _installed_at(dist)
        if folder.is_dir() and installed is not None and newest_source(folder) > installed + 1:
            found.append(dist)
    for repo, seen in commits.items():
        if len(seen) > 1:
            found.append(f"{repo} (installed from {len(seen)} different commits)")
    core_origin = source_of(CORE)[0]
    return found, (None if core_origin == CORE else core_origin)


def version_skew(probe: Probe) -> Iterator[Check]:
    from omcm_core._cli.plugin_install import omcm_command

    dists = sorted({info.distribution for info in probe.manager.infos.values() if info.distribution})
    found, source = stale(dists)
    if not found:
        yield ok("omcm.revision", "omcm-core and its plugins match the sources they were installed from")
        return
    command = f"{omcm_command(dict(probe.env))} update"
    yield warning(
        "omcm.revision",
        f"installed from a source that changed since, or from different revisions: {', '.join(found)}. "
        "A core and plugins of different revisions disagree (a plugin's command missing, an event not answered)",
        fix=command if source is None or not Path(source).is_dir() else f"{command} {source}",
        data={"stale": found, "source": source},
    )
