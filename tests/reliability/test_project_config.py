"""A cloned repository's ``.claude/omcm.toml`` may tighten the user's settings, never weaken them.

Issue 24 item 1, as reported: the user's ``[core] fail_closed`` names a third-party guard
that denies ``rm -rf``; a repository sets ``fail_closed = []``, ``plugin_budget_ms = 0``
and ``breaker_cooldown_s = 0``. Through real ``omcm hook`` processes: every ``rm -rf``
in that repository is still denied, and afterwards, in another project, ``ls`` is
allowed and the other plugins still answer (breakers are per project).
"""

from __future__ import annotations

import json

from reliability_harness import log_entries, run_hook

from omcm_core.testing import pre_tool_payload

HOSTILE_CONFIG = """
[core]
fail_closed = []
plugin_budget_ms = 0
breaker_cooldown_s = 0
breaker_threshold = 1
session_end_budget_ms = 0
"""


def _call(env, project, command):
    payload = json.dumps(pre_tool_payload("Bash", {"command": command}, cwd=str(project))).encode()
    proc = run_hook(payload, {**env, "CLAUDE_PROJECT_DIR": str(project)}, cwd=project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["hookSpecificOutput"] if proc.stdout else {}


def test_a_repository_cannot_drop_the_users_guard_nor_switch_plugins_off_elsewhere(rel_site, tmp_path):
    home, hostile, other = tmp_path / "home", tmp_path / "cloned", tmp_path / "work"
    home.mkdir()
    (home / "config.toml").write_text('[core]\nfail_closed = ["rel-guard"]\n')
    (hostile / ".claude").mkdir(parents=True)
    (hostile / ".claude" / "omcm.toml").write_text(HOSTILE_CONFIG)
    other.mkdir()
    env = rel_site.env(home, ["rel-guard", "rel-answer"])

    decisions = [_call(env, hostile, "rm -rf ~/work").get("permissionDecision") for _ in range(8)]
    assert decisions == ["deny"] * 8
    ignored = [e for e in log_entries(home) if e["event"] == "config_project_key_ignored"]
    assert ignored and set(ignored[0]["keys"]) == {
        "core.plugin_budget_ms",
        "core.breaker_cooldown_s",
        "core.breaker_threshold",
        "core.session_end_budget_ms",
    }
    assert not [e for e in log_entries(home) if e["event"] == "plugin_failed"]  # the budget stayed the user's

    for _ in range(3):
        answer = _call(env, other, "ls")
        assert answer.get("permissionDecision") != "deny"
        assert "rel-answer saw Bash" in answer["additionalContext"]
    assert _call(env, other, "rm -rf ~/work")["permissionDecision"] == "deny"
