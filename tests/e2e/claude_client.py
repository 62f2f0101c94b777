"""The real Claude Code client, installed from npm once and run against the fake API.

The version is pinned here and nowhere else. The install lives outside the
repository (``~/.cache/omcm-e2e/claude-<version>``, or under
``OMCM_E2E_CACHE``) and is reused between runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

#: The Claude Code release the end-to-end tests drive (npm ``@anthropic-ai/claude-code``).
CLIENT_VERSION = "2.1.330"
PACKAGE = "@anthropic-ai/claude-code"


class ClientUnavailable(Exception):
    """The client could not be installed or does not run here."""


def cache_dir() -> Path:
    return Path(os.environ.get("OMCM_E2E_CACHE") or Path.home() / ".cache" / "omcm-e2e")


def _runs(binary: Path, version: str) -> bool:
    if not binary.exists():
        return False
    try:
        out = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "DISABLE_AUTOUPDATER": "1"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.startswith(version)


def _lock(handle) -> None:
    with contextlib.suppress(ImportError):  # no fcntl (Windows): installs are not serialised
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX)


def _npm_install(npm: str, root: Path, prefix: Path, binary: Path, version: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    # One installer at a time (parallel test processes share the cache).
    with open(root / ".install.lock", "w") as lock:
        _lock(lock)
        if _runs(binary, version):
            return
        shutil.rmtree(prefix, ignore_errors=True)
        cmd = [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{PACKAGE}@{version}",
        ]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ClientUnavailable(f"npm install {PACKAGE}@{version} took more than 600 s") from None
        if done.returncode != 0:
            raise ClientUnavailable(f"npm install {PACKAGE}@{version} failed: {done.stderr.strip()[-800:]}")


def install_client(version: str = CLIENT_VERSION) -> Path:
    """The path of a working ``claude`` binary of ``version``, installing it with npm if needed.

    Raises :class:`ClientUnavailable` with the reason when it cannot.
    """
    root = cache_dir()
    prefix = root / f"claude-{version}"
    binary = prefix / "node_modules" / ".bin" / "claude"
    if _runs(binary, version):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise ClientUnavailable("npm is not on PATH")
    try:
        _npm_install(npm, root, prefix, binary, version)
    except OSError as exc:  # an unwritable cache, a full disk
        raise ClientUnavailable(f"cannot install into {root}: {exc}") from None
    if not _runs(binary, version):
        raise ClientUnavailable(f"{binary} was installed but `claude --version` does not answer {version}")
    return binary
