"""`omcm` subcommands import plugins only when they need them, and once per process.

A real distribution (a dist-info folder with an entry point, on PYTHONPATH)
whose module writes a line to a file each time it is imported tells what loaded it.
"""

import json
import os
import subprocess
import sys

import pytest

from omcm_core.testing import install_plugin_module

PROBE = """
import os
from omcm_core import Command, hookimpl

with open(os.environ["PROBE_LOG"], "a") as fh:
    fh.write("imported\\n")


def _hello(args, ctx):
    print(f"hello from {ctx.plugin}, loud={args.loud}")
    return 3


@hookimpl
def commands():
    loud = lambda parser: parser.add_argument("--loud", action="store_true")
    return [Command(name="hello", help="say hello", run=_hello, configure=loud)]


@hookimpl
def pre_tool(event):
    return None
"""


@pytest.fixture
def probe(tmp_path):
    site = tmp_path / "site"
    install_plugin_module(site, "probe", PROBE)
    log = tmp_path / "imports.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "PROBE_LOG": str(log),
        "OMCM_HOME": str(tmp_path / "home"),
        "OMCM_LOAD_PLUGINS": "probe",
        "OMCM_DAEMON": "0",
        "HOME": str(tmp_path),
        "CLAUDE_PROJECT_DIR": str(tmp_path),
    }

    def omcm(*args):
        proc = subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env)
        imports = log.read_text().count("imported") if log.exists() else 0
        log.unlink(missing_ok=True)
        return proc, imports

    return omcm


@pytest.mark.parametrize("args", [["version"], ["daemon", "status"], ["uninstall"]])
def test_commands_that_need_no_plugin_import_none(probe, args):
    proc, imports = probe(*args)
    assert imports == 0, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args", [["plugins", "--json"], ["doctor", "--json"], ["install"], ["--help"]])
def test_commands_that_read_plugins_import_them_once(probe, args):
    proc, imports = probe(*args)
    assert imports == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_version_prints_the_version(probe):
    from omcm_core import __version__

    proc, _ = probe("version")
    assert proc.stdout.strip() == __version__ and proc.returncode == 0


def test_plugins_lists_the_probe_and_its_hooks(probe):
    proc, _ = probe("plugins", "--json")
    (row,) = [r for r in json.loads(proc.stdout) if r["name"] == "probe"]
    assert row["enabled"] and row["distribution"] == "omcm-probe" and row["hooks"] == ["commands", "pre_tool"]


def test_a_plugin_command_runs_with_its_arguments_and_exit_code(probe):
    proc, imports = probe("hello", "--loud")
    assert proc.stdout.strip() == "hello from probe, loud=True"
    assert proc.returncode == 3 and imports == 1


def test_install_registers_only_events_plugins_answer(probe, tmp_path):
    proc, _ = probe("install")
    assert proc.returncode == 0, proc.stderr
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert list(settings["hooks"]) == ["PreToolUse"]


def test_a_plugin_command_cannot_take_a_core_name(probe, tmp_path):
    site = tmp_path / "site"
    source = (site / "omcm_probe.py").read_text()
    (site / "omcm_probe.py").write_text(source.replace('Command(name="hello"', 'Command(name="doctor"'))
    proc, _ = probe("--help")
    assert "command 'doctor' of plugin probe clashes; skipped" in proc.stderr
    assert proc.returncode == 0


@pytest.mark.parametrize(
    ("args", "loads"), [(["version"], 0), (["doctor", "--json"], 1), (["plugins"], 1), (["install"], 1)]
)
def test_plugins_are_loaded_at_most_once_per_process(tmp_path, monkeypatch, capsys, args, loads):
    from omcm_core._cli.invocation import Invocation
    from omcm_core._cli.main import run
    from omcm_core._runtime.manager import Manager

    calls = []
    real = Manager.from_environment.__func__

    def counted(cls, *a, **kw):
        calls.append(a)
        return real(cls, *a, **kw)

    monkeypatch.setattr(Manager, "from_environment", classmethod(counted))
    env = {"OMCM_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": str(tmp_path)}
    run(args, Invocation(env, cwd=str(tmp_path)))
    assert len(calls) == loads
