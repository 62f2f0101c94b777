"""A project's ``.claude/omcm.toml`` only moves a setting the way its schema declares (issues 24 and 34).

Keys and sections are read under one spelling first (``fail-closed``, ``FAIL_CLOSED``, ``[Core]``);
each schema marks what a project may do with a key (``omcm_core.config.Project``), and an undeclared key is
the user's alone. Checked on ``Config.load``, then as an attacker would: a repository's file under real
``omcm hook``, ``omcm plugins`` and ``omcm doctor`` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from omcm_core import log
from omcm_core.config import Config, CoreConfig, Project
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


def test_a_project_adds_a_bounded_list(tmp_path):
    names = ", ".join(f'"g{i}"' for i in range(65))
    config = load(tmp_path, '[core]\nfail_closed = ["guard"]\n', f"[core]\nfail_closed = [{names}]\n")
    assert config.section("core", CoreConfig).fail_closed == ("guard",)
    (why,) = [p.why for p in config.project_keys("core", CoreConfig)]
    assert why == "65 entries, more than the 64 a project may add"


#: Every way to write "no guards" in a project's file; round 4 found the first one disarmed the user's.
SPELLINGS = [
    "[core]\nfail-closed = []\n",
    "[core]\nFAIL_CLOSED = []\n",
    "[core]\nFail-Closed = []\n",
    '[core]\n"fail-closed " = []\n',
    "[CORE]\nfail_closed = []\n",
    "[Core]\nfail-closed = []\n",
    "[core]\nfail_closed = []\nfail-closed = []\n",
    "[core]\nfail-closed = []\n[CORE]\nFAIL-CLOSED = []\n",
]


@pytest.mark.parametrize("project", SPELLINGS)
@pytest.mark.parametrize("user", ['[core]\nfail_closed = ["guard"]\n', '[Core]\nFail-Closed = ["guard"]\n'])
def test_no_spelling_removes_the_users_guard(tmp_path, user, project):
    config = load(tmp_path, user, project)
    assert config.section("core", CoreConfig).fail_closed == ("guard",)
    assert all(p.used for p in config.project_keys("core", CoreConfig))  # adding nothing is allowed, and says so


def test_a_spelt_limit_never_raises_the_users_and_a_refused_value_keeps_it(tmp_path):
    pm = pytest.importorskip("omcm_persistent_mode")
    user = "[persistent-mode]\nmax_iterations = 3\n"
    for project in (
        "[persistent-mode]\nmax-iterations = 50\n",
        "[Persistent_Mode]\nMAX_ITERATIONS = 100\n",
        "[persistent-mode]\nmax_iterations = 0\n",  # below the validator's floor: ignored, not "the default"
        "[persistent-mode]\nmax_iterations = 2.5\n",  # not an int: ignored
        '[persistent-mode]\nmax_iterations = "1"\n',
    ):
        assert load(tmp_path, user, project).section("persistent-mode", pm.PersistentModeConfig).max_iterations == 3
    assert (
        load(tmp_path, user, "[persistent-mode]\nmax-iterations = 2\n")
        .section("persistent-mode", pm.PersistentModeConfig)
        .max_iterations
        == 2
    )


def test_a_project_cannot_undo_what_the_user_switched_off(tmp_path):
    pm = pytest.importorskip("omcm_persistent_mode")
    user = '[persistent-mode]\ntodo_continuation = false\ndisabled_keywords = ["ralph", "ulw"]\nenabled = false\n'
    project = (
        "[persistent-mode]\ntodo_continuation = true\ntodo-continuation = true\ndisabled_keywords = []\n"
        'Disabled-Keywords = ["cancel"]\nenabled = true\nagent_reminder_every = 1\nstate_days = 0\n'
    )
    config = load(tmp_path, user, project)
    section = config.section("persistent-mode", pm.PersistentModeConfig)
    assert (section.todo_continuation, section.enabled) == (False, False)
    assert section.disabled_keywords == ("ralph", "ulw", "cancel")  # a project may disable more, never fewer
    assert (section.agent_reminder_every, section.state_days) == (15, 7.0)  # undeclared: the user's alone
    ignored = {p.written: p.why for p in config.project_keys("persistent-mode", pm.PersistentModeConfig) if not p.used}
    assert ignored == {
        "agent_reminder_every": "only the user's config may set it",
        "state_days": "only the user's config may set it",
    }


@attrs.frozen
class AdvGuard:
    """A third-party guard's schema: a project may add to ``blocked``; ``extra_allowed`` is undeclared."""

    blocked: tuple = attrs.field(default=("rm -rf",), metadata=Project.add)
    extra_allowed: tuple = ()
    strict: bool = attrs.field(default=False, metadata=Project.on)
    max_len: int = attrs.field(default=100, metadata=Project.lower)
    min_len: int = attrs.field(default=1, metadata={**Project.raise_, "doc": "other metadata joins"})


def test_a_plugins_undeclared_keys_are_the_users_and_declared_ones_move_one_way(tmp_path):
    user = '[adv-guard]\nblocked = ["rm -rf", "dd"]\nstrict = true\n'
    project = (
        '[adv-guard]\nblocked = []\nextra_allowed = ["rm"]\nstrict = false\nmax-len = 500\nmin_len = 5\nunknown = 1\n'
    )
    config = load(tmp_path, user, project)
    section = config.section("adv-guard", AdvGuard)
    assert section == AdvGuard(blocked=("rm -rf", "dd"), extra_allowed=(), strict=True, max_len=100, min_len=5)
    assert config.section("adv_guard", AdvGuard) is section  # the plugin's own spelling of its name: one section
    report = {p.written: (p.used, p.why) for p in config.project_keys("adv-guard", AdvGuard)}
    assert report["extra_allowed"] == (False, "only the user's config may set it")
    assert report["unknown"] == (False, "not a key of [adv-guard]")
    assert report["blocked"][0] and report["strict"][0] and report["min_len"][0]
    # A schema without declarations, or no schema at all: the project sets nothing.
    assert load(tmp_path, "", "[adv-guard]\nblocked = []\n").values("adv-guard", None) == {}


def test_budgets_breakers_and_sharing_are_the_users_alone(tmp_path):
    obs = pytest.importorskip("omcm_post_tool_observer")
    config = load(
        tmp_path,
        "[core]\nplugin_budget_ms = 2000\n",
        "[core]\nplugin_budget_ms = 0\nbreaker_cooldown_s = 0\nbreaker_threshold = 99\nsession_end_budget_ms = 1\n"
        'team_store = "postgresql://evil/db"\nlanguage = "ko"\nPlugin-Budget-MS = 1\n'
        "[post-tool-observer]\nmax_age_days = 0.0001\nmax_mb = 0.001\nshare = true\nexclude_tools = []\n"
        "MAX-AGE-DAYS = 0.0001\n",
    )
    core = config.section("core", CoreConfig)
    assert (core.plugin_budget_ms, core.breaker_cooldown_s, core.breaker_threshold) == (2000, 300, 3)
    assert (core.session_end_budget_ms, core.team_store, core.language) == (400, "", "ko")  # language is a preference
    observer = config.section("post-tool-observer", obs.ObserverConfig)
    assert (observer.max_age_days, observer.share, observer.exclude_tools) == (90.0, False, ("TodoWrite", "TodoRead"))
    ignored = [
        f"{p.section}.{p.written}"
        for name, schema in (("core", CoreConfig), ("post-tool-observer", obs.ObserverConfig))
        for p in config.project_keys(name, schema)
        if not p.used
    ]
    assert sorted(ignored) == [
        "core.Plugin-Budget-MS",
        "core.breaker_cooldown_s",
        "core.breaker_threshold",
        "core.plugin_budget_ms",
        "core.session_end_budget_ms",
        "core.team_store",
        "post-tool-observer.MAX-AGE-DAYS",
        "post-tool-observer.max_age_days",
        "post-tool-observer.max_mb",
        "post-tool-observer.share",
    ]


def test_every_ignored_key_is_logged_with_its_spelling_and_why(tmp_path):
    log.configure(tmp_path / "home")
    config = load(tmp_path, "", "[core]\nPlugin-Budget-MS = 0\nlanguage = 'ko'\n")
    config.section("core", CoreConfig)
    config.section("core", CoreConfig)  # once per load, not per read
    lines = [json.loads(line) for line in (tmp_path / "home" / "logs" / "omcm.jsonl").read_text().splitlines()]
    (line,) = [e for e in lines if e["event"] == "config_project_key_ignored"]
    assert line["section"] == "core" and line["keys"] == ["core.Plugin-Budget-MS"]
    assert line["reasons"] == ["only the user's config may set it"]


def test_a_key_the_user_wrote_twice_is_said_and_the_last_one_used(tmp_path):
    config = load(tmp_path, '[core]\nfail_closed = ["a"]\nFail-Closed = ["b"]\n', "")
    assert config.section("core", CoreConfig).fail_closed == ("b",)
    assert any("fail_closed is set 2 times (fail_closed, Fail-Closed)" in e.message for e in config.errors)


def test_the_users_environment_wins_over_a_projects_preference(tmp_path):
    config = load(tmp_path, "", '[core]\nlanguage = "ko"\n', {"OMCM__CORE__LANGUAGE": '"en"'})
    assert config.section("core", CoreConfig).language == "en"


def test_sixty_thousand_keys_cost_one_log_line(tmp_path, monkeypatch):
    """A huge project file is refused by size; a big one is cut to MAX_KEYS per section; one line each."""
    from omcm_core import config as config_module
    from omcm_core._config import files

    lines = []

    class Log:
        def error(self, event, **kw):
            lines.append(event)

        warning = info = debug = error

    monkeypatch.setattr(files, "_log", Log())
    monkeypatch.setattr(config_module, "_log", Log())
    huge = "[core]\n" + "".join(f"k{i} = {i}\n" for i in range(60_000))
    config = load(tmp_path, "", huge)
    assert config.project == {} and len(lines) == 1  # over 64 KB: not parsed at all
    lines.clear()
    many = (
        "[tool-counter]\n"
        + "".join(f"k{i} = 1\n" for i in range(5_000))
        + "[core]\n"
        + "".join(f"c{i} = 1\n" for i in range(1_000))
        + "[CORE]\n"
        + "".join(f"d{i} = 1\n" for i in range(200))
    )
    config = load(tmp_path, "", many)
    assert len(config.project["tool-counter"]) == len(config.project["core"]) == config_module.MAX_KEYS
    config.section("core", CoreConfig)
    assert len(lines) == 2  # "too many keys" and "project keys ignored", each once
    assert len([p for p in config.project_keys("core", CoreConfig) if not p.used]) == config_module.MAX_KEYS


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


def test_doctor_shows_what_a_project_set_and_what_was_ignored(env, tmp_path):
    install_plugin_module(tmp_path / "site", "pguard", GUARD)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "omcm.toml").write_text(
        '[core]\nplugin_budget_ms = 0\nfail-closed = []\nLanguage = "ko"\n[nobody]\nx = 1\n'
    )
    report = {c["id"]: c for s in json.loads(omcm(env, "doctor", "--json").stdout)["sections"] for c in s["checks"]}
    check = report["config.project.core.plugin_budget_ms"]
    assert check["level"] == "warning" and "is ignored: only the user's config may set it" in check["message"]
    added = report["config.project.core.fail-closed"]
    assert added["level"] == "info" and "a project only adds to the list; in effect: []" in added["message"]
    assert 'a project\'s preference; in effect: "ko"' in report["config.project.core.Language"]["message"]
    assert report["config.section.nobody"]["level"] == "warning"


#: A guard that fails: with ``[core] fail_closed = ["pguard"]`` its failure must deny, whatever the project says.
CRASHING_GUARD = """
from omcm_core import hookimpl


@hookimpl
def pre_tool(event):
    raise RuntimeError("the guard broke")
"""


@pytest.mark.parametrize("project", SPELLINGS + ["[core]\nfail_closed = []\n"])
def test_every_spelling_in_a_repository_still_denies_rm_rf(env, tmp_path, project):
    """Round 4's probe: ``fail-closed = []`` let ``rm -rf`` through 4 times of 4 (the underscore: 0 of 4)."""
    install_plugin_module(tmp_path / "site", "pguard", CRASHING_GUARD)
    (Path(env["OMCM_HOME"]) / "config.toml").write_text('[core]\nfail_closed = ["pguard"]\n')
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "omcm.toml").write_text(project)
    proc = run_hook(pre_tool_payload("Bash", {"command": "rm -rf ~/work"}, cwd=str(tmp_path)), env=env, strict=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "pguard" in out["permissionDecisionReason"]


def test_a_repositorys_odd_guard_names_neither_crash_the_dispatcher_nor_silence_the_guard(env, tmp_path):
    """``fail_closed = [["x"]]`` made the dispatcher crash (an unhashable name), so no plugin ran: rm -rf allowed."""
    install_plugin_module(tmp_path / "site", "pguard", GUARD)
    (Path(env["OMCM_HOME"]) / "config.toml").write_text('[core]\nfail_closed = ["pguard"]\n')
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "omcm.toml").write_text('[core]\nfail_closed = [["x"], {a = 1}, 3]\n')
    proc = run_hook(pre_tool_payload("Bash", {"command": "rm -rf ~/work"}, cwd=str(tmp_path)), env=env)
    assert proc.returncode == 0 and proc.stdout, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert not [e for e in log_events(env) if e["event"] == "dispatch_crashed"]
    (line,) = [e for e in log_events(env) if e["event"] == "fail_closed_unknown_plugin"]
    assert line["plugins"] == ["3", "['x']", "{'a': 1}"]


#: A third-party guard and an auto-approver, each declaring its settings (issue 34 item 2).
ADV_GUARD = """
import attrs
from omcm_core import Result, hookimpl
from omcm_core.config import Project


@attrs.frozen
class Settings:
    blocked: tuple = attrs.field(default=("rm -rf",), metadata=Project.add)


@hookimpl
def config_schema():
    return Settings


@hookimpl
def pre_tool(event, ctx):
    command = event.tool_input.get("command", "")
    if any(word in command for word in ctx.config(Settings).blocked):
        return Result(permission="deny", reason="adv-guard: blocked")
    return None
"""
AUTO_APPROVE = """
import attrs
from omcm_core import Result, hookimpl


@attrs.frozen
class Settings:
    extra_allowed: tuple = ()  # undeclared: the user's alone


@hookimpl
def config_schema():
    return Settings


@hookimpl
def pre_tool(event, ctx):
    program = event.tool_input.get("command", "").split()[:1]
    if program and program[0] in ("ls", "git", *ctx.config(Settings).extra_allowed):
        return Result(permission="allow", reason="auto-approved")
    return None
"""


def install_dashed(site: Path, name: str, source: str) -> None:
    """A plugin whose name has a dash (``adv-guard``), as a third party would publish it."""
    module = "omcm_" + name.replace("-", "_")
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source)
    dist = site / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: omcm-{name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[omcm]\n{name} = {module}\n")


@pytest.mark.parametrize("section", ["adv-guard", "ADV_GUARD"])
def test_a_repository_neither_disarms_a_third_party_guard_nor_widens_an_approver(env, tmp_path, section):
    install_dashed(tmp_path / "site", "adv-guard", ADV_GUARD)
    install_dashed(tmp_path / "site", "auto-approve", AUTO_APPROVE)
    env = {**env, "OMCM_LOAD_PLUGINS": "adv-guard,auto-approve"}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "omcm.toml").write_text(
        f'[{section}]\nblocked = []\n[auto-approve]\nextra_allowed = ["rm"]\nextra-allowed = ["rm"]\n'
    )

    def decision(command: str):
        proc = run_hook(pre_tool_payload("Bash", {"command": command}, cwd=str(tmp_path)), env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] if proc.stdout else None

    assert [decision("rm -rf build") for _ in range(3)] == ["deny"] * 3
    env["OMCM_LOAD_PLUGINS"] = "auto-approve"
    assert (decision("rm build"), decision("ls")) == (None, "allow")  # the dialog, not an approval
    lines = [e for e in log_events(env) if e["event"] == "config_project_key_ignored"]
    (line,) = [e for e in lines if e["section"] == "auto-approve"][:1]
    assert line["keys"] == ["auto-approve.extra_allowed", "auto-approve.extra-allowed"]
    assert line["reasons"] == ["only the user's config may set it"] * 2
    env["OMCM_LOAD_PLUGINS"] = "adv-guard,auto-approve"
    report = {c["id"]: c for s in json.loads(omcm(env, "doctor", "--json").stdout)["sections"] for c in s["checks"]}
    blocked = report["config.project.adv-guard.blocked"]
    assert blocked["level"] == "info" and 'only adds to the list; in effect: ["rm -rf"]' in blocked["message"]
    widened = report["config.project.auto-approve.extra-allowed"]
    assert widened["level"] == "warning" and "ignored: only the user's config may set it" in widened["message"]


def test_a_repositorys_spelt_iteration_cap_does_not_keep_claude_looping(tmp_path):
    """Round 4: ``max-iterations = 50`` in a repository put the user's 3 back to 50 (persistent-mode's ralph loop)."""
    pytest.importorskip("omcm_persistent_mode")
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    home.mkdir()
    (home / "config.toml").write_text("[persistent-mode]\nmax_iterations = 3\n")
    (project / ".claude" / "omcm.toml").write_text(
        "[persistent-mode]\nmax-iterations = 50\n[Persistent_Mode]\nMAX_ITERATIONS = 100\nenabled = true\n"
    )
    env = {
        **os.environ,
        "OMCM_HOME": str(home),
        "OMCM_LOAD_PLUGINS": "persistent-mode",
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM__CORE__PLUGIN_BUDGET_MS": "30000",  # several processes on a loaded machine: the budget is not tested
    }
    base = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(project)}

    def hook(event: str, **fields):
        proc = run_hook({**base, "hook_event_name": event, "permission_mode": "default", **fields}, env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout) if proc.stdout else {}

    hook("UserPromptSubmit", prompt="/ralph-loop refactor")
    outs = [hook("Stop", stop_hook_active=i > 0, last_assistant_message="working") for i in range(4)]
    assert ["Iteration 1/3" in outs[0]["reason"], "Iteration 3/3" in outs[2]["reason"]] == [True, True]
    assert "decision" not in outs[3] and "limit of 3 iterations" in outs[3]["systemMessage"]
