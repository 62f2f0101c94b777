"""The priority context in continuation messages (Stop), and `omcm notepad ...`."""

import json
import os
import subprocess
import sys

import omcm_notepad

from omcm_core import Result, hookimpl
from omcm_core.testing import assert_valid_response, run_hook

PRIORITY = "## Priority Context\n<!-- ALWAYS loaded. -->\nShip only signed builds.\n\n## MANUAL\nmine\n"


def stop_payload(session="s", active=False, event="Stop"):
    return {
        "session_id": session,
        "transcript_path": "/tmp/x.jsonl",
        "cwd": os.getcwd(),
        "hook_event_name": event,
        "stop_hook_active": active,
        "last_assistant_message": "done",
    }


class KeepGoing:
    """Stands in for persistent-mode: blocks Stop with a continuation message."""

    @hookimpl
    def stop(self, event):
        return (
            Result(block=True, reason="Work remains: finish the todo list.")
            if event.hook_event_name == "Stop"
            else None
        )


def write(project, text):
    (project / ".omc").mkdir(exist_ok=True)
    (project / ".omc" / "notepad.md").write_text(text)


def test_priority_context_rides_along_when_another_plugin_blocks_stop(omcm_dispatch, project):
    write(project, PRIORITY)
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    dispatch = omcm_dispatch(names={"notepad": omcm_notepad, "persistent-mode": KeepGoing()}, env=env)
    out = dispatch(stop_payload())
    assert_valid_response("Stop", out)
    assert out == {
        "decision": "block",
        "reason": "Work remains: finish the todo list.\n\n[notepad] Priority context (.omc/notepad.md):\nShip only signed builds.",
    }
    assert dispatch(stop_payload(event="SubagentStop")) is None
    alone = omcm_dispatch(names={"notepad": omcm_notepad}, env=env)
    assert alone(stop_payload()) is None  # nobody blocks: the reason is dropped, Claude stops


def test_continuation_can_be_turned_off(omcm_dispatch, project):
    write(project, PRIORITY)
    env = {"CLAUDE_PROJECT_DIR": str(project), "OMCM__NOTEPAD__CONTINUATION": "false"}
    dispatch = omcm_dispatch(names={"notepad": omcm_notepad, "persistent-mode": KeepGoing()}, env=env)
    assert dispatch(stop_payload())["reason"] == "Work remains: finish the todo list."


def test_stop_through_omcm_hook_with_notepad_alone_says_nothing(env, project):
    write(project, PRIORITY)
    proc = run_hook(stop_payload(), env=env)
    assert (proc.returncode, proc.stdout) == (0, b"")


def omcm(env, *args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", "notepad", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def test_cli_add_show_stats_prune(env, project):
    assert omcm(env, "show").returncode == 1
    assert json.loads(omcm(env, "stats", "--json").stdout) == {"exists": False}
    assert omcm(env, "add", "use", "uv").stdout.startswith("entry added")
    assert omcm(env, "add", "--priority", "deploy from main, token=hunter2hunter2").stdout.startswith(
        "priority context replaced"
    )
    shown = omcm(env, "show").stdout
    assert (
        "deploy from main, token=[REDACTED]" in shown and "hunter2" not in (project / ".omc" / "notepad.md").read_text()
    )
    assert "\nuse uv\n" in shown
    stats = json.loads(omcm(env, "stats", "--json").stdout)
    assert stats["working_memory_entries"] == 1 and stats["priority_chars"] == len("deploy from main, token=[REDACTED]")
    assert stats["sections"] == ["Priority Context", "Working Memory", "MANUAL"]
    text = (project / ".omc" / "notepad.md").read_text().replace("### 20", "### 19", 1)  # make the entry ancient
    (project / ".omc" / "notepad.md").write_text(text)
    assert omcm(env, "prune").stdout.strip() == "pruned 1 entries older than 7 days"
    assert json.loads(omcm(env, "stats", "--json").stdout)["working_memory_entries"] == 0
    assert omcm(env, "add", "  ").returncode == 2


def test_cli_finds_the_project_from_the_current_folder_or_the_flag(env, project, tmp_path):
    no_dir = {k: v for k, v in env.items() if k != "CLAUDE_PROJECT_DIR"}
    assert omcm(no_dir, "add", "from cwd", cwd=str(project)).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    assert omcm(no_dir, "--project", str(other), "add", "elsewhere").returncode == 0
    assert "from cwd" in (project / ".omc" / "notepad.md").read_text()
    assert "elsewhere" in (other / ".omc" / "notepad.md").read_text()


def test_cli_refuses_a_symlinked_notepad(env, project, tmp_path):
    target = tmp_path / "bashrc"
    target.write_text("export PATH=/usr/bin\n")
    (project / ".omc").mkdir()
    (project / ".omc" / "notepad.md").symlink_to(target)
    proc = omcm(env, "add", "x")
    assert proc.returncode == 1 and "could not write" in proc.stderr
    assert target.read_text() == "export PATH=/usr/bin\n"


def test_doctor_reports_a_refused_notepad_as_a_problem(project, tmp_path, omcm_home):
    from omcm_core.config import Config
    from omcm_core.context import Context

    ctx = Context("notepad", omcm_home, project, Config.load(omcm_home, project, {}), {})
    assert omcm_notepad.doctor_report(ctx) == {"exists": False}
    write(project, PRIORITY)
    report = omcm_notepad.doctor_report(ctx)
    assert report["exists"] and report["priority_chars"] == len("Ship only signed builds.") and "problems" not in report
    (project / ".omc" / "notepad.md").unlink()
    (project / ".omc" / "notepad.md").symlink_to(tmp_path / "elsewhere")
    why = f"refused .omc/notepad.md: is a symlink or not a regular file (outside or not plain under {project})"
    assert omcm_notepad.doctor_report(ctx) == {"exists": False, "problems": [why]}


def test_with_the_real_persistent_mode_the_ralph_continuation_carries_the_priority_context(env, project):
    import pytest

    pytest.importorskip("omcm_persistent_mode")
    write(project, PRIORITY)
    both = {**env, "OMCM_LOAD_PLUGINS": "notepad,persistent-mode"}
    prompt = {
        "session_id": "ralph",
        "transcript_path": "/tmp/none.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "permission_mode": "default",
        "prompt": "ralph-loop: write the parser",
    }
    assert run_hook(prompt, env=both).returncode == 0
    out = json.loads(run_hook(stop_payload(session="ralph"), env=both).stdout)
    assert_valid_response("Stop", out)
    assert out["decision"] == "block"
    continuation, _, ours = out["reason"].rpartition("\n\n[notepad] Priority context (.omc/notepad.md):\n")
    assert continuation and "Iteration" in continuation and ours == "Ship only signed builds."
