"""`omcm update` in a real environment: a core and plugins installed from a checkout, the checkout changed.

What people did before it existed: `pipx install --force ./` after a `git pull`,
which gives a new core with the old plugins. Doctor names that skew with its
fix; `omcm update` (no SOURCE: where the core came from) installs the core and
every bundled plugin from the same tree, leaves a third-party plugin as it was,
and registers omcm again where it was registered.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def run(argv: list, ok: bool = True, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=900, **kwargs)
    assert (proc.returncode == 0) == ok, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


def checkout(dest: Path) -> Path:
    """The parts of this repository an install needs: the core and two bundled plugins."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "tests")
    shutil.copytree(ROOT / "omcm_core", dest / "omcm_core", ignore=ignore)
    for plugin in ("tool-counter", "notepad"):
        shutil.copytree(ROOT / "plugins" / plugin, dest / "plugins" / plugin, ignore=ignore)
    return dest


def doctor(omcm: Path, env: dict) -> dict:
    proc = subprocess.run([str(omcm), "doctor", "--json"], capture_output=True, text=True, env=env, timeout=300)
    out = json.loads(proc.stdout)
    return {c["id"]: c for s in out["sections"] for c in s["checks"]}


def test_update_brings_core_and_plugins_to_one_revision_and_keeps_the_rest(tmp_path):
    src, env_dir, home = checkout(tmp_path / "omcm"), tmp_path / "venv", tmp_path / "home"
    home.mkdir()
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python, omcm = env_dir / "bin" / "python", env_dir / "bin" / "omcm"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("OMCM")}
    env.update(HOME=str(home), PATH=f"{env_dir / 'bin'}:/usr/bin:/bin", OMCM_DAEMON="0")
    run([python, "-m", "pip", "install", "-q", src, src / "plugins" / "tool-counter"], env=env)
    # A third-party plugin, from a folder outside the checkout.
    run([omcm, "new-plugin", "careful-rm", "--hooks", "pre_tool"], cwd=tmp_path, env=env)
    run([omcm, "plugins", "install", tmp_path / "omcm-careful-rm"], cwd=tmp_path, env=env)
    run([omcm, "install"], cwd=tmp_path, env=env)
    settings = home / ".claude" / "settings.json"
    registered = json.loads(settings.read_text())["hooks"]
    assert doctor(omcm, env)["omcm.revision"]["level"] == "ok"

    # `git pull`: the checkout changes (same version numbers), then only the core is reinstalled.
    time.sleep(1.5)  # past the mtime granularity of the installed files
    counter = src / "plugins" / "tool-counter" / "omcm_tool_counter" / "__init__.py"
    counter.write_text(counter.read_text() + "\nUPDATED_FROM_THE_CHECKOUT = True\n")
    run([python, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", src], env=env)
    skew = doctor(omcm, env)["omcm.revision"]
    assert skew["level"] == "warning" and "omcm-tool-counter" in skew["message"]
    assert skew["fix"].endswith(f"update {src}")

    # Hooks keep being called while pip replaces the files under them: none may exit 2 (a blocking error).
    command = registered["PreToolUse"][0]["hooks"][0]["command"]
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    updating = subprocess.Popen([str(omcm), "update"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    codes = []
    while updating.poll() is None:
        call = subprocess.run(shlex.split(command), input=payload, capture_output=True, text=True, env=env, timeout=60)
        codes.append(call.returncode)
        assert not call.stdout.strip() or isinstance(json.loads(call.stdout), dict)
    stdout, _ = updating.communicate()  # closes the pipe
    out = subprocess.CompletedProcess(updating.args, updating.returncode, stdout, "")
    assert updating.returncode == 0, out.stdout
    assert codes and 2 not in codes, codes
    assert f"from {src}" in out.stdout and str(src / "plugins" / "tool-counter") in out.stdout
    assert "kept as installed" in out.stdout and "careful-rm" in out.stdout
    check = run([python, "-c", "import omcm_tool_counter as m; print(m.UPDATED_FROM_THE_CHECKOUT)"], env=env)
    assert check.stdout.strip() == "True"
    rows = {r["name"]: r for r in json.loads(run([omcm, "plugins", "--json"], env=env).stdout)}
    assert rows["careful-rm"]["enabled"] and rows["tool-counter"]["enabled"]
    assert json.loads(settings.read_text())["hooks"].keys() == registered.keys()  # registered again, as it was
    assert doctor(omcm, env)["omcm.revision"]["level"] == "ok"
    # A source that is no omcm tree is refused before anything is installed.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    refused = run([omcm, "update", elsewhere], ok=False, env=env)
    assert "not an omcm source tree" in refused.stderr


def test_git_sources_are_told_from_folders_and_archives():
    from omcm_core._cli.update import git_source

    assert git_source("git+https://github.com/a/omcm@v1") == ("https://github.com/a/omcm", "v1")
    assert git_source("git+ssh://git@github.com/a/omcm.git@main") == ("ssh://git@github.com/a/omcm.git", "main")
    assert git_source("https://github.com/a/omcm.git") == ("https://github.com/a/omcm.git", None)
    assert git_source("./omcm") is None and git_source("omcm-0.2.tar.gz") is None


def test_an_archive_of_a_checkout_is_unpacked_and_a_hostile_one_refused(tmp_path):
    import tarfile

    from omcm_core._cli.update import _tree

    src = checkout(tmp_path / "omcm-0.2")
    archive = tmp_path / "omcm-0.2.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(src, arcname="omcm-0.2")
    work = tmp_path / "work"
    work.mkdir()
    tree = _tree(str(archive), work, dict(os.environ))
    assert tree is not None and (tree / "omcm_core").is_dir() and (tree / "plugins" / "notepad").is_dir()
    hostile = tmp_path / "evil.tar.gz"
    with tarfile.open(hostile, "w:gz") as t:
        info = tarfile.TarInfo("../outside.txt")
        info.size = 1
        import io

        t.addfile(info, io.BytesIO(b"x"))
    work2 = tmp_path / "work2"
    work2.mkdir()
    assert _tree(str(hostile), work2, dict(os.environ)) is None
    assert not (tmp_path / "outside.txt").exists()
