"""A plugin's command runs without loading every plugin once omcm remembers who offers it (issue 35).

A real distribution on PYTHONPATH offers ``omcm hello``; each run is a real
``python -m omcm_core`` process that reports whether the plugin manager (what
loading every plugin costs) was imported.
"""

import os
import subprocess
import sys

import pytest

from omcm_core.testing import install_plugin_module

PROBE = """
from omcm_core import Command, hookimpl


def configure(parser):
    parser.add_argument("--loud", action="store_true")
    parser.add_argument("--times", type=int, default=1)


def hello(args, ctx):
    print(f"hello from {ctx.plugin}, loud={args.loud}, times={args.times}, project={ctx.project_dir}")
    return 3


@hookimpl
def commands():
    return [Command(name="hello", help="say hello", run=hello, configure=configure)]
"""

RUN = """
import sys
from omcm_core._cli.cli import main
try:
    code = main(sys.argv[1:])
finally:
    sys.stdout.flush()
    print("manager loaded" if "omcm_core._runtime.manager" in sys.modules else "manager not loaded", file=sys.stderr)
raise SystemExit(code)
"""


@pytest.fixture
def omcm(tmp_path):
    site = tmp_path / "site"
    install_plugin_module(site, "probe", PROBE)
    (tmp_path / "home").mkdir()  # made by the first hook call or `omcm install`
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "OMCM_HOME": str(tmp_path / "home"),
        "OMCM_LOAD_PLUGINS": "probe",
        "OMCM_DAEMON": "0",
        "HOME": str(tmp_path),
        "CLAUDE_PROJECT_DIR": str(tmp_path),
    }

    def run(*args, **extra):
        return subprocess.run(
            [sys.executable, "-c", RUN, *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
            cwd=tmp_path,
            timeout=120,
        )

    run.site = site
    return run


def test_second_run_skips_loading_plugins_with_the_same_result(omcm):
    first = omcm("hello", "--loud", "--times", "2")
    second = omcm("hello", "--loud", "--times", "2")
    assert "manager loaded" in first.stderr
    assert "manager not loaded" in second.stderr, second.stderr
    assert first.stdout == second.stdout
    assert "hello from probe, loud=True, times=2" in second.stdout
    assert first.returncode == second.returncode == 3


def test_bad_arguments_get_the_same_usage_message_either_way(omcm):
    first = omcm("hello", "--times", "x")
    second = omcm("hello", "--times", "x")
    assert "manager not loaded" in second.stderr
    assert first.returncode == second.returncode == 2
    for proc in (first, second):
        assert "usage: omcm hello" in proc.stderr
        assert "argument --times: invalid int value: 'x'" in proc.stderr


def test_a_changed_plugin_is_loaded_again(omcm):
    omcm("hello")
    module = omcm.site / "omcm_probe.py"
    module.write_text(module.read_text().replace('print(f"hello', 'print(f"bonjour'))
    proc = omcm("hello")
    assert "manager loaded" in proc.stderr
    assert proc.stdout.startswith("bonjour from probe")
    assert "manager not loaded" in omcm("hello").stderr


def test_a_plugin_turned_off_loses_its_command(omcm):
    omcm("hello")
    proc = omcm("hello", OMCM_LOAD_PLUGINS="")
    assert proc.returncode == 2
    assert "'hello' is not an omcm command" in proc.stderr


def test_a_corrupt_cache_takes_the_usual_route(omcm, tmp_path):
    omcm("hello")
    (cache,) = (tmp_path / "home" / "cache").glob("commands-*.json")
    cache.write_text("{not json")
    proc = omcm("hello")
    assert proc.returncode == 3 and "manager loaded" in proc.stderr
    assert "manager not loaded" in omcm("hello").stderr


def test_help_and_core_commands_keep_the_usual_route(omcm):
    omcm("hello")
    proc = omcm("hello", "--help")
    assert proc.returncode == 0 and "--loud" in proc.stdout and "manager loaded" in proc.stderr
    assert "manager not loaded" in omcm("version").stderr


def test_core_command_names_match_the_parser():
    from omcm_core._cli import cli, main

    assert cli.CORE_COMMANDS == main.CORE_COMMANDS


def test_no_omcm_home_is_made_for_the_cache(omcm, tmp_path):
    home = tmp_path / "elsewhere"
    for _ in range(2):
        proc = omcm("hello", OMCM_HOME=str(home))
        assert proc.returncode == 3 and "manager loaded" in proc.stderr
    assert not home.exists()


def test_two_environments_used_in_turn_keep_a_remembered_route_each(omcm):
    # An OMCM_* variable is part of what is remembered; alternating two values must not make every run
    # load every plugin again (each environment had overwritten the other's file).
    for extra in ({}, {"OMCM_SEARCH_SERVER": "0"}):
        assert "manager loaded" in omcm("hello", **extra).stderr
    for _ in range(2):
        for extra in ({}, {"OMCM_SEARCH_SERVER": "0"}):
            proc = omcm("hello", **extra)
            assert "manager not loaded" in proc.stderr and "hello from probe" in proc.stdout, extra


def test_the_project_folder_is_an_existing_absolute_folder_or_none(tmp_path):
    # omcm_core.paths.project_dir: the dispatcher's (payload.resolve_project_dir) and `omcm search`'s route's.
    from omcm_core._runtime.payload import resolve_project_dir
    from omcm_core.paths import project_dir

    assert resolve_project_dir is project_dir
    cases = [
        ({}, str(tmp_path), tmp_path),
        ({"CLAUDE_PROJECT_DIR": str(tmp_path / "gone")}, str(tmp_path), tmp_path),
        ({"CLAUDE_PROJECT_DIR": "relative"}, None, None),
        ({"CLAUDE_PROJECT_DIR": "/x\x00y"}, "C:\\Users\\me", None),
        ({"CLAUDE_PROJECT_DIR": str(tmp_path)}, "/", tmp_path),
        ({}, None, None),
    ]
    for env, cwd, expected in cases:
        assert project_dir(env, cwd) == expected, (env, cwd)
