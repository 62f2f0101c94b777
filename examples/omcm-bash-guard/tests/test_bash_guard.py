import omcm_bash_guard

from omcm_core.testing import pre_tool_payload


def test_denies_rm_rf_root(omcm_dispatch):
    dispatch = omcm_dispatch(names={"bash-guard": omcm_bash_guard})
    out = dispatch(pre_tool_payload("Bash", {"command": "rm -rf / --no-preserve-root"}))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "whole disk" in out["hookSpecificOutput"]["permissionDecisionReason"]


def test_asks_before_force_push(omcm_dispatch):
    dispatch = omcm_dispatch(names={"bash-guard": omcm_bash_guard})
    out = dispatch(pre_tool_payload("Bash", {"command": "git push --force origin main"}))
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_silent_on_harmless_commands_and_other_tools(omcm_dispatch):
    dispatch = omcm_dispatch(names={"bash-guard": omcm_bash_guard})
    assert dispatch(pre_tool_payload("Bash", {"command": "ls -la"})) is None
    assert dispatch(pre_tool_payload("Read", {"file_path": "/etc/passwd"})) is None


def test_config_adds_patterns_and_bad_keys_fall_back(omcm_dispatch, omcm_home):
    omcm_home.mkdir(parents=True)
    (omcm_home / "config.toml").write_text('[bash-guard]\nextra_deny = ["terraform destroy"]\nask_only = "yes"\n')
    dispatch = omcm_dispatch(names={"bash-guard": omcm_bash_guard})
    out = dispatch(pre_tool_payload("Bash", {"command": "terraform destroy -auto-approve"}))
    # ask_only has the wrong type, so it keeps its default (deny); the log names the key.
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert '"key": "ask_only"' in (omcm_home / "logs" / "omcm.jsonl").read_text()


def test_a_repositorys_config_only_makes_the_guard_stricter(omcm_dispatch, omcm_home, tmp_path):
    """The keys are marked ``Project.add`` and ``Project.off``: a cloned repository cannot loosen them."""
    omcm_home.mkdir(parents=True)
    (omcm_home / "config.toml").write_text('[bash-guard]\nextra_deny = ["terraform destroy"]\n')
    project = tmp_path / "cloned"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "omcm.toml").write_text(
        '[bash-guard]\nextra-deny = []\nask_only = true\nExtra_Deny = ["kubectl delete"]\n'
    )
    dispatch = omcm_dispatch(names={"bash-guard": omcm_bash_guard}, env={"CLAUDE_PROJECT_DIR": str(project)})
    for command in ("terraform destroy -auto-approve", "kubectl delete ns prod", "rm -rf /"):
        out = dispatch(pre_tool_payload("Bash", {"command": command}, cwd=str(project)))
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny", command
