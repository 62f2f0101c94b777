"""The settings file as people keep it, and the CLI's project options, run as a user runs them: `omcm ...` processes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli.install import _manifest_path


@pytest.fixture
def user(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMCM_", "CLAUDE_"))}
    env.update(HOME=str(home), OMCM_HOME=str(home / ".omcm"), OMCM_DAEMON="0")
    return home, env


def omcm(env, *argv, cwd=None, ok=True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", *map(str, argv)], capture_output=True, text=True, env=env, cwd=cwd
    )
    assert (proc.returncode == 0) == ok, f"omcm {argv}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def dotfiles_link(home: Path) -> tuple[Path, Path, bytes]:
    """~/.claude/settings.json as a link into a dotfiles checkout."""
    target = home / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    original = b'{\n    "model": "opus"\n}\n'
    target.write_bytes(original)
    link = home / ".claude" / "settings.json"
    link.symlink_to(target)
    return link, target, original


def test_a_symlinked_settings_file_stays_a_link_and_uninstall_finds_the_install(user):
    pytest.importorskip("omcm_tool_counter", reason="omcm install needs a plugin's hooks")
    home, env = user
    link, target, original = dotfiles_link(home)
    omcm(env, "install")
    assert link.is_symlink() and link.resolve() == target
    assert "PreToolUse" in json.loads(target.read_text())["hooks"]
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    out = omcm(env, "uninstall").stdout
    assert "restored as it was before omcm" in out
    assert link.is_symlink() and target.read_bytes() == original


def test_uninstall_finds_an_install_whose_link_an_older_omcm_replaced(user):
    """Older omcm keyed the manifest on the link's target, then wrote a plain file where the link was."""
    pytest.importorskip("omcm_tool_counter", reason="omcm install needs a plugin's hooks")
    home, env = user
    link, target, original = dotfiles_link(home)
    omcm(env, "install")
    manifest = _manifest_path(home / ".omcm", target)
    recorded = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**recorded, "settings": str(link)}))
    installed = target.read_bytes()
    link.unlink()
    link.write_bytes(installed)  # what the old write did to the link
    target.write_bytes(original)
    out = omcm(env, "uninstall").stdout
    assert "restored as it was before omcm" in out and link.read_bytes() == original


def memory_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".claude" / "memory").mkdir(parents=True)
    (project / ".claude" / "memory" / "memory.md").write_text("# Memory\n- the port is 8080\n")
    return project


def test_project_works_after_the_action_too(user, tmp_path):
    pytest.importorskip("omcm_memory_rotation")
    _home, env = user
    project, elsewhere = memory_project(tmp_path), tmp_path / "elsewhere"
    elsewhere.mkdir()
    after = omcm(env, "memory", "search", "port", "--project", project, cwd=elsewhere).stdout
    before = omcm(env, "memory", "--project", project, "search", "port", cwd=elsewhere).stdout
    assert "the port is 8080" in after and after == before
    assert list(elsewhere.iterdir()) == []


def test_memory_status_and_search_make_no_folder(user, tmp_path):
    pytest.importorskip("omcm_memory_rotation")
    _home, env = user
    empty = tmp_path / "somewhere"
    empty.mkdir()
    assert "no project memory" in omcm(env, "memory", "status", cwd=empty).stdout
    omcm(env, "memory", "search", "port", cwd=empty)
    assert list(empty.iterdir()) == []


def test_a_typo_in_a_project_folder_creates_nothing(user, tmp_path):
    _home, env = user
    proc = omcm(env, "install", "--scope", "project", "--project-dir", "projct", cwd=tmp_path, ok=False)
    assert "projct: no such folder" in proc.stderr and not (tmp_path / "projct").exists()
    if importlib.util.find_spec("omcm_memory_rotation"):
        proc = omcm(env, "memory", "rotate", "--project", "projct", cwd=tmp_path, ok=False)
        assert "projct: no such folder" in proc.stderr and not (tmp_path / "projct").exists()


def test_version_names_core_and_every_plugin(user):
    _home, env = user
    lines = omcm(env, "--version").stdout.splitlines()
    # What a fresh interpreter with the same environment finds (this process's path may hold another test's plugins).
    listing = (
        "from importlib.metadata import entry_points, version\n"
        "print(version('omcm-core'))\n"
        "for e in entry_points(group='omcm'): print(f\"{e.name} {e.dist.version} ({e.dist.metadata['Name']})\")\n"
    )
    found = subprocess.run([sys.executable, "-c", listing], env=env, capture_output=True, text=True, check=True)
    core, *plugins = found.stdout.splitlines()
    assert lines[0] == f"omcm-core {core}"
    assert plugins and sorted(lines[1:]) == sorted(plugins)


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder): what "as it was" means."""
    return {
        str(p.relative_to(folder)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if ".omcm" not in p.relative_to(folder).parts
    }


@pytest.mark.parametrize("scope", ["user", "project"])
def test_removal_is_exact_after_install_reinstall_and_reregistration(user, tmp_path, scope):
    pytest.importorskip("omcm_persistent_mode", reason="the command files come with persistent-mode")
    home, env = user
    project = tmp_path / "project"
    project.mkdir()
    (home / ".claude" / "CLAUDE.md").write_text("mine\n")
    before = {"home": _tree(home), "project": _tree(project)}
    argv = ["--scope", scope]
    omcm(env, "install", *argv, cwd=project)
    # What `omcm plugins install` and `omcm update` do afterwards: register again with --settings.
    settings = home / ".claude" / "settings.json" if scope == "user" else project / ".claude" / "settings.json"
    omcm(env, "install", "--settings", settings, cwd=project)
    omcm(env, "install", *argv, cwd=project)  # and a plain reinstall
    commands = settings.parent / "commands" / "ralph-loop.md"
    assert commands.is_file()
    out = omcm(env, "uninstall", *argv, cwd=project).stdout
    assert {"home": _tree(home), "project": _tree(project)} == before, out
    assert "restored as it was before omcm" not in out  # there was no settings file to restore
    assert "removed (omcm had created it)" in out
    assert "Kept your data" in out and str(home / ".omcm") in out and "rm -rf" in out
    assert not list((home / ".omcm" / "bin").glob("omcm-hook-*")) if (home / ".omcm" / "bin").exists() else True


def test_a_stale_native_binary_from_an_older_installation_is_removed_too(user, tmp_path):
    pytest.importorskip("omcm_tool_counter", reason="omcm install needs a plugin's hooks")
    home, env = user
    omcm(env, "install")
    stale = home / ".omcm" / "bin" / "omcm-hook-0123456789abcdef"  # built for the Python omcm had before an upgrade
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"\x7fELF old")
    omcm(env, "uninstall")
    assert not stale.exists()
    assert not (home / ".omcm" / "bin").exists() or not list((home / ".omcm" / "bin").iterdir())


def test_project_scope_refuses_a_claude_folder_that_is_a_link(user, tmp_path):
    home, env = user
    project, secret = tmp_path / "cloned", home / ".ssh"
    project.mkdir()
    secret.mkdir()
    (project / ".claude").symlink_to(secret)  # planted by the repository
    for scope in ("project", "local"):
        proc = omcm(env, "install", "--scope", scope, cwd=project, ok=False)
        assert ".claude is a link" in proc.stderr
    assert list(secret.iterdir()) == []
