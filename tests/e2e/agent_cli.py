"""Another coding agent's CLI from npm, pinned, installed once into the e2e cache (like the Claude client).

``agent_binary(package, version, bin_name)`` returns the installed binary; a test module's fixture
turns a failure into a skip on a developer's machine and into a failure under CI (``CI`` set).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from claude_client import _lock, cache_dir


def _runs(binary: Path, version: str) -> bool:
    if not binary.exists():
        return False
    try:
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and version in out.stdout.strip().split()[-1:] + [out.stdout.strip()]


def agent_binary(package: str, version: str, bin_name: str) -> Path:
    """``bin_name`` of npm ``package@version``, installed into the e2e cache once (one installer at a time)."""
    root = cache_dir()
    prefix = root / f"{bin_name}-{version}"
    binary = prefix / "node_modules" / ".bin" / bin_name
    if _runs(binary, version):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:
        _lock(lock)
        if not _runs(binary, version):
            shutil.rmtree(prefix, ignore_errors=True)
            cmd = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error"]
            done = subprocess.run(
                [*cmd, f"{package}@{version}"], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
            )
            if done.returncode != 0:
                raise RuntimeError(f"npm install {package}@{version} failed: {done.stderr.strip()[-800:]}")
    if not _runs(binary, version):
        raise RuntimeError(f"{binary} was installed but `{bin_name} --version` does not answer {version}")
    return binary


def binary_or_skip(package: str, version: str, bin_name: str) -> Path:
    """The binary, or a skip (a failure under CI, where the agent must be tested)."""
    try:
        return agent_binary(package, version, bin_name)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{package} {version} unavailable (CI is set, so this fails): {exc}")
        pytest.skip(f"{package} {version} unavailable: {exc}")


def run_agent(argv: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """One headless run of an agent's CLI: its output captured, no stdin (it would wait for a prompt)."""
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
