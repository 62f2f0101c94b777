"""``omcm install`` registers the native hook client when it can build it, the Python one otherwise.

The native client's behaviour is tested with the Python client's tests (the
``hook_client`` fixture); here: choosing, building, rebuilding and removing it,
and what doctor says about it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli import install, native_client
from omcm_core._cli.doctor import runtime
from omcm_core._cli.doctor.records import Probe
from omcm_core.testing import pre_tool_payload

pytestmark = pytest.mark.slow
EVENTS = ["PreToolUse", "PostToolUse"]


def _commands(settings: Path) -> list[str]:
    return [command for _event, command in install.installed_commands(settings)]


def _run(command: str, home: Path, raw: bytes) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "OMCM_HOME": str(home), "OMCM_DAEMON": "0"}
    return subprocess.run(["sh", "-c", command], input=raw, capture_output=True, env=env, timeout=60)


def _doctor(home: Path) -> list:
    probe = Probe(home, None, {"OMCM_HOME": str(home)})
    return list(runtime.hook_client(probe))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_install_registers_the_native_client_when_a_compiler_is_here(home, tmp_path):
    if native_client.compiler(os.environ) is None:
        pytest.skip("no C compiler on this machine")
    settings = tmp_path / "settings.json"
    install.install(home, settings, EVENTS)
    commands = _commands(settings)
    binary = native_client.binary_path(home)
    assert commands == [f"{shlex.quote(str(binary))} hook {event}" for event in EVENTS]
    assert binary.is_file() and binary.stat().st_mode & 0o077 == 0  # in OMCM_HOME, owner-only
    raw = json.dumps(pre_tool_payload("Bash", {"command": "rm -rf /"})).encode()
    python = install.hook_command("PreToolUse", [sys.executable, "-m", "omcm_core"])
    assert _run(commands[0], home, raw).stdout == _run(python, home, raw).stdout
    assert [c.id for c in _doctor(home)] == ["hook_client.native"]


def test_install_registers_the_python_client_without_a_compiler(home, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler")
    settings = tmp_path / "settings.json"
    install.install(home, settings, EVENTS)
    assert all("fast_hook.py" in command for command in _commands(settings))
    assert not native_client.binary_path(home).exists()
    (check,) = _doctor(home)
    assert check.id == "hook_client.python" and "no C compiler" in check.message


def test_reinstall_over_the_python_client_does_not_register_a_second_command(home, tmp_path, monkeypatch):
    settings = tmp_path / "settings.json"
    monkeypatch.setenv("OMCM_NATIVE_CLIENT", "0")
    install.install(home, settings, EVENTS)
    monkeypatch.delenv("OMCM_NATIVE_CLIENT")
    install.install(home, settings, EVENTS)
    assert len(_commands(settings)) == len(EVENTS)
    assert "registered there already" in _doctor(home)[0].message


def test_uninstall_removes_the_native_client(home, tmp_path):
    if native_client.compiler(os.environ) is None:
        pytest.skip("no C compiler on this machine")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    install.install(home, first, EVENTS)
    install.install(home, second, EVENTS)
    binary = native_client.binary_path(home)
    install.uninstall(home, first)
    assert binary.is_file()  # the other settings file still runs it
    install.uninstall(home, second)
    assert not binary.exists() and _doctor(home) == []


def test_install_after_an_upgrade_rebuilds_the_native_client(home, tmp_path):
    if native_client.compiler(os.environ) is None:
        pytest.skip("no C compiler on this machine")
    settings = tmp_path / "settings.json"
    install.install(home, settings, EVENTS)
    binary = native_client.binary_path(home)
    # As if built by an older omcm: another fingerprint, another program.
    binary.write_bytes(b"#!/bin/sh\necho outdated\n")
    state = home / "bin" / native_client.STATE
    state.write_text(json.dumps({**json.loads(state.read_text()), "fingerprint": "old"}))
    assert [c.id for c in _doctor(home)] == ["hook_client.outdated"]
    install.install(home, settings, EVENTS)
    assert b"outdated" not in binary.read_bytes()
    assert [c.id for c in _doctor(home)] == ["hook_client.native"]
    assert len(_commands(settings)) == len(EVENTS)


def test_reinstall_over_the_native_client_keeps_it_even_when_told_not_to_build(home, tmp_path, monkeypatch):
    if native_client.compiler(os.environ) is None:
        pytest.skip("no C compiler on this machine")
    settings = tmp_path / "settings.json"
    install.install(home, settings, EVENTS)
    monkeypatch.setenv("OMCM_NATIVE_CLIENT", "0")
    monkeypatch.setenv("CC", "no-such-compiler")
    install.install(home, settings, EVENTS)
    commands = _commands(settings)
    assert len(commands) == len(EVENTS) and all(str(native_client.binary_path(home)) in c for c in commands)
