"""`omcm search` from the command line without argparse, attrs or the plugin manager (issue 35 item 4).

Every run is a real `omcm` process on a real store filled through the dispatcher:
the first run of a command remembers which plugin offers it, later runs take the
argv route (search_route.py). Its answer must equal the argparse route's, byte for byte.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import uuid

import omcm_post_tool_observer
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from omcm_post_tool_observer import search_route
from omcm_post_tool_observer.cli import configure_search

from omcm_core.testing import post_tool_payload

# The search server is off here (test_search_server.py has it): `--semantic` would start one that outlives the test.
ENV = {
    "OMCM_LOAD_PLUGINS": "post-tool-observer",
    "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
    "OMCM_SEARCH_SERVER": "0",
}
#: What a run imported, from `python -X importtime` (stripped from the stderr compared).
IMPORT_LINE = re.compile(rb"^import time:.*\|\s*(\S+)\s*$", re.MULTILINE)
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def home(omcm_dispatch, omcm_home, tmp_path):
    from omcm_core.redact import rules_version
    from omcm_core.store import Store

    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    project = tmp_path / "project"
    project.mkdir()
    for i in range(6):
        payload = post_tool_payload("Bash", {"command": f"make target{i}"}, {"stdout": f"zorblax build step {i} ok"})
        dispatch({**payload, "cwd": str(project)})
    failure = post_tool_payload("Bash", {"command": "cargo build"}, {})
    failure.update(hook_event_name="PostToolUseFailure", error="error: cannot find zorblax in scope", cwd=str(project))
    failure.pop("tool_response", None)
    dispatch(failure)
    dispatch({**post_tool_payload("Read", {"file_path": "/src/a.py"}, {"type": "text"}), "cwd": str(tmp_path)})
    store = Store(omcm_home)
    with store.transaction() as conn:
        # A row stored under older rules shows masked; one stamped with today's rules is shown as stored.
        conn.execute(
            "UPDATE observer_events SET output = ?, masked_with = 'older rules' WHERE command = 'make target1'",
            [f"zorblax token {SECRET}"],
        )
        conn.execute(
            "UPDATE observer_events SET output = ?, masked_with = ? WHERE command = 'make target2'",
            [f"zorblax token {SECRET}", rules_version()],
        )
    store.close()
    return omcm_home, project


class Run:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.returncode, self.stdout = proc.returncode, proc.stdout
        self.imported = {m.decode() for m in IMPORT_LINE.findall(proc.stderr)}
        self.stderr = re.sub(rb"(?m)^import time:[^\n]*\n", b"", proc.stderr)
        self.route = "argparse" if "argparse" in self.imported else "argv"


def omcm(home, *args, usual=False, **extra):
    """A real `python -m omcm_core` run; ``usual``: with a command cache of its own, so the route of a first run
    (every plugin loaded, argparse), as every run took before the argv route."""
    omcm_home, project = home
    env = {**os.environ, **ENV, "OMCM_HOME": str(omcm_home), "OMCM_DAEMON": "0", **extra}
    if usual:
        env["OMCM_TEST_FRESH_CACHE"] = uuid.uuid4().hex  # an OMCM_* variable: another command cache file
    env.pop("CLAUDE_PROJECT_DIR", None)
    argv = [sys.executable, "-X", "importtime", "-m", "omcm_core", *args]
    return Run(subprocess.run(argv, capture_output=True, env=env, cwd=project, timeout=120))


ARGVS = [
    ["zorblax"],
    ["zorblax", "--json"],
    ["--json", "zorblax", "build"],
    ["zorblax", "step", "--limit", "3"],
    ["--limit=2", "--json"],
    [],
    ["*", "--json"],
    ["--tool", "bash", "--json"],
    ["--tool=Read", "--all-projects"],
    ["zorblax", "--failures"],
    ["--full-text", "zorblax", "--file", "src"],
    ["--session", "nope", "zorblax"],
    ["nothing-matches-this"],
    ["--all-projects", "--json", "--limit", "0"],
    ["--semantic", "zorblax"],  # no model here: the same message on stderr and full text in both
]


@pytest.mark.parametrize("argv", ARGVS, ids=[" ".join(a) or "(none)" for a in ARGVS])
def test_the_argv_route_answers_as_the_argparse_route_byte_for_byte(home, argv):
    omcm(home, "search", "--json")  # remembers who offers `search`
    fast = omcm(home, "search", *argv)
    usual = omcm(home, "search", *argv, usual=True)
    assert (fast.route, usual.route) == ("argv", "argparse")
    assert fast.returncode == usual.returncode == 0, usual.stderr
    assert fast.stdout == usual.stdout
    assert fast.stderr == usual.stderr


def test_masking_is_the_same_old_rows_masked_again_current_ones_not(home):
    omcm(home, "search", "--json")
    hits = {
        h["command"]: h["output"]
        for h in json.loads(omcm(home, "search", "zorblax", "token", "--json", "--limit", "20").stdout)["results"]
    }
    assert SECRET not in hits["make target1"] and "REDACTED" in hits["make target1"]
    assert hits["make target2"] == f"zorblax token {SECRET}"  # stamped current: not masked a second time


@pytest.mark.parametrize(
    "argv",
    [
        ["--team", "x"],
        ["--ful", "x"],
        ["x", "--json", "y"],
        ["--semantic", "--hybrid", "x"],
        ["--limit", "many"],
        ["--tool"],
        ["-h"],
        ["--bogus"],
    ],
)
def test_what_the_route_does_not_parse_gets_argparse_s_own_answer(home, argv):
    omcm(home, "search", "--json")
    fast = omcm(home, "search", *argv)
    usual = omcm(home, "search", *argv, usual=True)
    assert fast.route == usual.route == "argparse"
    assert fast.returncode == usual.returncode
    assert fast.stdout == usual.stdout
    # The remembered command's parser names itself `omcm search` in its usage (as before this route).
    assert fast.stderr.partition(b"error:")[2] == usual.stderr.partition(b"error:")[2]


def test_a_search_in_a_fresh_omcm_process_imports_no_attrs_argparse_numpy_or_pluggy(home):
    omcm(home, "search", "--json")
    for argv in (["--full-text", "zorblax"], ["zorblax", "--json"]):
        run = omcm(home, "search", *argv)
        assert run.returncode == 0 and b"zorblax" in run.stdout, run.stderr[-2000:]
        loaded = {name.split(".")[0] for name in run.imported}
        assert "omcm_post_tool_observer" in loaded and "sqlite3" in loaded  # the probe sees imports at all
        assert loaded.isdisjoint({"attr", "attrs", "argparse", "numpy", "pluggy", "cattrs", "structlog"}), loaded


def _argparse(argv):
    parser = argparse.ArgumentParser(prog="omcm search", exit_on_error=False)
    configure_search(parser)
    try:
        return vars(parser.parse_args(argv))
    except (argparse.ArgumentError, SystemExit):
        return None


TOKENS = st.sampled_from(
    ["a", "b", "-1", "--json", "--tool", "--tool=x", "--limit", "3", "--limit=4", "--full-text", "--hybrid"]
    + ["--semantic", "--failures", "--all-projects", "--file", "--session", "--", "-", "", "--ful", "--team", "x y"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKENS, max_size=7))
def test_what_the_route_parses_argparse_parses_the_same(argv):
    mine = search_route.parse(argv)
    if mine is not None:
        assert vars(mine) == _argparse(argv), argv


@pytest.mark.parametrize(
    "argv", [[], ["a", "b"], ["--json", "a"], ["a", "--tool", "Bash"], ["--limit", "5", "a", "b", "--hybrid"]]
)
def test_the_usual_forms_are_parsed_by_the_route(argv):
    assert search_route.parse(argv) is not None and vars(search_route.parse(argv)) == _argparse(argv)
