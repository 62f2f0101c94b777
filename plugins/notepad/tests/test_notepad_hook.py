"""notepad through `omcm hook` subprocesses, as Claude Code runs it."""

import json
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from omcm_notepad.document import STAMP

from omcm_core.testing import assert_valid_response, post_tool_payload, run_hook, session_start_payload


def agent_answer(text, tool="Agent"):
    response = {"status": "completed", "prompt": "do it", "agentId": "a1", "content": [{"type": "text", "text": text}]}
    return post_tool_payload(
        tool, {"prompt": "do it", "description": "d", "subagent_type": "general-purpose"}, response
    )


def notepad(project):
    return (project / ".omc" / "notepad.md").read_text(encoding="utf-8")


def out_of(proc):
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout) if proc.stdout else None


def context_of(out):
    return out["hookSpecificOutput"]["additionalContext"] if out else None


def test_priority_tag_survives_a_compaction(env, project):
    secret = "sk-ant-api03-" + "k" * 40
    answer = f"Found it.\n<remember priority>Build with `make dist`; token {secret}</remember>\nDone."
    saved = out_of(run_hook(agent_answer(answer), env=env))
    assert saved == {"systemMessage": "notepad: saved the priority context to .omc/notepad.md"}
    assert "Build with `make dist`" in notepad(project) and secret not in notepad(project)
    for source in ("compact", "startup", "resume", "clear"):
        out = out_of(run_hook(session_start_payload(source=source, cwd=str(project)), env=env))
        assert_valid_response("SessionStart", out)
        context = context_of(out)
        assert context.startswith("[notepad] Priority context (.omc/notepad.md):\n")
        assert "Build with `make dist`; token [REDACTED:anthropic-key]" in context, source


def test_working_memory_entries_are_stamped_in_the_callers_time_zone(env, project):
    zone = "Pacific/Kiritimati"  # UTC+14: never the machine's own zone by accident
    before = datetime.now(__import__("zoneinfo").ZoneInfo(zone)).replace(tzinfo=None)
    run_hook(agent_answer("<remember>first</remember> and <remember>second</remember>"), env={**env, "TZ": zone})
    after = datetime.now(__import__("zoneinfo").ZoneInfo(zone)).replace(tzinfo=None)
    stamps = [line[4:] for line in notepad(project).splitlines() if line.startswith("### ")]
    assert len(stamps) == 2
    assert all(before.strftime(STAMP) <= s <= after.strftime(STAMP) for s in stamps)


def test_under_a_warm_dispatcher_the_zone_is_the_callers_not_the_process(omcm_dispatch, project, monkeypatch):
    import zoneinfo

    import omcm_notepad

    monkeypatch.setenv("TZ", "UTC")  # the dispatcher's own zone
    dispatch = omcm_dispatch(
        names={"notepad": omcm_notepad}, env={"CLAUDE_PROJECT_DIR": str(project), "TZ": ":Asia/Kathmandu"}
    )
    before = datetime.now(zoneinfo.ZoneInfo("Asia/Kathmandu")).replace(tzinfo=None)  # UTC+5:45
    dispatch(agent_answer("<remember>stamped</remember>"))
    after = datetime.now(zoneinfo.ZoneInfo("Asia/Kathmandu")).replace(tzinfo=None)
    (stamp,) = [line[4:] for line in notepad(project).splitlines() if line.startswith("### ")]
    assert before.strftime(STAMP) <= stamp <= after.strftime(STAMP)


def test_task_tool_and_configured_tools(env, project):
    out_of(run_hook(agent_answer("<remember>via Task</remember>", tool="Task"), env=env))
    out_of(run_hook(agent_answer("<remember>via Bash</remember>", tool="Bash"), env=env))
    assert "via Task" in notepad(project) and "via Bash" not in notepad(project)
    only_bash = {**env, "OMCM__NOTEPAD__TOOLS": '["Bash"]', "OMCM__NOTEPAD__NOTIFY": "false"}
    assert out_of(run_hook(agent_answer("<remember>via Bash</remember>", tool="Bash"), env=only_bash)) is None
    assert "via Bash" in notepad(project)


def test_working_memory_is_injected_only_when_configured(env, project):
    for i in range(4):
        run_hook(agent_answer(f"<remember>note {i}</remember>"), env=env)
    assert context_of(out_of(run_hook(session_start_payload(source="compact"), env=env))) is None
    two = {**env, "OMCM__NOTEPAD__INJECT_ENTRIES": "2"}
    context = context_of(out_of(run_hook(session_start_payload(source="compact"), env=two)))
    assert "note 2" in context and "note 3" in context and "note 1" not in context


def test_startup_prunes_old_entries_and_keeps_manual(env, project):
    old = (datetime.now() - timedelta(days=8)).strftime(STAMP)
    (project / ".omc").mkdir()
    text = f"## Working Memory\n### {old}\nstale\n\n## MANUAL\n### {old}\nmine\n"
    (project / ".omc" / "notepad.md").write_text(text)
    run_hook(session_start_payload(source="compact"), env=env)
    assert notepad(project) == text  # only a new session prunes
    run_hook(session_start_payload(source="startup"), env=env)
    assert notepad(project) == f"## Working Memory\n\n## MANUAL\n### {old}\nmine\n"


def test_a_project_without_a_notepad_is_left_untouched(env, project):
    for source in ("startup", "compact"):
        assert out_of(run_hook(session_start_payload(source=source), env=env)) is None
    assert out_of(run_hook(agent_answer("no tags here"), env=env)) is None
    assert list(project.iterdir()) == []


def test_parallel_hooks_and_cli_writers_lose_no_entry(env, project):
    def hook(i):
        return run_hook(
            agent_answer(f"<remember>hook note {i}</remember>"), env={**env, "OMCM__CORE__PLUGIN_BUDGET_MS": "60000"}
        )

    def cli(i):
        import subprocess
        import sys

        return subprocess.run(
            [sys.executable, "-m", "omcm_core", "notepad", "add", f"cli note {i}"],
            env={**os.environ, **env},
            capture_output=True,
            timeout=60,
        )

    with ThreadPoolExecutor(max_workers=24) as pool:  # hooks and CLI interleaved
        procs = [f.result() for f in [pool.submit(job, i) for i in range(12) for job in (hook, cli)]]
    assert all(p.returncode == 0 for p in procs), [p.stderr for p in procs if p.returncode]
    text = notepad(project)
    for i in range(12):
        assert text.count(f"hook note {i}\n") == 1 and text.count(f"cli note {i}\n") == 1
    assert not [p for p in (project / ".omc").iterdir() if p.name.endswith(".tmp")]


def test_new_files_honour_the_umask_and_rewrites_keep_the_mode(env, project, tmp_path):
    import subprocess
    import sys

    script = "import os, sys, runpy; os.umask(0o027); sys.argv = ['omcm', 'notepad', 'add', 'x']; runpy.run_module('omcm_core', run_name='__main__')"
    subprocess.run([sys.executable, "-c", script], env={**os.environ, **env}, check=True, capture_output=True)
    path = project / ".omc" / "notepad.md"
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
    assert oct((project / ".omc").stat().st_mode & 0o777) == oct(0o750)
    path.chmod(0o600)
    run_hook(agent_answer("<remember>y</remember>"), env=env)
    assert oct(path.stat().st_mode & 0o777) == oct(0o600) and "y\n" in notepad(project)


def test_real_agent_and_task_payloads_save_nothing_and_answer_validly(shared_fixtures, env, project):
    payloads = [p.read_bytes() for p in sorted((shared_fixtures / "hook-payloads").glob("PostToolUse*.json"))]
    agents = [raw for raw in payloads if json.loads(raw)["tool_name"] in ("Agent", "Task")]
    assert agents
    for raw in agents:
        proc = run_hook(raw, env=env)
        assert proc.returncode == 0
        assert_valid_response("PostToolUse", out_of(proc))
    assert not (project / ".omc").exists()  # none of the real answers carries a tag
