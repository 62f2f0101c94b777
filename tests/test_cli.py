"""`omcm plugins`, `omcm doctor` and the per-plugin trace, through real processes."""

import json
import os
import subprocess
import sys

from omcm_core.testing import pre_tool_payload, run_hook


def omcm(*args, env):
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env={**os.environ, **env}
    )


def test_doctor_reports_problems_with_a_third_party_plugin(tmp_path, bash_guard_site):
    home = tmp_path / "home"
    env = {
        "OMCM_HOME": str(home),
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_LOAD_PLUGINS": "bash-guard",
        "HOME": str(tmp_path),
    }
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[bash-guard]\nask_only = 'sometimes'\n")
    proc = omcm("doctor", "--json", env=env)
    report = json.loads(proc.stdout)
    checks = {c["id"]: c for s in report["sections"] for c in s["checks"]}
    assert proc.returncode == 1
    assert checks["settings.none"]["fix"] == "omcm install"
    assert checks["store.check"]["data"]["check"] == "ok" and checks["store.check"]["data"]["mode"] == "0600"
    assert checks["plugin.bash-guard"]["level"] == "ok"
    # The section was read through the plugin's schema, so the bad key is a problem.
    assert "[bash-guard] ask_only" in checks["config.value.bash-guard.ask_only"]["message"]


def test_doctor_is_clean_after_install(tmp_path, bash_guard_site):
    home = tmp_path / "home"
    env = {
        "OMCM_HOME": str(home),
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_LOAD_PLUGINS": "bash-guard",
        "HOME": str(tmp_path),
    }
    assert omcm("install", env=env).returncode == 0
    proc = omcm("doctor", env=env)
    assert proc.returncode == 0, proc.stdout
    assert "No problems found." in proc.stdout
    assert "~/.claude/settings.json runs omcm for PreToolUse" in proc.stdout


def test_trace_names_each_plugin_and_its_answer(tmp_path, bash_guard_site):
    env = {"OMCM_HOME": str(tmp_path), "PYTHONPATH": str(bash_guard_site), "OMCM_TRACE_PLUGINS": "1"}
    proc = run_hook(pre_tool_payload("Bash", {"command": "rm -rf ~"}), env=env)
    traces = [
        json.loads(line.split(" ", 1)[1])
        for line in proc.stderr.decode().splitlines()
        if line.startswith("omcm-trace ")
    ]
    (guard,) = [t for t in traces if t["plugin"] == "bash-guard"]
    assert guard["result"]["permission"] == "deny" and guard["ms"] >= 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_logs_never_hold_secrets(tmp_path):
    from omcm_core import log

    log.configure(tmp_path)
    log.get_logger(plugin="x").error(
        "oops", detail="token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB and AKIAABCDEFGHIJKLMNOP"
    )
    text = (tmp_path / "logs" / "omcm.jsonl").read_text()
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB" not in text and "AKIAABCDEFGHIJKLMNOP" not in text
    assert "oops" in text
