"""`omcm plugins install|uninstall` in the kinds of environment omcm lives in: with pip, without.

A venv with pip stands for pipx and plain venvs; one made by `uv venv` has no
pip, as `uv tool install` makes them (uv installs there); a venv made without
pip and no uv on PATH gets pip from ensurepip. omcm-core goes in from its wheel; then
everything is done by that environment's own `omcm`: a plugin from this
checkout, `omcm install`, a plugin written by `omcm new-plugin` (answering an
event no plugin answered before, so it must be registered), its hook answering
through the registered command, and its uninstall.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).parent / "uv"

pytestmark = pytest.mark.slow


def run(argv: list, ok: bool = True, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kwargs)
    assert (proc.returncode == 0) == ok, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


def has_pip(python: Path) -> bool:
    return subprocess.run([python, "-c", "import pip"], capture_output=True).returncode == 0


@pytest.mark.parametrize("kind", ["pip", "uv", "bare"])
def test_install_registers_and_uninstall_removes(core_wheel, tmp_path, kind):
    if not UV.exists():
        pytest.skip("uv is not installed beside this Python (pip install -r requirements-dev.txt)")
    env_dir, home = tmp_path / "venv", tmp_path / "home"
    home.mkdir()
    if kind in ("pip", "bare"):
        venv.EnvBuilder(with_pip=kind == "pip").create(env_dir)
    else:
        run([UV, "venv", "-q", "--python", sys.executable, env_dir])
    python, omcm = env_dir / "bin" / "python", env_dir / "bin" / "omcm"
    run([UV, "pip", "install", "-q", "--python", python, core_wheel])
    assert has_pip(python) == (kind == "pip")
    # uv on PATH only for uv's environment, as after `uv tool install`; no PYTHONPATH leaking the checkout.
    path = f"{UV.parent}:/usr/bin:/bin" if kind == "uv" else "/usr/bin:/bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("OMCM")}
    env.update(HOME=str(home), PATH=path, OMCM_DAEMON="0")

    first = run([omcm, "plugins", "install", ROOT / "plugins" / "tool-counter"], cwd=tmp_path, env=env)
    assert "tool-counter 0.1.0 (omcm-tool-counter)" in first.stdout
    assert "run `omcm install`" in first.stdout  # nothing registered yet: it says so
    run([omcm, "install"], cwd=tmp_path, env=env)
    settings = home / ".claude" / "settings.json"
    assert "Stop" not in json.loads(settings.read_text())["hooks"]

    run([omcm, "new-plugin", "careful-rm", "--hooks", "pre_tool,stop"], cwd=tmp_path, env=env)
    added = run([omcm, "plugins", "install", "./omcm-careful-rm"], cwd=tmp_path, env=env)
    assert "careful-rm 0.1.0 (omcm-careful-rm): hooks pre_tool, stop" in added.stdout
    # uv did the work in its environment (no pip bootstrapped); with neither pip nor uv, ensurepip made pip.
    assert has_pip(python) == (kind != "uv")
    rows = {r["name"]: r for r in json.loads(run([omcm, "plugins", "--json"], env=env).stdout)}
    assert rows["careful-rm"]["enabled"] and rows["careful-rm"]["distribution"] == "omcm-careful-rm"

    # Stop, which only the new plugin answers, is registered now; and the registered command reaches it.
    hooks = json.loads(settings.read_text())["hooks"]
    assert "Stop" in hooks
    command = hooks["PreToolUse"][-1]["hooks"][0]["command"]
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf build"}}
    answer = run(shlex.split(command), input=json.dumps(payload), env=env)
    assert json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"

    removed = run([omcm, "plugins", "uninstall", "careful-rm"], env=env)
    assert "removed: careful-rm" in removed.stdout
    assert "careful-rm" not in {r["name"] for r in json.loads(run([omcm, "plugins", "--json"], env=env).stdout)}
    assert "omcm entries removed" in run([omcm, "uninstall"], env=env).stdout or not settings.exists()


def test_uninstall_refuses_what_is_not_a_plugin(tmp_path):
    env = {**os.environ, "OMCM_HOME": str(tmp_path / "home")}
    proc = run([sys.executable, "-m", "omcm_core", "plugins", "uninstall", "no-such-plugin"], ok=False, env=env)
    assert "no installed plugin 'no-such-plugin'" in proc.stderr


def test_a_reinstall_says_what_it_reinstalled_without_pips_noise(core_wheel, tmp_path):
    env_dir, home = tmp_path / "venv", tmp_path / "home"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python, omcm = env_dir / "bin" / "python", env_dir / "bin" / "omcm"
    run([python, "-m", "pip", "install", "-q", core_wheel])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("OMCM")}
    env.update(HOME=str(home), PATH="/usr/bin:/bin", OMCM_DAEMON="0")
    plugins = [ROOT / "plugins" / "tool-counter", ROOT / "plugins" / "notepad"]
    run([omcm, "plugins", "install", *plugins], cwd=tmp_path, env=env)
    again = run([omcm, "plugins", "install", "--reinstall", *plugins], cwd=tmp_path, env=env)
    out = again.stdout + again.stderr
    assert "tool-counter 0.1.0 (omcm-tool-counter): reinstalled" in again.stdout
    assert "notepad 0.1.0 (omcm-notepad): reinstalled" in again.stdout
    assert "no omcm plugin was added or changed" not in out
    assert "Requirement already satisfied" not in out and len(out.splitlines()) < 15, out
    # A failure shows the installer's whole output.
    failed = run([omcm, "plugins", "install", tmp_path / "no-such-folder"], ok=False, cwd=tmp_path, env=env)
    assert "no-such-folder" in failed.stderr and "nothing was registered" in failed.stderr


def test_installed_names_reads_pip_and_uv():
    from omcm_core._cli.plugin_install import installed_names

    pip = "Processing ./plugins/notepad\nSuccessfully installed omcm-notepad-0.1.0 omcm_tool_counter-0.1.0\n"
    uv = "Resolved 3 packages in 5ms\nPrepared 1 package\n ~ omcm-notepad==0.1.0 (from file:///x)\n + attrs==25.1.0\n"
    assert installed_names(pip) == {"omcm-notepad", "omcm-tool-counter"}
    assert installed_names(uv) == {"omcm-notepad", "attrs"}
