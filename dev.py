#!/usr/bin/env python3
"""Set-up and tasks for omcm developers, with nothing installed by hand.

    python3 dev.py demo     # the recorded demo session through `omcm hook`
    python3 dev.py test     # the whole test suite, on every core (pytest-xdist)
    python3 dev.py test -m "not slow"   # the fast subset (pytest arguments pass through)
    python3 dev.py lint     # ruff (lint and format check) and mypy
    python3 dev.py matrix   # the tox matrix (Python 3.10-3.13 x plugin sets)
    python3 dev.py bench    # the latency benchmark (writes nothing to docs/)
    python3 dev.py e2e      # the real Claude Code client against a fake API (docs/e2e.md)

Each task first checks the Python running this script (3.10 to 3.13), makes
``.venv`` with it (again when it was made by another Python version) and
installs omcm-core and every plugin under ``plugins/`` into it, with the test,
lint, team and embedding extras and PostgreSQL for every task but the demo,
reinstalling only when a pyproject.toml changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

#: The Python versions omcm supports (pyproject's requires-python) and the matrix tests.
SUPPORTED = ((3, 10), (3, 13))


def python_refused(version: tuple[int, int] = sys.version_info[:2]) -> str | None:
    """Why this Python cannot run the tasks (said before anything is made), or None."""
    if SUPPORTED[0] <= version <= SUPPORTED[1]:
        return None
    import shutil

    low, high = SUPPORTED
    fits = [f"python3.{minor}" for minor in range(high[1], low[1] - 1, -1) if shutil.which(f"python3.{minor}")]
    use = (
        f"run it with one of {', '.join(fits)} (e.g. `{fits[0]} dev.py setup`)"
        if fits
        else "install one (python.org, pyenv or your system's packages) and run dev.py with it"
    )
    return f"dev.py: Python {version[0]}.{version[1]} is not supported: omcm needs Python {low[0]}.{low[1]} to {high[0]}.{high[1]}; {use}."


if __name__ == "__main__" and python_refused():
    print(python_refused(), file=sys.stderr)
    raise SystemExit(2)

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")


def plugin_dirs() -> list[Path]:
    folder = ROOT / "plugins"
    return sorted(p for p in folder.iterdir() if (p / "pyproject.toml").is_file()) if folder.is_dir() else []


def _stamp() -> str:
    digest = hashlib.sha256(sys.version.encode())
    if (ROOT / "requirements-dev.txt").exists():
        digest.update((ROOT / "requirements-dev.txt").read_bytes())
    for path in [ROOT / "pyproject.toml", *(p / "pyproject.toml" for p in plugin_dirs())]:
        digest.update(str(path).encode() + path.read_bytes())
        for name in (".dev-extras", ".dev-no-deps"):
            if (path.parent / name).exists():
                digest.update((path.parent / name).read_bytes())
    return digest.hexdigest()


def postgres_found() -> bool:
    """Debian puts initdb and pg_ctl in /usr/lib/postgresql/<version>/bin, off PATH."""
    import glob
    import shutil

    return bool(shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb"))


def ensure_system_packages() -> None:
    """What the tests drive beside Python: a real PostgreSQL (team store) and tmux (the interactive client).

    Debian's packages are installed when missing and allowed (root with apt-get); otherwise say what to
    install: those tests skip locally and fail in CI without them.
    """
    import shutil

    missing = [p for p, found in (("postgresql", postgres_found()), ("tmux", bool(shutil.which("tmux")))) if not found]
    if not missing:
        return
    if os.name == "posix" and os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"dev.py: installing {' and '.join(missing)} (apt-get) for the tests that drive them", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        apt = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
        if subprocess.run(apt, env=env).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env, check=True)
            subprocess.run(apt, env=env, check=True)
        return
    print(
        f"dev.py: not found: {', '.join(missing)}; the team-store and interactive-client tests need them: "
        f"`sudo apt-get install {' '.join(missing)}` (or your system's packages), then rerun. "
        "Without them those tests skip locally and fail in CI.",
        file=sys.stderr,
        flush=True,
    )


def venv_version() -> tuple[int, int] | None:
    """The Python version ``.venv`` was made with (its pyvenv.cfg), or None when there is none to read."""
    try:
        text = (VENV / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            parts = value.strip().split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                return int(parts[0]), int(parts[1])
    return None


def venv_usable() -> bool:
    """``.venv`` exists, runs, and was made by this Python's version (one made by another is rebuilt)."""
    return PY.exists() and venv_version() == sys.version_info[:2]


def install_targets(profile: str) -> list[str]:
    """pip's arguments for a profile: ``demo`` installs omcm-core and the plugins, ``full`` also every extra and tool."""
    if profile == "demo":
        targets = ["-e", str(ROOT)]
        for plugin in plugin_dirs():
            if not (plugin / ".dev-not-in-demo").exists():  # team-store: a PostgreSQL driver the demo never uses
                targets += ["-e", str(plugin)]
        return targets
    targets = ["-e", f"{ROOT}[test,lint,team]"]
    for plugin in plugin_dirs():
        # A plugin may ask for extras in tests (e.g. "[embeddings]") in a file .dev-extras.
        extras_file = plugin / ".dev-extras"
        extras = extras_file.read_text().strip() if extras_file.exists() else ""
        targets += ["-e", f"{plugin}{extras}"]
    extra_reqs = ROOT / "requirements-dev.txt"
    if extra_reqs.exists():
        targets += ["-r", str(extra_reqs)]
    return targets


#: pip's lines worth showing while it works (the rest of its output is kept for an error).
PROGRESS = ("Collecting ", "Obtaining ", "Processing ", "Building ", "Installing collected packages")


def pip_install(args: list[str], what: str) -> None:
    """Run ``pip install args``, telling what it is at (one line per package it collects or builds)."""
    print(f"dev.py: installing {what} into .venv", flush=True)
    argv = [str(PY), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off", *args]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    kept: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        kept = [*kept[-199:], line]
        if line.startswith(PROGRESS):
            shown = " ".join(line.split())
            print(f"dev.py:   {shown if len(shown) <= 110 else shown[:109] + '…'}", flush=True)
    if proc.wait() != 0:
        sys.stderr.write("".join(kept[-60:]))
        raise SystemExit(f"dev.py: installing {what} failed (pip's last lines above)")


def setup(profile: str = "full") -> None:
    """Make ``.venv`` with what ``profile`` needs; a ``full`` one serves the demo too."""
    if profile == "full":
        ensure_system_packages()
    stamp_file = VENV / ".omcm-stamp"
    done = stamp_file.read_text() if stamp_file.exists() and venv_usable() else ""
    if done in (_stamp(), f"full:{_stamp()}", f"{profile}:{_stamp()}"):  # a bare stamp: an older dev.py's full set-up
        return
    if not venv_usable():
        found = venv_version()
        why = f" (it was made by Python {found[0]}.{found[1]})" if found and found != sys.version_info[:2] else ""
        print(f"dev.py: creating .venv with Python {sys.version.split()[0]}{why}", flush=True)
        try:
            venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
        except (OSError, subprocess.CalledProcessError) as exc:
            import shutil

            shutil.rmtree(VENV, ignore_errors=True)  # half made, it would fail every later run
            raise SystemExit(
                f"dev.py: could not create .venv ({exc}); on Debian/Ubuntu install python3-venv for this Python"
            ) from None
    pip_install(["--upgrade", "pip", "setuptools", "wheel"], "pip, setuptools and wheel")
    what = "omcm-core and plugins" if profile == "demo" else "omcm-core, plugins, test and lint tools"
    pip_install(install_targets(profile), what)
    # Packages a plugin needs without their declared dependencies (see the plugin's pyproject).
    no_deps = [
        line.strip()
        for p in plugin_dirs()
        if (p / ".dev-no-deps").exists()
        for line in (p / ".dev-no-deps").read_text().splitlines()
        if line.strip()
    ]
    if no_deps and profile == "full":
        pip_install(["--no-deps", *no_deps], ", ".join(no_deps))
    stamp_file.write_text(f"{profile}:{_stamp()}")


def run(*argv: str, path_tail: Sequence[str] = ()) -> int:
    path = os.pathsep.join([str(BIN), os.environ.get("PATH", ""), *path_tail])
    env = {**os.environ, "PATH": path}
    return subprocess.run(list(argv), cwd=ROOT, env=env).returncode


def pyenv_bins() -> list[str]:
    """The bin folders of every installed pyenv Python 3.10-3.13, newest patch of each.

    pyenv's shims answer only for the selected version, and tox hands
    interpreter discovery a filtered environment: on PATH, tox finds them all.
    """
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
        installed = subprocess.run(
            ["pyenv", "versions", "--bare"], capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return []
    newest: dict[str, tuple[int, ...]] = {}
    for version in installed:
        parts = version.split(".")
        if (
            len(parts) == 3
            and parts[:1] == ["3"]
            and parts[1] in ("10", "11", "12", "13")
            and all(p.isdigit() for p in parts)
        ):
            newest[parts[1]] = max(newest.get(parts[1], ()), tuple(map(int, parts)))
    return [os.path.join(root, "versions", ".".join(map(str, v)), "bin") for _, v in sorted(newest.items())]


def pytest_args(rest: Sequence[str]) -> list[str]:
    """Spread the tests over every core unless the caller chose (``-n 0`` runs in one process)."""
    chose = any(a.startswith(("-n", "--numprocesses")) or a == "no:xdist" for a in rest)
    return [*(rest or ["-q"]), *(() if chose else ("-n", "auto"))]


def lint(rest: Sequence[str]) -> int:
    """ruff's lint and format check, then mypy; every one runs, the worst code is returned."""
    paths = list(rest) or ["."]
    codes = [
        run(str(BIN / "ruff"), "check", *paths),
        run(str(BIN / "ruff"), "format", "--check", *paths),
        run(str(PY), "-m", "mypy"),
    ]
    return max(codes)


def main(argv: list[str]) -> int:
    task = argv[0] if argv else "help"
    rest = argv[1:]
    if task not in ("demo", "test", "lint", "matrix", "bench", "setup", "e2e"):
        print(__doc__)
        return 0 if task == "help" else 2
    # The demo needs omcm and its plugins only: no test, lint, team or embedding extras, no PostgreSQL.
    setup("demo" if task == "demo" else "full")
    if task == "setup":
        return 0
    if task == "demo":
        return run(str(PY), str(ROOT / "demo" / "run_demo.py"), *rest)
    if task == "test":
        return run(str(PY), "-m", "pytest", *pytest_args(rest))
    if task == "lint":
        return lint(rest)
    if task == "matrix":
        subprocess.run([str(PY), "-m", "pip", "install", "-q", "tox>=4"], check=True)
        return run(str(PY), "-m", "tox", "run-parallel", *rest, path_tail=pyenv_bins())
    if task == "e2e":
        return run(str(PY), "-m", "pytest", *(rest or ["-q"]), str(ROOT / "tests" / "e2e"))
    if task == "bench":
        return run(str(PY), str(ROOT / "bench" / "hook_latency.py"), *rest)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
