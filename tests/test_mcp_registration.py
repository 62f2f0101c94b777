"""``omcm install`` registers ``omcm mcp`` as Claude Code's MCP server "omcm"; ``omcm uninstall`` removes only that."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def omcm(home: Path, user: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMCM_HOME": str(home), "HOME": str(user)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env, cwd=cwd or user
    )


@pytest.fixture
def world(tmp_path):
    user, home, project = tmp_path / "user", tmp_path / "omcm-home", tmp_path / "project"
    for folder in (user, project):
        folder.mkdir()
    return user, home, project


def test_user_scope_adds_the_server_beside_claude_codes_own_keys_and_removes_it(world):
    user, home, _ = world
    state = user / ".claude.json"
    state.write_text(json.dumps({"hasCompletedOnboarding": True, "mcpServers": {"other": {"command": "x"}}}))
    state.chmod(0o600)
    proc = omcm(home, user, "install")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(state.read_text())
    entry = data["mcpServers"]["omcm"]
    assert entry["type"] == "stdio" and entry["args"][-1] == "mcp"
    assert Path(entry["command"]).exists()
    assert data["hasCompletedOnboarding"] is True and data["mcpServers"]["other"] == {"command": "x"}
    assert state.stat().st_mode & 0o777 == 0o600
    assert "MCP server 'omcm' registered" in proc.stdout
    # Run by Claude Code, the registered command serves: `--list` through the same command.
    listed = subprocess.run([entry["command"], *entry["args"], "--list"], capture_output=True, text=True)
    assert "search" in listed.stdout
    assert omcm(home, user, "uninstall").returncode == 0
    assert json.loads(state.read_text())["mcpServers"] == {"other": {"command": "x"}}


def test_a_users_own_server_named_omcm_is_never_replaced_nor_removed(world):
    user, home, _ = world
    state = user / ".claude.json"
    mine = {"mcpServers": {"omcm": {"command": "/opt/my-own/server", "args": []}}}
    state.write_text(json.dumps(mine))
    assert "did not write" in omcm(home, user, "install").stdout
    omcm(home, user, "uninstall")
    assert json.loads(state.read_text()) == mine


def test_project_scope_writes_the_projects_mcp_json(world):
    user, home, project = world
    assert omcm(home, user, "install", "--scope", "project", "--project-dir", str(project)).returncode == 0
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"omcm"}
    assert not (user / ".claude.json").exists()
    omcm(home, user, "uninstall", "--scope", "project", "--project-dir", str(project))
    assert not (project / ".mcp.json").exists()  # omcm made it and nothing else is in it: no {"mcpServers": {}} left
    # A .mcp.json the project had is kept, with its own servers, without omcm's.
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "db-mcp"}}}))
    omcm(home, user, "install", "--scope", "project", "--project-dir", str(project))
    omcm(home, user, "uninstall", "--scope", "project", "--project-dir", str(project))
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"] == {"db": {"command": "db-mcp"}}


def test_a_symlinked_claude_json_stays_a_link(world, tmp_path):
    user, home, _ = world
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "claude.json").write_text("{}")
    (user / ".claude.json").symlink_to(dotfiles / "claude.json")
    assert omcm(home, user, "install").returncode == 0
    assert (user / ".claude.json").is_symlink()
    assert "omcm" in json.loads((dotfiles / "claude.json").read_text())["mcpServers"]


def test_an_unparsable_claude_json_is_left_alone(world):
    user, home, _ = world
    (user / ".claude.json").write_text("{not json")
    proc = omcm(home, user, "install")
    assert proc.returncode == 0 and "not registered" in proc.stdout
    assert (user / ".claude.json").read_text() == "{not json"


def test_the_server_never_runs_a_projects_own_omcm_core(world, tmp_path):
    """Claude Code starts a user-scope server in every project's folder: a cloned repository's ``omcm_core/``
    must not be what runs (issue 34 item 4). ``python -m omcm_core`` ran it; the entry omcm writes does not."""
    from omcm_core._cli import mcp_registration

    user, home, project = world
    marker = tmp_path / "planted-ran"
    planted = project / "omcm_core"
    planted.mkdir()
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
    (planted / "__init__.py").write_text(code)
    (planted / "__main__.py").write_text(code)
    (project / "sitecustomize.py").write_text(code)
    env = {**os.environ, "OMCM_HOME": str(home), "HOME": str(user)}
    env.pop("PYTHONPATH", None)
    for entry in (mcp_registration.python_entry(), mcp_registration.server_entry()):
        listed = subprocess.run(
            [entry["command"], *entry["args"], "--list"], capture_output=True, text=True, env=env, cwd=project
        )
        assert listed.returncode == 0 and "search" in listed.stdout, listed.stderr
        assert not marker.exists(), f"{entry['args']} ran the project's omcm_core"
        assert mcp_registration.ours(entry)
    # What earlier versions wrote would have (the reason for the change), and install replaces it.
    legacy = {"type": "stdio", "command": sys.executable, "args": ["-m", "omcm_core", "mcp", "--list"]}
    subprocess.run([legacy["command"], *legacy["args"]], capture_output=True, env=env, cwd=project)
    assert marker.read_text() == "ran"
    (user / ".claude.json").write_text(json.dumps({"mcpServers": {"omcm": {**legacy, "args": legacy["args"][:3]}}}))
    assert omcm(home, user, "install").returncode == 0
    entry = json.loads((user / ".claude.json").read_text())["mcpServers"]["omcm"]
    assert "-m" not in entry["args"] and entry == mcp_registration.server_entry()


def _mcp_checks(home: Path, user: Path) -> list[dict]:
    proc = omcm(home, user, "doctor", "--json")
    sections = json.loads(proc.stdout)["sections"]
    return next(s["checks"] for s in sections if s["name"] == "MCP server")


def test_doctor_names_an_old_dash_m_entry_and_a_stale_one_and_install_mends_both(world):
    user, home, _ = world
    state = user / ".claude.json"
    old = {"type": "stdio", "command": sys.executable, "args": ["-m", "omcm_core", "mcp"]}
    gone = {"type": "stdio", "command": "/opt/removed/bin/omcm", "args": ["mcp"]}
    state.write_text(json.dumps({"mcpServers": {"omcm": old}}))
    checks = {c["id"]: c for c in _mcp_checks(home, user)}
    assert checks["mcp.user.unsafe"]["level"] == "error" and checks["mcp.user.unsafe"]["fix"] == "omcm install"
    assert omcm(home, user, "install").returncode == 0
    assert [c["id"] for c in _mcp_checks(home, user)] == ["mcp.user"]
    data = json.loads(state.read_text())
    data["projects"] = {str(user): {"mcpServers": {"omcm": gone}}}  # local scope: doctor runs in the user's folder
    state.write_text(json.dumps(data))
    checks = {c["id"]: c for c in _mcp_checks(home, user)}
    assert (
        checks["mcp.local.stale"]["level"] == "warning"
        and "/opt/removed/bin/omcm" in checks["mcp.local.stale"]["message"]
    )
    assert checks["mcp.local.stale"]["fix"] == "omcm install --scope local"


def test_doctor_says_when_the_tools_are_not_registered(world):
    user, home, _ = world
    checks = _mcp_checks(home, user)
    assert [(c["id"], c["fix"]) for c in checks] == [("mcp.none", "omcm install")]


def test_a_projects_mcp_json_planted_as_dev_zero_is_refused_not_read_forever(world):
    import resource

    def capped() -> None:  # a regression reads /dev/zero until memory runs out: 2 GB ends it, not the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    user, home, project = world
    (project / ".mcp.json").symlink_to("/dev/zero")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to("/dev/zero")
    env = {**os.environ, "OMCM_HOME": str(home), "HOME": str(user)}

    def run(*args: str) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "omcm_core", *args]
        return subprocess.run(
            argv, capture_output=True, text=True, cwd=project, env=env, timeout=120, preexec_fn=capped
        )

    doctor = run("doctor", "--json")
    checks = [c for section in json.loads(doctor.stdout)["sections"] for c in section["checks"]]
    assert not [c["id"] for c in checks if c["id"].endswith(".crashed")], checks  # no section ran out of memory
    assert any("not a regular file" in c["message"] for c in checks), checks
    installed = run("install", "--scope", "project")
    assert installed.returncode == 2 and "not a regular file" in installed.stderr
