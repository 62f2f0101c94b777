"""``omcm new-plugin``: a new plugin's distribution whose tests pass out of the box."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli.new_plugin import HOOKS, BadName, names_for


def omcm(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMCM_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )


@pytest.mark.parametrize(
    ("raw", "plugin", "package"),
    [
        ("rate-limit", "rate-limit", "omcm_rate_limit"),
        ("Rate_Limit", "rate-limit", "omcm_rate_limit"),
        ("omcm-rate.limit", "rate-limit", "omcm_rate_limit"),
        ("guard2", "guard2", "omcm_guard2"),
    ],
)
def test_names_are_derived_and_normalised(raw, plugin, package):
    names = names_for(raw)
    assert (names["plugin"], names["dist"], names["package"]) == (plugin, f"omcm-{plugin}", package)


@pytest.mark.parametrize("raw", ["", "-guard", "guard-", "my guard", "gu/ard", "../x", "omcm", "omcm-", "ünï"])
def test_bad_names_are_refused(raw):
    with pytest.raises(BadName):
        names_for(raw)


def test_writes_a_distribution_and_says_what_it_derived(tmp_path):
    proc = omcm("new-plugin", "Rate_Limit", "--hooks", "post_tool,pre_tool", cwd=tmp_path, home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(
        "Plugin rate-limit: distribution omcm-rate-limit, package omcm_rate_limit, hooks pre_tool, post_tool\n"
    )
    target = tmp_path / "omcm-rate-limit"
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert files == ["README.md", "omcm_rate_limit/__init__.py", "pyproject.toml", "tests/test_rate_limit.py"]
    pyproject = (target / "pyproject.toml").read_text()
    assert '[project.entry-points.omcm]\nrate-limit = "omcm_rate_limit"' in pyproject
    code = (target / "omcm_rate_limit/__init__.py").read_text()
    assert "def pre_tool(event, ctx)" in code and "def post_tool(event, ctx)" in code
    assert "def session_start" not in code


def test_refuses_an_existing_folder_and_bad_input(tmp_path):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    proc = omcm("new-plugin", "guard", "--dir", str(target), cwd=tmp_path, home=tmp_path / "home")
    assert proc.returncode == 1 and "already exists; nothing written" in proc.stderr
    assert [p.name for p in target.iterdir()] == ["keep.txt"]

    proc = omcm("new-plugin", "my guard", cwd=tmp_path, home=tmp_path / "home")
    assert proc.returncode == 2 and "'my guard' is not a valid name" in proc.stderr
    proc = omcm("new-plugin", "guard", "--hooks", "pre_tool,pre_tools", cwd=tmp_path, home=tmp_path / "home")
    assert proc.returncode == 2 and "unknown hook(s) pre_tools (did you mean pre_tool?)" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]  # nothing written, not even OMCM_HOME


def _every_hook_plugin(tmp_path):
    """``omcm new-plugin every-hook`` with every hook, written under tmp_path; its folder."""
    target = tmp_path / "omcm-every-hook"
    proc = omcm(
        "new-plugin",
        "every-hook",
        "--dir",
        str(target),
        "--hooks",
        ",".join(HOOKS),
        cwd=tmp_path,
        home=tmp_path / "home",
    )
    assert proc.returncode == 0, proc.stderr
    return target


def test_generated_tests_pass_for_every_hook(tmp_path):
    """The generated tests, run by pytest against the real core, pass (one hook per snippet, all at once)."""
    target = _every_hook_plugin(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(target), "OMCM_HOME": str(tmp_path / "home")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error"],
        capture_output=True,
        text=True,
        cwd=target,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "16 passed" in run.stdout  # two tests for four hooks, one for the other eight


def test_generated_code_is_lint_clean(tmp_path):
    """An author's first `ruff check` / `ruff format` finds nothing to change in what was generated."""
    pytest.importorskip("ruff")
    target = _every_hook_plugin(tmp_path)
    for path in target.rglob("*.py"):  # only the public API, as plugins must
        assert "omcm_core._" not in path.read_text(), path
    rules = "E,F,W,I,B,UP,SIM"  # omcm's own selection
    for argv in (["check", "--select", rules, "."], ["format", "--check", "."]):
        lint = subprocess.run([sys.executable, "-m", "ruff", *argv], capture_output=True, text=True, cwd=target)
        assert lint.returncode == 0, lint.stdout + lint.stderr


def test_every_hook_is_accepted_and_the_ones_without_an_example_say_so(tmp_path):
    """`--hooks` takes every hookspec (mcp_tools too); a hook with no worked example gets a stub and a test of it."""
    from omcm_core._cli.new_plugin import ALL_HOOKS

    assert {"mcp_tools", "commands", "doctor_report", "task_created", "any_event"} <= set(ALL_HOOKS)
    assert set(HOOKS) < set(ALL_HOOKS)
    target = tmp_path / "omcm-all"
    proc = omcm(
        "new-plugin", "all", "--dir", str(target), "--hooks", ",".join(ALL_HOOKS), cwd=tmp_path, home=tmp_path / "h"
    )
    assert proc.returncode == 0, proc.stderr
    said = [line.strip() for line in proc.stdout.splitlines() if "no worked example" in line]
    assert len(said) == len(ALL_HOOKS) - len(HOOKS)
    assert "mcp_tools: no worked example for it yet: a stub answering nothing (see docs/hooks.md#mcp_tools)" in said
    code = (target / "omcm_all" / "__init__.py").read_text()
    assert "def mcp_tools(ctx):" in code and "def task_created(event, ctx):" in code
    env = {**os.environ, "PYTHONPATH": str(target), "OMCM_HOME": str(tmp_path / "h")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error"],
        capture_output=True,
        text=True,
        cwd=target,
        env=env,
        timeout=180,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    stubs = len(ALL_HOOKS) - len(HOOKS)
    assert f"{16 + stubs} passed" in run.stdout


def test_a_mistyped_hook_gets_did_you_mean(tmp_path):
    proc = omcm("new-plugin", "guard", "--hooks", "subagent_strat,pre_tol", cwd=tmp_path, home=tmp_path / "h")
    assert proc.returncode == 2
    assert (
        "unknown hook(s) subagent_strat (did you mean subagent_start?), pre_tol (did you mean pre_tool?): "
        "the hooks are pre_tool, post_tool, " in proc.stderr
    )


def test_the_manual_lists_the_hooks_the_cli_takes():
    import re

    from omcm_core._cli.new_plugin import ALL_HOOKS

    manual = (Path(__file__).resolve().parents[1] / "docs" / "writing-plugins.md").read_text()
    section = " ".join(manual.split("## 1. Start with `omcm new-plugin`")[1].split("<!--")[0].split())
    examples = re.search(r"worked example and its test: (.*?)\. These", section).group(1)
    stubs = re.search(r"says what each answers\): (.*?)\. It says", section).group(1)
    assert re.findall(r"`(\w+)`", examples) == list(HOOKS)
    assert re.findall(r"`(\w+)`", stubs) == [h for h in ALL_HOOKS if h not in HOOKS]
