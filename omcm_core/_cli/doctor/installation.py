"""Installation: this omcm, its Python, and OMCM_HOME (owner-only, or doctor says so)."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from omcm_core import __version__
from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning


def installation(probe: Probe) -> Iterator[Check]:
    yield ok(
        "omcm.version",
        f"omcm {__version__} on Python {sys.version.split()[0]} ({sys.executable})",
        data={"version": __version__, "python": sys.version.split()[0], "executable": sys.executable},
    )
    yield from _venv_place(probe)
    from omcm_core._cli.doctor.skew import version_skew

    yield from version_skew(probe)
    yield _home(probe)


def _venv_place(probe: Probe) -> Iterator[Check]:
    # A venv made by `python -m venv` is 0755: inside OMCM_HOME it opens the folder to other users.
    prefix, home = Path(sys.prefix), probe.home
    if prefix != Path(sys.base_prefix) and (prefix == home or home in prefix.parents):
        yield warning(
            "omcm.venv_in_home",
            f"omcm's virtualenv {probe.tilde(prefix)} is inside OMCM_HOME, which holds private data; "
            "install it as a tool instead (pipx or uv tool, see the README)",
        )


def _home(probe: Probe) -> Check:
    home, shown = probe.home, probe.tilde(probe.home)
    try:
        st = home.stat()
    except FileNotFoundError:
        probe.store_blocked = f"{shown} does not exist yet"
        return info("home.mode", f"{shown} does not exist yet: omcm makes it (owner-only) when it first runs")
    except OSError as exc:
        probe.store_blocked = f"{shown} is unusable"
        return error("home.mode", f"{shown} is unusable: {exc}")
    mode = stat.S_IMODE(st.st_mode)
    data = {"path": str(home), "mode": f"{mode:04o}"}
    if not stat.S_ISDIR(st.st_mode):
        probe.store_blocked = f"{shown} is not a folder"
        return error("home.mode", f"{shown} is not a folder", fix=f"mv {shown} {shown}.bak", data=data)
    if os.name != "posix" or not mode & 0o077:
        return ok("home.mode", f"{shown} is private (mode {mode:04o})", data=data)
    if probe.fix:
        home.chmod(0o700)
        return ok("home.mode", f"fixed: chmod 700 {shown} (it was {mode:04o}, readable by others)", data=data)
    # Opening the store would make the folder private behind the user's back: leave it closed.
    probe.store_blocked = f"{shown} is readable by others"
    return error(
        "home.mode",
        f"{shown} is readable by others (mode {mode:04o}); it holds your sessions' data",
        fix=f"chmod 700 {shown}",
        data=data,
    )
