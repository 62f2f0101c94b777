"""A project's ``.claude/omcm.toml`` only tightens; bad names are refused loudly (issue 24 items 1-3, 11).

The rule table (``omcm_core.config.PROJECT_RULES``) is checked on ``Config.load``;
refusals through real ``omcm hook``, ``omcm plugins`` and ``omcm doctor`` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core.config import Config, CoreConfig
from omcm_core.testing import install_plugin_module, pre_tool_payload, run_hook


def load(tmp_path: Path, user: str, project: str, env: dict | None = None) -> Config:
    home, root = tmp_path / "home", tmp_path / "project"
    (root / ".claude").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(user)
    (root / ".claude" / "omcm.toml").write_text(project)
    return Config.load(home, root, env or {})


def test_a_project_adds_guards_but_never_removes_one(tmp_path):
    core = load(tmp_path, '[core]\nfail_closed = ["guard"]\n', "[core]\nfail_closed = []\n").section("core", CoreConfig)
    assert core.fail_closed == ("guard",)
    both = load(tmp_path, '[core]\nfail_closed = ["guard"]\n', '[core]\nfail_closed = ["extra", "guard"]\n')
    assert both.section("core", CoreConfig).fail_closed == ("guard", "extra")
    alone = load(tmp_path, "", '[core]\nfail_closed = ["extra"]\n')
    assert alone.section("core", CoreConfig).fail_closed == ("extra",)


def test_budgets_breakers_and_sharing_are_the_users_alone(tmp_path):
    config = load(
        tmp_path,
        "[core]\nplugin_budget_ms = 2000\n",
        "[core]\nplugin_budget_ms = 0\nbreaker_cooldown_s = 0\nbreaker_threshold = 99\nsession_end_budget_ms = 1\n"
        'team_store = "postgresql://evil/db"\nlanguage = "ko"\n'
        "[post-tool-observer]\nmax_age_days = 0.0001\nmax_mb = 0.001\nshare = true\nexclude_tools = []\n",
    )
    core = config.section("core", CoreConfig)
    assert (core.plugin_budget_ms, core.breaker_cooldown_s, core.breaker_threshold) == (2000, 300, 3)
    assert (core.session_end_budget_ms, core.team_store, core.language) == (400, "", "ko")  # language is a preference
    assert config.sections["post-tool-observer"] == {"exclude_tools": []}
    assert sorted(f"{p.section}.{p.key}" for p in config.ignored) == [
        "core.breaker_cooldown_s",
        "core.breaker_threshold",
        "core.plugin_budget_ms",
        "core.session_end_budget_ms",
        "core.team_store",
        "post-tool-observer.max_age_days",
        "post-tool-observer.max_mb",
        "post-tool-observer.share",
    ]


def test_a_guards_limits_take_the_stricter_value(tmp_path):
    pm = pytest.importorskip("omcm_persistent_mode")
    schema = pm.PersistentModeConfig
    raised = load(tmp_path, "", "[persistent-mode]\nmax_iterations = 100000\nmax_todo_attempts = 2\n")
    assert (
        raised.section("persistent-mode", schema).max_iterations,
        raised.section("persistent-mode", schema).max_todo_attempts,
    ) == (50, 2)
    user_off = load(
        tmp_path,
        "[persistent-mode]\nenabled = false\nmax_iterations = 10\n",
        "[persistent-mode]\nenabled = true\nmax_iterations = 20\n",
    )
    section = user_off.section("persistent-mode", schema)
    assert (section.enabled, section.max_iterations) == (False, 10)


def test_the_users_environment_wins_over_a_projects_preference(tmp_path):
    config = load(tmp_path, "", '[core]\nlanguage = "ko"\n', {"OMCM__CORE__LANGUAGE": '"en"'})
    assert config.section("core", CoreConfig).language == "en"


def test_sixty_thousand_keys_cost_one_log_line(tmp_path, monkeypatch):
    """A huge project file is refused by size; a big one is cut to MAX_KEYS per section; one line each."""
    from omcm_core import config as config_module

    lines = []

    class Log:
        def error(self, event, **kw):
            lines.append(event)

        warning = info = debug = error

    monkeypatch.setattr(config_module, "_log", Log())
    huge = "[core]\n" + "".join(f"k{i} = {i}\n" for i in range(60_000))
    config = load(tmp_path, "", huge)
    assert config.sections == {} and len(lines) == 1  # over 64 KB: not parsed at all
    lines.clear()
    many = (
        "[tool-counter]\n"
        + "".join(f"k{i} = 1\n" for i in range(5_000))
        + "[core]\n"
        + "".join(f"c{i} = 1\n" for i in range(1_000))
    )
    config = load(tmp_path, "", many)
    assert len(config.sections["tool-counter"]) == config_module.MAX_KEYS
    assert len(lines) == 2  # "too many keys" and "project keys ignored", each once
    assert len(config.ignored) == config_module.MAX_KEYS


# -- through real processes ---------------------------------------------------------------------------------

GUARD = """
from omcm_core import Result, hookimpl


@hookimpl
def pre_tool(event):
    return Result(permission="deny", reason="probe guard") if "rm -rf" in event.tool_input.get("command", "") else None
"""
MISSPELT_HOOK = (
    GUARD
    + """

@hookimpl
def session_strat(event):
    return None
"""
)


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "omcm"
    home.mkdir(mode=0o700)
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "OMCM_HOME": str(home),
        "PYTHONPATH": str(tmp_path / "site"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMCM_LOAD_PLUGINS": "pguard",
        "OMCM_DAEMON": "0",
        "CLAUDE_PROJECT_DIR": str(tmp_path),
    }


def omcm(env, *args):
    return subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env)


def log_events(env) -> list[dict]:
    path = Path(env["OMCM_HOME"]) / "logs" / "omcm.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_misspelt_fail_closed_name_is_an_error_in_doctor_and_the_log(env, tmp_path):
    install_plugin_module(tmp_path / "site", "pguard", GUARD)
    (Path(env["OMCM_HOME"]) / "config.toml").write_text('[core]\nfail_closed = ["pgaurd"]\n')
    assert run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env).returncode == 0
    (line,) = [e for e in log_events(env) if e["event"] == "fail_closed_unknown_plugin"]
    assert line["plugins"] == ["pgaurd"] and line["level"] == "error"
    proc = omcm(env, "doctor")
    assert proc.returncode == 1
    assert "fail_closed names 'pgaurd', which is not an installed plugin: did you mean pguard?" in proc.stdout


def test_a_plugin_with_an_unknown_hook_is_not_loaded_and_says_so(env, tmp_path):
    install_plugin_module(tmp_path / "site", "pguard", MISSPELT_HOOK)
    proc = run_hook(pre_tool_payload("Bash", {"command": "rm -rf ~/work"}), env=env)
    assert proc.returncode == 0 and proc.stdout == b""  # not loaded: its pre_tool did not run either
    refused = [e for e in log_events(env) if e["event"] == "plugin_invalid"]
    assert refused and all("unknown hook(s) session_strat" in e["error"] for e in refused)
    row = {r["name"]: r for r in json.loads(omcm(env, "plugins", "--json").stdout)}["pguard"]
    assert row["status"] == "disabled (invalid plugin: unknown hook(s) session_strat)" and not row["enabled"]
    doctor = omcm(env, "doctor")
    assert doctor.returncode == 1 and "unknown hook(s) session_strat" in doctor.stdout


def test_doctor_warns_about_each_ignored_project_key(env, tmp_path):
    install_plugin_module(tmp_path / "site", "pguard", GUARD)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "omcm.toml").write_text("[core]\nplugin_budget_ms = 0\nfail_closed = []\n")
    proc, report = omcm(env, "doctor", "--json"), None
    report = {c["id"]: c for s in json.loads(proc.stdout)["sections"] for c in s["checks"]}
    check = report["config.project.core.plugin_budget_ms"]
    assert check["level"] == "warning" and "a project may only tighten" in check["message"]
    assert "config.project.core.fail_closed" not in report  # adding nothing to a union is allowed
