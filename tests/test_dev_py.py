"""dev.py on a first run: the Python is checked before anything is made, and the demo installs only what it needs.

Run with real interpreters (pyenv's, where installed) on copies of dev.py and
of this checkout, never on this checkout's own .venv.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYENV = Path("/root/.pyenv/versions")


def pyenv_python(minor: int) -> Path:
    found = sorted(PYENV.glob(f"3.{minor}.*/bin/python3"))
    if not found:
        pytest.skip(f"no Python 3.{minor} under {PYENV}")
    return found[-1]


def load_dev(root: Path):
    spec = importlib.util.spec_from_file_location("dev_under_test", root / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("minor", [8, 9])
def test_an_old_python_is_refused_before_anything_is_made(tmp_path, minor):
    shutil.copy(ROOT / "dev.py", tmp_path / "dev.py")
    proc = subprocess.run(
        [pyenv_python(minor), "dev.py", "setup"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert f"Python 3.{minor} is not supported: omcm needs Python 3.10 to 3.13" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.py"]  # no .venv, half made or otherwise


def test_the_demo_profile_leaves_out_extras_and_tools():
    dev = load_dev(ROOT)
    demo, full = dev.install_targets("demo"), dev.install_targets("full")
    assert "-r" not in demo and not any("[" in t for t in demo)
    assert f"{ROOT}[test,lint,team]" in full and "-r" in full
    assert full.count("-e") == 1 + len(dev.plugin_dirs())
    # Every plugin but those marked .dev-not-in-demo (team-store: a PostgreSQL driver the demo never uses).
    left_out = [p for p in dev.plugin_dirs() if (p / ".dev-not-in-demo").exists()]
    assert [p.name for p in left_out] == ["team-store"] and str(left_out[0]) not in demo
    assert demo.count("-e") == 1 + len(dev.plugin_dirs()) - len(left_out)


def test_a_venv_of_another_python_is_not_usable(tmp_path):
    shutil.copy(ROOT / "dev.py", tmp_path / "dev.py")
    other = pyenv_python(12 if sys.version_info[:2] != (3, 12) else 11)
    subprocess.run([other, "-m", "venv", "--without-pip", tmp_path / ".venv"], check=True)
    dev = load_dev(tmp_path)
    assert dev.venv_version() not in (None, sys.version_info[:2])
    assert dev.venv_usable() is False


@pytest.mark.slow
def test_the_demo_rebuilds_a_stale_venv_and_installs_only_what_it_needs(tmp_path):
    """`dev.py demo` in a fresh copy whose .venv another Python made (a broken first try with the wrong one)."""
    if os.environ.get("TOX_ENV_NAME"):
        pytest.skip("dev.py's set-up does not depend on the matrix cell: the main run covers it")
    checkout = tmp_path / "omcm"
    junk = (".venv", ".git", ".tox", "build", "*.egg-info", "__pycache__", "*_cache", ".hypothesis", "bench")
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(*junk))
    other = pyenv_python(12 if sys.version_info[:2] != (3, 12) else 11)
    subprocess.run([other, "-m", "venv", "--without-pip", checkout / ".venv"], check=True)
    python = getattr(sys, "_base_executable", sys.executable)
    proc = subprocess.run([python, "dev.py", "demo"], cwd=checkout, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    mine = ".".join(map(str, sys.version_info[:2]))
    assert f"dev.py: creating .venv with Python {mine}" in proc.stdout and "(it was made by Python 3." in proc.stdout
    # Progress while pip works: what it is installing.
    assert "dev.py: installing omcm-core and plugins into .venv" in proc.stdout
    assert any(line.startswith("dev.py:   ") and "omcm" in line for line in proc.stdout.splitlines())
    listed = subprocess.run(
        [checkout / ".venv" / "bin" / "python", "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"omcm-core", "omcm-tool-counter", "omcm-memory-rotation"} <= names
    assert names.isdisjoint({"pytest", "ruff", "mypy", "psycopg", "numpy", "tokenizers", "pipx", "uv", "hypothesis"})
    assert (checkout / ".venv" / ".omcm-stamp").read_text().startswith("demo:")
