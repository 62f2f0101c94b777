"""`omcm doctor` through real processes: real entry points, real settings files in a tmp HOME."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core.testing import install_plugin_module, pre_tool_payload, run_hook

PLUGIN = """
from omcm_core import hookimpl


@hookimpl
def pre_tool(event):
    return None
"""

RAISING = """
from omcm_core import hookimpl


@hookimpl
def pre_tool(event):
    raise RuntimeError("deliberate failure")
"""


@pytest.fixture
def env(tmp_path):
    site = tmp_path / "site"
    install_plugin_module(site, "dprobe", PLUGIN)
    home = tmp_path / "omcm"
    home.mkdir(mode=0o700)
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "OMCM_HOME": str(home),
        "PYTHONPATH": str(site),
        "PYTHONDONTWRITEBYTECODE": "1",  # an edited plugin must not run from a stale .pyc
        "OMCM_LOAD_PLUGINS": "dprobe",
        "OMCM_DAEMON": "0",
        "CLAUDE_PROJECT_DIR": str(tmp_path),
    }


def omcm(env, *args):
    return subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env)


def doctor_json(env, *args):
    proc = omcm(env, "doctor", "--json", *args)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(proc.stdout)


def checks(report: dict) -> dict[str, dict]:
    return {c["id"]: c for s in report["sections"] for c in s["checks"]}


def test_a_healthy_install_passes_every_section(env):
    assert omcm(env, "install").returncode == 0
    proc = omcm(env, "doctor")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.rstrip().endswith("No problems found.")
    for title in ("Installation", "Registration in Claude Code settings", "Configuration", "Store", "Plugins"):
        assert f"\n{title}\n" in f"\n{proc.stdout}"
    assert "✓ ~/.claude/settings.json runs omcm for PreToolUse" in proc.stdout
    assert "✗" not in proc.stdout and "fix:" not in proc.stdout
    # No Python reprs: no brackets or quotes from a list or dict.
    assert not re.search(r"[\[{]'|'[\]}]", proc.stdout), proc.stdout


def test_an_invalid_settings_file_gets_the_edit_not_omcm_install(env, tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "hooks": {},\n  "model": oops\n}\n')
    proc = omcm(env, "doctor")
    assert proc.returncode == 1
    assert "fix: edit ~/.claude/settings.json line 3: Expecting value at column 12" in proc.stdout
    assert "omcm install" not in proc.stdout
    assert omcm(env, "install").returncode == 2  # why doctor must not suggest it


def test_an_unknown_section_and_key_are_named_with_a_suggestion(env):
    config = Path(env["OMCM_HOME"]) / "config.toml"
    config.write_text(
        "[tool_counter]\nbash_threshold = 3\n[tool-countr]\nthreshold = 3\n[core]\nbreaker_treshold = 5\nplugin_budget_ms = 'fast'\nlanguage = 'fr'\n"
    )
    proc, report = doctor_json(env)
    found = checks(report)
    assert "config.section.tool_counter" not in found  # [tool_counter] is [tool-counter]: one spelling (issue 34)
    typo = found["config.section.tool-countr"]
    assert typo["level"] == "error" and "did you mean [tool-counter]?" in typo["message"]
    assert typo["fix"] == "edit ~/omcm/config.toml: rename [tool-countr] to [tool-counter]"
    assert "did you mean breaker_threshold?" in found["config.key.core.breaker_treshold"]["message"]
    assert "expected int, got str" in found["config.value.core.plugin_budget_ms"]["message"]
    language = found["config.value.core.language"]["message"]
    assert "must be one of auto, en, ko, got fr" in language and "Attribute(" not in language
    assert proc.returncode == 1


def test_unparsable_toml_is_a_problem(env):
    (Path(env["OMCM_HOME"]) / "config.toml").write_text("[core\n")
    _, report = doctor_json(env)
    (problem,) = [p for p in report["problems"] if "config.toml" in p]
    assert "not valid TOML" in problem


def test_recent_config_errors_show_the_key(env):
    (Path(env["OMCM_HOME"]) / "config.toml").write_text("[core]\nbogus_key = 1\n")
    run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env)  # a hook call reads [core] and logs the key
    log = Path(env["OMCM_HOME"]) / "logs" / "omcm.jsonl"
    old = {"timestamp": "2020-01-01T00:00:00Z", "level": "error", "event": "plugin_failed", "plugin": "gone"}
    log.write_text(json.dumps(old) + "\n" + log.read_text())
    proc = omcm(env, "doctor")
    assert "! config_unknown_key (section: core; key: bogus_key)" in proc.stdout
    assert "gone" not in proc.stdout  # older than a day: history, not a warning


def test_an_event_a_plugin_gained_is_reported_until_omcm_install(env, tmp_path):
    assert omcm(env, "install").returncode == 0
    module = tmp_path / "site" / "omcm_dprobe.py"
    module.write_text(PLUGIN + "\n\n@hookimpl\ndef pre_compact(event):\n    return None\n")
    proc, report = doctor_json(env)
    missing = checks(report)["settings.user.missing.PreCompact"]
    assert missing["level"] == "error" and missing["fix"] == "omcm install"
    assert "dprobe's pre_compact hook never runs" in missing["message"]
    assert proc.returncode == 1
    assert omcm(env, "install").returncode == 0
    proc, report = doctor_json(env)
    assert proc.returncode == 0 and report["ok"], report["problems"]
    # The plugin drops pre_tool again: a registered event nobody answers is a warning, not a failure.
    module.write_text(PLUGIN.replace("pre_tool", "pre_compact"))
    proc, report = doctor_json(env)
    unused = checks(report)["settings.user.unused.PreToolUse"]
    assert unused["level"] == "warning" and proc.returncode == 0


def test_an_open_breaker_names_the_reset_command(env, tmp_path):
    install_plugin_module(tmp_path / "site", "dprobe", RAISING)
    assert omcm(env, "install").returncode == 0
    for _ in range(3):
        assert run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env, strict=False).returncode == 0
    proc = omcm(env, "doctor")
    assert proc.returncode == 1
    assert "✗ dprobe is switched off by its circuit breaker after 3 failures" in proc.stdout
    assert "fix: omcm plugins reset dprobe" in proc.stdout


def test_a_home_readable_by_others_is_reported_and_left_alone_without_fix(env):
    home = Path(env["OMCM_HOME"])
    home.chmod(0o755)
    proc = omcm(env, "doctor")
    assert proc.returncode == 1
    assert "fix: chmod 700 ~/omcm" in proc.stdout
    assert oct(home.stat().st_mode & 0o777) == "0o755"  # doctor changed nothing
    assert not (home / "omcm.db").exists()
    proc = omcm(env, "doctor", "--fix")
    assert "fixed: chmod 700 ~/omcm (it was 0755" in proc.stdout
    assert oct(home.stat().st_mode & 0o777) == "0o700"


def test_json_shape(env):
    proc, report = doctor_json(env)
    assert set(report) == {"version", "ok", "problems", "warnings", "sections"}
    assert report["ok"] is False and proc.returncode == 1  # not registered
    assert [s["name"] for s in report["sections"]][:2] == ["Installation", "Registration in Claude Code settings"]
    for section in report["sections"]:
        for check in section["checks"]:
            assert {"id", "ok", "level", "message", "fix"} <= set(check)
            assert check["level"] in ("ok", "info", "warning", "error")
            assert check["ok"] == (check["level"] in ("ok", "info"))
    assert checks(report)["settings.none"]["fix"] == "omcm install"
    help_text = omcm(env, "doctor", "--help").stdout
    assert "--json" in help_text and '"fix"' in help_text and "sections" in help_text


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_no_colour_when_not_a_terminal_or_no_color(env):
    piped = omcm(env, "doctor").stdout
    assert "\033[" not in piped and "✗" in piped
    # On a terminal: colour, unless NO_COLOR is set.
    script = "import pty, sys; pty.spawn([sys.executable, '-m', 'omcm_core', 'doctor'])"
    for extra, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, env={**env, **extra}).stdout
        assert (b"\033[31m" in out) is coloured, out[:500]


def test_ascii_when_stdout_cannot_show_the_marks(env):
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "doctor"],
        capture_output=True,
        env={**env, "PYTHONIOENCODING": "ascii"},
    )
    out = proc.stdout.decode("ascii")  # would raise on any non-ASCII byte
    assert "  x omcm is not registered" in out and "  + omcm " in out


def test_a_section_is_one_function_and_may_answer_plain_mappings(tmp_path):
    """How another section (a team store's health, say) joins: a function of the probe, one list entry."""
    from omcm_core._cli.doctor import render
    from omcm_core._cli.doctor.records import Probe
    from omcm_core._cli.doctor.sections import run_sections

    def team(probe):
        yield {"id": "team.reachable", "message": "team store reachable", "level": "ok"}
        yield {"message": "team store schema is 2 versions behind", "ok": False, "fix": "omcm team migrate"}

    def broken(probe):
        raise OSError("no route to host")

    probe = Probe(tmp_path, None, {})
    sections = run_sections(probe, [("Team store", team), ("Broken", broken)])
    (reachable, behind), (crashed,) = sections[0]["checks"], sections[1]["checks"]
    assert reachable.ok and (behind.level, behind.fix, behind.id) == ("error", "omcm team migrate", "team.1")
    assert crashed.level == "error" and "OSError: no route to host" in crashed.message
    doc = json.loads(render.as_json(sections))
    assert doc["ok"] is False and doc["problems"][0] == "team store schema is 2 versions behind"


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="lists processes from /proc")
def test_background_workers_of_this_home_are_listed_and_a_stuck_one_gets_kill(env, tmp_path):
    from omcm_core._cli.doctor.workers import classify

    hook = [sys.executable, "-m", "omcm_core", "hook", "PreToolUse"]  # waits for stdin that never comes
    ours = subprocess.Popen(hook, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
    other_home = {**env, "OMCM_HOME": str(tmp_path / "elsewhere")}
    theirs = subprocess.Popen(hook, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=other_home)
    try:
        _, report = doctor_json(env)
        (section,) = [s for s in report["sections"] if s["name"] == "Background workers"]
        pids = {c["data"]["pid"] for c in section["checks"] if c.get("data")}
        assert ours.pid in pids and theirs.pid not in pids
    finally:
        for proc in (ours, theirs):
            proc.kill()
            proc.wait()
            proc.stdin.close()
    stuck = classify(4242, ["observer-worker"], 2 * 3600)
    assert (stuck.level, stuck.fix) == ("warning", "kill 4242") and "120 minutes" in stuck.message
    assert classify(4242, ["observer-worker"], 30).ok


def test_plugin_route_and_settings_together_warn_that_hooks_run_twice(env, tmp_path):
    assert omcm(env, "install").returncode == 0
    proc, report = doctor_json({**env, "CLAUDE_PLUGIN_ROOT": str(tmp_path)})
    twice = checks(report)["settings.user.twice"]
    assert (twice["level"], twice["fix"]) == ("warning", "omcm uninstall") and proc.returncode == 0


def test_an_older_installation_still_registered_is_caught_and_omcm_install_rewrites_it(env, tmp_path):
    """Moving omcm (a venv in ~/.omcm to pipx, say): the settings still run the old one until `omcm install`."""
    import omcm_core

    env = {**env, "OMCM_NATIVE_CLIENT": "0"}  # the Python client's command names its installation
    assert omcm(env, "install").returncode == 0
    ours = str(Path(omcm_core.__file__).resolve().parent / "fast_hook.py")
    old = tmp_path / "old-venv" / "site-packages" / "omcm_core" / "fast_hook.py"
    old.parent.mkdir(parents=True)
    old.write_text("")
    settings, (manifest,) = tmp_path / ".claude" / "settings.json", (Path(env["OMCM_HOME"]) / "installs").glob("*")
    for path in (settings, manifest):  # what the old installation wrote
        path.write_text(path.read_text().replace(ours, str(old)))
    proc, report = doctor_json(env)
    other = checks(report)["settings.user.other_install"]
    assert other["level"] == "warning" and "old-venv" in other["message"]
    installed = omcm(env, "install")
    assert installed.returncode == 0 and "omcm updated in" in installed.stdout  # rewritten in place, not doubled
    proc, report = doctor_json(env)
    assert proc.returncode == 0 and not report["warnings"], report["warnings"]
    assert str(old) not in settings.read_text()


def test_the_old_file_form_that_a_reinstall_turns_into_a_blocking_error_is_reported(env, tmp_path):
    import omcm_core

    assert omcm(env, "install").returncode == 0
    settings, (manifest,) = tmp_path / ".claude" / "settings.json", (Path(env["OMCM_HOME"]) / "installs").glob("*")
    data = json.loads(settings.read_text())
    (entry,) = data["hooks"]["PreToolUse"][0]["hooks"]
    old_form = f"{sys.executable} -S {Path(omcm_core.__file__).resolve().parent / 'fast_hook.py'} PreToolUse"
    for path in (settings, manifest):  # what omcm before the -c form wrote
        path.write_text(path.read_text().replace(json.dumps(entry["command"])[1:-1], old_form))
    proc, report = doctor_json(env)
    assert checks(report)["settings.user.old_form"]["level"] == "warning", report
    assert omcm(env, "install").returncode == 0
    proc, report = doctor_json(env)
    assert proc.returncode == 0 and not report["warnings"], report["warnings"]


STOP_FAILURE = """
from omcm_core import hookimpl


@hookimpl
def stop_failure(event):
    return None
"""


def test_stop_failure_left_out_for_want_of_claude_gets_advice_that_works(env, tmp_path):
    """Without `claude` on PATH `omcm install` leaves StopFailure out; doctor must not send the user round in circles."""
    install_plugin_module(tmp_path / "site", "sfprobe", STOP_FAILURE)
    env = {**env, "OMCM_LOAD_PLUGINS": "dprobe,sfprobe", "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    installed = omcm(env, "install")
    assert installed.returncode == 0 and "StopFailure left out" in installed.stderr
    proc, report = doctor_json(env)
    unknown = checks(report)["settings.client_unknown"]
    assert "StopFailure" in unknown["message"] and "claude --version" in unknown["fix"]


def test_the_plugin_route_seen_from_a_shell_is_not_told_to_run_omcm_install(env, tmp_path):
    """`claude plugin install omcm@omcm` enables it in settings.json; `omcm install` there would run every hook twice."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {"omcm@omcm": True}}))
    proc, report = doctor_json(env)
    found = checks(report)
    assert "settings.none" not in found and proc.returncode == 0, report["errors"]
    assert found["settings.plugin"]["level"] == "ok" and "omcm@omcm" in found["settings.plugin"]["message"]


def test_a_failed_plugin_environment_build_is_a_problem_with_the_way_to_retry(env, tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {"omcm@omcm": True}}))
    data = tmp_path / ".claude" / "plugins" / "data" / "omcm-omcm"
    data.mkdir(parents=True)
    (data / "setup.failed").write_text("root\nno python3.10 or later on PATH\n")
    proc, report = doctor_json(env)
    failed = checks(report)["settings.plugin.setup_failed"]
    assert proc.returncode == 1 and failed["level"] == "error" and "setup.failed" in failed["fix"]


def test_a_registered_omcm_that_is_gone_is_a_problem_and_omcm_install_fixes_it(env, tmp_path):
    """After `pipx reinstall --python …` the settings name a fast_hook.py that no longer exists."""
    import omcm_core

    env = {**env, "OMCM_NATIVE_CLIENT": "0"}  # the Python client's command names the file a reinstall moves
    assert omcm(env, "install").returncode == 0
    ours = str(Path(omcm_core.__file__).resolve().parent / "fast_hook.py")
    gone = str(tmp_path / "venvs" / "omcm-core" / "lib" / "python3.11" / "site-packages" / "omcm_core" / "fast_hook.py")
    settings, (manifest,) = tmp_path / ".claude" / "settings.json", (Path(env["OMCM_HOME"]) / "installs").glob("*")
    for path in (settings, manifest):
        path.write_text(path.read_text().replace(ours, gone))
    proc, report = doctor_json(env)
    missing = checks(report)["settings.user.missing_program"]
    assert proc.returncode == 1 and gone in missing["message"]
    assert omcm(env, "install").returncode == 0  # rewrites its own entries in place
    proc, report = doctor_json(env)
    assert proc.returncode == 0 and not report["warnings"], report["warnings"]
