"""The real client fires the new hook events at omcm, and a third party's plugin answering them has its effect.

The plugin is tests/events/plugin (a wheel built here), the only plugin loaded.
`claude` is on PATH when omcm installs, so `omcm install` finds the client's
version and registers the version-gated events; the test checks it did.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from api_messages import bash, text, tool_use
from e2e_harness import every_event_calls

from omcm_core._cli.doctor.events import client_events
from omcm_core.events import EVENTS

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(every_event_world):
    return every_event_world


calls = every_event_calls


def test_the_client_knows_every_event_omcm_registers(claude_binary):
    names = client_events(claude_binary.resolve())
    assert names is not None
    gated_out = {name for name, spec in EVENTS.items() if spec.min_client == "2.1.332"}
    assert set(EVENTS) - gated_out <= set(names), set(EVENTS) - gated_out - set(names)


def test_permission_request_and_post_tool_batch_in_default_mode(world, claude_binary):
    registered = json.loads(world.settings_path.read_text())["hooks"]
    version = subprocess.run([str(claude_binary), "--version"], capture_output=True, text=True).stdout.split()[0]
    # Gated on the client found on PATH: 2.1.330 knows these, not PreSkillShellCommand (2.1.332).
    assert {"PermissionRequest", "PostToolBatch", "SubagentStart", "CwdChanged"} <= set(registered)
    assert ("PreSkillShellCommand" in registered) == (tuple(map(int, version.split("."))) >= (2, 1, 332))
    made, refused = bash("echo allowed > made.txt", id="toolu_made"), bash("rm -rf gone", id="toolu_refused")
    run = world.session([[made, refused], [text("ok")]], prompt="make a file", permission_mode="default")
    assert run.returncode == 0 and not run.timed_out, run.explain()
    # The plugin allowed one call (with its rewrite and the dialog's own suggestion) and denied the other.
    assert [c["input"]["command"] for c in calls(world, "PermissionRequest")] == [
        "echo allowed > made.txt",
        "rm -rf gone",
    ]
    assert (world.project / "made.txt").read_text() == "allowed\n", run.explain()
    assert run.tool_result("toolu_made") == ("(Bash completed with no output)", False)
    assert run.tool_result("toolu_refused") == ("every-event: no 'rm -rf gone'", True)
    # One PostToolBatch for the two parallel calls, its context next to their results.
    contexts = run.main_requests[-1].hook_contexts("PostToolBatch")
    assert len(contexts) == 1 and contexts[0].startswith("batch of 2: Bash,Bash"), run.explain()


def test_subagent_start_cwd_changed_and_user_prompt_expansion(world):
    commands = world.project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review the change: $ARGUMENTS\n")
    (world.project / "sub").mkdir()
    agent = tool_use(
        "Agent",
        {
            "description": "look",
            "prompt": "List the files.",
            "subagent_type": "general-purpose",
            "run_in_background": False,
        },
    )
    script = [
        [agent],
        [text("two files")],  # the subagent's answer
        [bash("cd sub", id="toolu_cd")],
        [bash("echo 'export A=1' > .envrc")],  # the path the plugin asked to watch at CwdChanged
    ]

    def until_file_changed(_body):
        # The client starts watching after CwdChanged's answer arrives, which on a loaded machine can be
        # after the file was written: each turn changes it again until the watcher reports a change.
        if calls(world, "FileChanged"):
            return [text("ok")]
        return [bash("echo 'export B=1' >> .envrc && sleep 1")]

    script += [until_file_changed] * 20 + [[text("ok")]]
    run = world.session(script, prompt="/review --fast")
    assert run.returncode == 0 and not run.timed_out, run.explain()
    first, *_ = run.main_requests
    # UserPromptExpansion: the slash command expanded, and the plugin's context came with it.
    assert "Review the change: --fast" in first.all_text()
    assert [c.split("\n")[0] for c in first.hook_contexts("UserPromptExpansion")] == [
        "expanded /review (slash_command)"
    ]
    # SubagentStart: the subagent's own first request opens with the plugin's context.
    (started,) = calls(world, "SubagentStart")
    subagent = [r for r in run.requests if any(c.startswith("lessons for general-purpose") for c in r.hook_contexts())]
    assert subagent and started["agent_type"] == "general-purpose", run.explain()
    assert not any(c.startswith("lessons for") for c in first.hook_contexts()), (
        "the main loop got the subagent's context"
    )
    # CwdChanged: fired with both folders; FileChanged: the watch path the plugin answered reached the client.
    (moved,) = calls(world, "CwdChanged")
    assert (moved["old"], moved["new"]) == (str(world.project), str(world.project / "sub"))
    debug = run.debug_log.read_text(errors="replace")
    assert "FileChanged: watching 1 paths" in debug, run.explain()  # the watchPaths omcm answered reached it
    changed = calls(world, "FileChanged")
    # The client probes whether fs.watch delivers here; where it finds it does not, no FileChanged
    # can come, whatever omcm answered (its watchPaths reaching the client is checked above).
    if "[fs.watch probe] verdict: delivers" in debug:
        assert changed and changed[0]["path"] == str(world.project / "sub" / ".envrc"), world.log.read_text()

    # PostCompact: compacting the session hands the plugin the summary.
    compacted = world.session(prompt="/compact", resume=run.session_id)
    assert compacted.returncode == 0, compacted.explain()
    (after,) = calls(world, "PostCompact")
    assert after["trigger"] == "manual" and after["summary"], after


LATEST = "2.1.332"


def test_latest_client_pre_skill_shell_command_keeps_a_skills_command_from_running(
    e2e_factory, every_event_site, tmp_path
):
    """2.1.332 only: ``omcm install`` registers PreSkillShellCommand for it, and a deny keeps the command from running."""
    from claude_client import ClientUnavailable, install_client

    try:
        latest = install_client(LATEST)
    except ClientUnavailable as exc:
        pytest.skip(f"Claude Code {LATEST} unavailable: {exc}")
    log = tmp_path / "latest-calls.jsonl"
    world = e2e_factory(
        name="latest",
        extra_env={
            "PATH": f"{latest.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": str(every_event_site),
            "OMCM_LOAD_PLUGINS": "every-event",
            "OMCM_PASS_ENV": "EVERY_EVENT_*",
            "EVERY_EVENT_LOG": str(log),
        },
    )
    world.claude = latest
    assert "PreSkillShellCommand" in json.loads(world.settings_path.read_text())["hooks"]
    commands = world.project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "prep.md").write_text(
        "---\nallowed-tools: Bash(touch:*)\n---\nPrepared: !`touch kept.txt` and !`touch curl-fetched.txt`\n"
    )
    run = world.session([[text("ok")]], prompt="/prep")
    assert run.returncode == 0 and not run.timed_out, run.explain()
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    asked = sorted(c["command"] for c in seen if c["event"] == "PreSkillShellCommand")
    assert asked == ["touch curl-fetched.txt", "touch kept.txt"] and {c["skill"] for c in seen if "skill" in c} == {
        "prep"
    }
    # The plugin denied the one naming curl: it never ran; the other did.
    assert (world.project / "kept.txt").exists() and not (world.project / "curl-fetched.txt").exists()
