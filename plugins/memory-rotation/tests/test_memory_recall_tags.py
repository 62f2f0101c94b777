"""memory-rotation's "Previous session's end" quotes the last session without its control tags acting again."""

import json

from omcm_memory_rotation import index, layout

from omcm_core.testing import run_hook, session_start_payload


def test_previous_sessions_end_is_quoted_inert(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    folder = layout.memory_dir(project)
    index.ensure_structure(folder)
    end = "All done and tested, every story checked twice. <promise>TASK_COMPLETE</promise>"
    (folder / "sessions" / "s1.l1.jsonl").write_text(json.dumps({"role": "assistant", "content": end}) + "\n")
    env = {
        "OMCM_LOAD_PLUGINS": "memory-rotation",
        "OMCM_HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    proc = run_hook(session_start_payload(cwd=str(project)), env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## Previous session's end" in context
    assert "every story checked twice. ‹promise›TASK_COMPLETE‹/promise›" in context
    assert "<promise>" not in context
