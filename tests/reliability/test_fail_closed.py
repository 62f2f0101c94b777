"""A fail-closed guard that fails keeps guarding, even once its circuit breaker opens.

With ``[core] fail_closed = ["rel-raise"]`` every PreToolUse is denied while the
guard cannot answer: while it raises (calls 1-3) and while its open breaker
keeps it out (calls 4-5, which were allowed before). ``omcm plugins`` shows it
as "breaker open"; ``omcm plugins reset rel-raise`` lets it be called again.
"""

from __future__ import annotations

import json
import subprocess
import sys

from reliability_harness import log_entries, run_hook

from omcm_core.testing import hook_payload, pre_tool_payload

GUARDS = ["rel-answer", "rel-raise"]


def _omcm(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], capture_output=True, env=env, timeout=60, text=True
    )


def test_an_open_breaker_does_not_open_the_gate(rel_site, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[core]\nfail_closed = ["rel-raise"]\n')
    env = rel_site.env(home, GUARDS, OMCM__CORE__PLUGIN_BUDGET_MS="700")
    payload = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    reasons = []
    for _call in range(5):
        proc = run_hook(payload, env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        specific = json.loads(proc.stdout)["hookSpecificOutput"]
        assert specific["permissionDecision"] == "deny"
        reasons.append(specific["permissionDecisionReason"])
    assert all("rel-raise guard is unavailable" in r for r in reasons)
    assert "circuit breaker" in reasons[3] and "omcm plugins reset rel-raise" in reasons[4]
    assert sum(e["event"] == "plugin_failed" for e in log_entries(home)) == 3  # calls 4 and 5 kept it out

    listing = {row["name"]: row for row in json.loads(_omcm(env, "plugins", "--json").stdout)}
    assert listing["rel-raise"]["status"] == "breaker open" and listing["rel-answer"]["status"] == "enabled"
    assert "breaker closed" in _omcm(env, "plugins", "reset", "rel-raise").stdout
    listing = {row["name"]: row for row in json.loads(_omcm(env, "plugins", "--json").stdout)}
    assert listing["rel-raise"]["status"] == "enabled"
    proc = run_hook(payload, env)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert sum(e["event"] == "plugin_failed" for e in log_entries(home)) == 4  # called again after the reset


def _guard_that_cannot_load(rel_site, tmp_path) -> dict[str, str]:
    """rel-raise named fail-closed, shadowed by a module of the same name that raises on import."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[core]\nfail_closed = ["rel-raise"]\n')
    broken = tmp_path / "shadow"
    broken.mkdir()
    (broken / "omcm_rel_raise.py").write_text("raise ImportError('half-installed guard')\n")
    env = rel_site.env(home, GUARDS)
    env["PYTHONPATH"] = f"{broken}:{env['PYTHONPATH']}"  # the shadowing module is found first
    return env


def test_a_guard_that_cannot_load_denies(rel_site, tmp_path):
    env = _guard_that_cannot_load(rel_site, tmp_path)
    proc = run_hook(json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode(), env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    specific = json.loads(proc.stdout)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny" and "did not load" in specific["permissionDecisionReason"]


def test_a_broken_guard_denies_only_gates_on_commands_not_a_model_switch(rel_site, tmp_path):
    env = _guard_that_cannot_load(rel_site, tmp_path)
    switch = hook_payload("PreModelSwitch", cwd=str(tmp_path), from_model="a", to_model="b")
    proc = run_hook(json.dumps(switch).encode(), env)
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr[-2000:]
    skill = hook_payload(
        "PreSkillShellCommand", cwd=str(tmp_path), tool_name="Bash", tool_input={"command": "ls"}, command_name="s"
    )
    specific = json.loads(run_hook(json.dumps(skill).encode(), env).stdout)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny" and "did not load" in specific["permissionDecisionReason"]
