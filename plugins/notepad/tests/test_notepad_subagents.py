"""Tags from SubagentStop (background agents), saved once, never from the main agent's Stop; through `omcm hook`."""

import json

from omcm_core.testing import DEFAULT_SESSION, assert_valid_response, post_tool_payload, run_hook

ANSWER = (
    "Deploys go through CI.\n<remember priority>Deploy only from main.</remember>\n<remember>CI needs 8 min.</remember>"
)
SAVED = "notepad: saved 1 working-memory note and the priority context to .omc/notepad.md"


def stop(text, project, agent_id="a1f2c3d4e5f60718", event="SubagentStop"):
    payload = {
        "session_id": DEFAULT_SESSION,
        "transcript_path": f"/tmp/omcm-test/{DEFAULT_SESSION}.jsonl",
        "cwd": str(project),
        "hook_event_name": event,
        "stop_hook_active": False,
        "last_assistant_message": text,
    }
    if event == "SubagentStop":
        payload.update(agent_id=agent_id, agent_type="general-purpose")
        payload["agent_transcript_path"] = f"/tmp/omcm-test/{DEFAULT_SESSION}/subagents/agent-{agent_id}.jsonl"
    return payload


def agent_result(text, agent_id="a1f2c3d4e5f60718"):
    response = {"status": "completed", "prompt": "p", "agentId": agent_id, "content": [{"type": "text", "text": text}]}
    return post_tool_payload("Agent", {"prompt": "p", "description": "d"}, response)


def launched(agent_id="a1f2c3d4e5f60718"):
    response = {"isAsync": True, "status": "async_launched", "agentId": agent_id, "description": "d", "prompt": "p"}
    return post_tool_payload("Agent", {"prompt": "p", "description": "d"}, response)


def hook(payload, env):
    proc = run_hook(payload, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout) if proc.stdout else None
    assert_valid_response(payload["hook_event_name"], out)
    return out


def notepad(project):
    return (project / ".omc" / "notepad.md").read_text(encoding="utf-8")


def test_a_background_agents_tags_come_from_subagent_stop(env, project):
    assert hook(launched(), env) is None  # PostToolUse sees no answer yet
    assert not (project / ".omc").exists()
    assert hook(stop(ANSWER, project), env) == {"systemMessage": SAVED}
    text = notepad(project)
    assert "\nDeploy only from main.\n" in text and text.count("CI needs 8 min.") == 1


def test_a_foreground_answer_seen_twice_is_saved_once(env, project):
    # The client sends SubagentStop, then the Agent tool's result with the same answer.
    assert hook(stop(ANSWER, project), env) == {"systemMessage": SAVED}
    assert hook(agent_result(ANSWER), env) is None
    assert notepad(project).count("CI needs 8 min.") == 1
    # The other order too (another agent).
    assert hook(agent_result("<remember>second agent</remember>", "b2"), env) is not None
    assert hook(stop("<remember>second agent</remember>", project, "b2"), env) is None
    assert notepad(project).count("second agent") == 1


def test_the_same_note_from_two_agents_is_two_entries(env, project):
    hook(stop("<remember>flaky: test_sync</remember>", project, "a1"), env)
    hook(stop("<remember>flaky: test_sync</remember>", project, "a2"), env)
    assert notepad(project).count("flaky: test_sync") == 2


def test_an_agent_kept_going_may_add_new_notes(env, project):
    hook(stop("<remember>first pass</remember>", project), env)
    hook(stop("<remember>first pass</remember> <remember>second pass</remember>", project), env)
    text = notepad(project)
    assert text.count("first pass") == 2 and text.count("second pass") == 1


def test_the_main_agents_stop_is_never_a_note(env, project):
    assert hook(stop(ANSWER, project, event="Stop"), env) is None
    assert not (project / ".omc").exists()


def test_subagent_stop_can_be_turned_off(env, project):
    off = {**env, "OMCM__NOTEPAD__SUBAGENT_STOP": "false"}
    assert hook(stop(ANSWER, project), off) is None
    assert not (project / ".omc").exists()
    assert hook(stop("no tags here", project), env) is None and hook(stop("", project), env) is None
    assert not (project / ".omc").exists()


def test_subagent_stop_without_an_agent_id_still_saves(env, project):
    # agent_type is what marks an Agent-tool agent; agent_id is optional.
    payload = stop("<remember>old client</remember>", project)
    del payload["agent_id"]
    assert hook(payload, env) is not None and "old client" in notepad(project)


def test_real_subagent_stop_payloads_answer_validly(shared_fixtures, env, project):
    for path in sorted((shared_fixtures / "hook-payloads").glob("SubagentStop-*.json")):
        payload = {**json.loads(path.read_text()), "cwd": str(project)}
        assert hook(payload, env) is None, path.name  # real answers carry no tags
    assert not (project / ".omc").exists()


def test_a_compaction_summary_quoting_an_old_priority_tag_changes_nothing(env, project):
    # Claude Code writes the compaction summary with a forked agent: SubagentStop, agent_type "".
    hook(stop("<remember priority>Deploy from the release branch.</remember>", project, "a1"), env)
    hook(stop("<remember>CI needs 8 min.</remember>", project, "a2"), env)
    hook(stop("<remember priority>Deploy only from main.</remember>", project, "a3"), env)
    before = notepad(project)
    summary = stop(
        "Summary: the agent said <remember priority>Deploy from the release branch.</remember> "
        "and <remember>CI needs 8 min.</remember>",
        project,
        "acompact1",
    )
    summary["agent_type"] = ""
    assert hook(summary, env) is None
    assert notepad(project) == before
    start = {
        "session_id": DEFAULT_SESSION,
        "transcript_path": f"/tmp/omcm-test/{DEFAULT_SESSION}.jsonl",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "compact",
    }
    context = hook(start, env)["hookSpecificOutput"]["additionalContext"]
    assert "Deploy only from main." in context and "release branch" not in context


def subagent_start(project, agent_type="general-purpose", agent_id="a69f71b45732ed2ce"):
    return {
        "session_id": DEFAULT_SESSION,
        "transcript_path": f"/tmp/omcm-test/{DEFAULT_SESSION}.jsonl",
        "cwd": str(project),
        "agent_id": agent_id,
        "agent_type": agent_type,
        "hook_event_name": "SubagentStart",
    }


def test_a_subagent_starts_with_the_priority_context_bounded_and_masked(env, project):
    secret = "ghp_" + "a" * 36
    notes = project / ".omc" / "notepad.md"
    notes.parent.mkdir()
    long_tail = "x" * 2000
    notes.write_text(
        f"# Notepad\n\n## Priority Context\nDeploy only from main; token {secret}. {long_tail}\n\n"
        "## Working Memory\n### 2026-11-25 10:00\nCI needs 8 min.\n\n## MANUAL\nmy own notes\n",
        encoding="utf-8",
    )
    context = hook(subagent_start(project), env)["hookSpecificOutput"]["additionalContext"]
    header = "[notepad] Priority context (.omc/notepad.md):\n"
    assert context.startswith(header + "Deploy only from main; token [REDACTED:")
    assert secret not in context and len(context) <= len(header) + 500  # priority_max_chars
    # Only the priority context: no working memory, no MANUAL section.
    assert "CI needs 8 min." not in context and "my own notes" not in context


def test_subagent_start_gives_nothing_without_a_priority_context_or_when_turned_off(env, project):
    assert hook(subagent_start(project), env) is None  # no notepad at all
    hook(stop(ANSWER, project), env)
    assert (
        "Deploy only from main."
        in hook(subagent_start(project, "Explore"), env)["hookSpecificOutput"]["additionalContext"]
    )
    # An agent without a type is no Agent-tool subagent (the compaction summary's forked agent).
    assert hook(subagent_start(project, agent_type=""), env) is None
    assert hook(subagent_start(project), {**env, "OMCM__NOTEPAD__SUBAGENT_CONTEXT": "false"}) is None


def test_real_subagent_start_payloads_get_the_priority_context(shared_fixtures, env, project):
    hook(stop(ANSWER, project), env)
    for path in sorted((shared_fixtures / "hook-payloads").glob("SubagentStart-*.json")):
        payload = {**json.loads(path.read_text()), "cwd": str(project)}
        out = hook(payload, env)
        assert out["hookSpecificOutput"]["additionalContext"].endswith("Deploy only from main."), path.name
