"""`omcm doctor` says when the installed Claude Code has hook events omcm does not know.

A real process with a `claude` on PATH whose binary holds an event list, as the
real client's does (the real binaries are read in tests/e2e/test_events_e2e.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli.doctor.events import client_events
from omcm_core.events import EVENTS


def fake_client(folder: Path, events: list[str]) -> Path:
    """A `claude` bigger than a launcher, with the event list buried in it as the real one has."""
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "claude"
    listing = json.dumps(events, separators=(",", ":")).encode()
    binary.write_bytes(b"\x7fELF" + os.urandom(1_500_000).replace(b"[", b"(") + listing + b";var x=1;" + b"\0" * 4096)
    binary.chmod(0o755)
    return binary


def doctor(tmp_path: Path, bin_dir: Path) -> dict:
    home = tmp_path / "omcm"
    home.mkdir(mode=0o700, exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "OMCM_HOME": str(home),
        "OMCM_DAEMON": "0",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "CLAUDE_PROJECT_DIR": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "doctor", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return {c["id"]: c for s in json.loads(proc.stdout)["sections"] for c in s["checks"]}


def test_doctor_names_the_client_events_omcm_does_not_know(tmp_path):
    fake_client(tmp_path / "bin", [*EVENTS, "DirectoryRemoved", "BudgetExceeded"])
    found = doctor(tmp_path, tmp_path / "bin")
    check = found["events.unknown"]
    assert check["level"] == "warning" and check["fix"]
    assert "DirectoryRemoved, BudgetExceeded" in check["message"]
    assert check["data"]["unknown"] == ["DirectoryRemoved", "BudgetExceeded"]


def test_doctor_is_content_when_it_knows_every_client_event(tmp_path):
    fake_client(tmp_path / "bin", ["PreToolUse", "PostToolUse", "Stop", "PermissionRequest"])
    found = doctor(tmp_path, tmp_path / "bin")
    assert found["events.client"]["level"] == "ok" and "events.unknown" not in found


@pytest.mark.parametrize("tail", [b"", b'["PreToolUse","PostToolUse",' + b'"A",' * 5000])
def test_a_binary_without_a_whole_list_is_no_list(tmp_path, tail):
    binary = tmp_path / "claude"
    binary.write_bytes(b"x" * 10 + tail)
    assert client_events(binary) is None
