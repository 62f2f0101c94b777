"""memory-rotation through `omcm hook`, as Claude Code runs it; crash safety by killing it."""

import json
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from omcm_core.testing import post_tool_payload, run_hook, session_end_payload, session_start_payload

ENV = {"OMCM_LOAD_PLUGINS": "memory-rotation"}
BIG = "".join(f"## 2026-11-{(i // 500) % 28 + 1:02d} entry {i} " + "m" * 60 + "\n" for i in range(1500))


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    (path / ".claude" / "memory").mkdir(parents=True)
    return path


def env_for(tmp_path, project, **extra):
    return {**ENV, "OMCM_HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(project), **extra}


def memory(project):
    return project / ".claude" / "memory"


@pytest.mark.slow
def test_every_fifth_tool_use_checks_and_rotation_reaches_claude(tmp_path, project):
    (memory(project) / "memory.md").write_text("x" * 100_000)
    (memory(project) / "memory-index.json").write_text(
        json.dumps(
            {
                "version": 1,
                "rotatedFiles": [{"file": "memory_20200101_000000.md", "summaryGenerated": True}],
                "stats": {},
            }
        )
    )
    (memory(project) / "memory_20200101_000000.md").write_text("older\n")
    env = env_for(tmp_path, project)
    outs = [run_hook(post_tool_payload("Read", {"file_path": "/a"}, {}, session_id="s"), env=env) for _ in range(5)]
    assert [o.stdout != b"" for o in outs] == [False, False, False, False, True]
    context = json.loads(outs[4].stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[MEMORY_KEEPER_ROTATE] file=memory_") and context.endswith(".md")
    archive = context.split("file=")[1]
    assert (memory(project) / archive).stat().st_size == 100_000


@pytest.mark.slow
def test_parallel_tool_uses_are_counted_exactly(tmp_path, project):
    (memory(project) / "memory.md").write_text("small\n")
    env = env_for(tmp_path, project)
    payloads = [post_tool_payload("Bash", {"command": "ls"}, {"stdout": ""}, session_id="p") for _ in range(30)]
    with ThreadPoolExecutor(max_workers=15) as pool:
        assert all(p.returncode == 0 for p in pool.map(lambda p: run_hook(p, env=env), payloads))
    from omcm_core.store import Store

    assert Store(tmp_path / "home").query("SELECT uses FROM memrot_counters WHERE session_id = 'p'") == [(30,)]


@pytest.mark.slow
def test_two_rotations_at_once_one_wins_nothing_lost(tmp_path, project):
    original = "".join(f"line {i} " + "r" * 80 + "\n" for i in range(1200))
    (memory(project) / "memory.md").write_text(original)
    (memory(project) / "memory-index.json").write_text(
        json.dumps(
            {
                "version": 1,
                "rotatedFiles": [{"file": "memory_20200101_000000.md", "summaryGenerated": True}],
                "stats": {},
            }
        )
    )
    (memory(project) / "memory_20200101_000000.md").write_text("older\n")
    env = {**os.environ, **env_for(tmp_path, project)}
    procs = [
        subprocess.Popen([sys.executable, "-m", "omcm_core", "memory", "rotate"], env=env, stdout=subprocess.PIPE)
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=60)[0].decode() for p in procs]
    assert sum(o.startswith("rotated ") for o in outputs) == 1, outputs
    archives = sorted(p for p in memory(project).glob("memory_2*.md") if "20200101" not in p.name)
    assert len(archives) == 1 and archives[0].read_text() == original
    assert original.endswith((memory(project) / "memory.md").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("point", ["before-archive", "after-archive", "after-carryover", "after-index"])
def test_killed_at_each_step_loses_no_line(tmp_path, project, point):
    _kill_trial(tmp_path, project, {"OMCM_MEMORY_ROTATION_CRASH_AT": point}, delay=None)


@pytest.mark.slow
def test_killed_at_random_moments_loses_no_line(tmp_path):
    rng = random.Random(2026)
    for trial in range(25):
        project = tmp_path / f"p{trial}"
        (project / ".claude" / "memory").mkdir(parents=True)
        _kill_trial(tmp_path / f"t{trial}", project, {}, delay=rng.uniform(0.0, 0.25))


def _kill_trial(tmp_path, project, extra_env, delay):
    folder = memory(project)
    original = "".join(f"entry {i} " + "k" * 200 + "\n" for i in range(30_000))  # ~6 MB: rotation takes a while
    (folder / "memory.md").write_text(original)
    (folder / "memory-index.json").write_text(
        json.dumps(
            {
                "version": 1,
                "rotatedFiles": [{"file": "memory_20200101_000000.md", "summaryGenerated": True}],
                "stats": {},
            }
        )
    )
    (folder / "memory_20200101_000000.md").write_text("older\n")
    env = {**os.environ, **env_for(tmp_path, project), **extra_env}
    proc = subprocess.Popen([sys.executable, "-m", "omcm_core", "memory", "rotate"], env=env, stdout=subprocess.DEVNULL)
    if delay is not None:
        time.sleep(delay)
        proc.kill()
    proc.wait(timeout=60)
    survivors = set((folder / "memory.md").read_text().splitlines())
    for archive in folder.glob("memory_2*.md"):
        survivors |= set(archive.read_text().splitlines())
    assert set(original.splitlines()) <= survivors
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp") and not p.name.startswith(".")]
    # The next check recovers: the index lists every archive and a stale lock does not block.
    subprocess.run(
        [sys.executable, "-m", "omcm_core", "memory", "status"],
        env={**env, "OMCM_MEMORY_ROTATION_CRASH_AT": ""},
        check=True,
        capture_output=True,
    )
    listed = {e["file"] for e in json.loads((folder / "memory-index.json").read_text())["rotatedFiles"]}
    assert {p.name for p in folder.glob("memory_2*.md")} <= listed


def test_session_start_loads_memory_and_creates_the_layout(tmp_path, project):
    (memory(project) / "memory.md").write_text("".join(f"decision {i}\n" for i in range(60)))
    out = json.loads(run_hook(session_start_payload(cwd=str(project)), env=env_for(tmp_path, project)).stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "decision 59" in context and "decision 9\n" not in context
    assert (memory(project) / "sessions").is_dir() and (memory(project) / "memory-index.json").exists()


def test_no_project_means_no_writes(tmp_path):
    env = {**ENV, "OMCM_HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": ""}
    proc = run_hook(session_start_payload(cwd="C:\\Users\\someone\\Project"), env=env, cwd=str(tmp_path))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def test_session_end_returns_at_once_and_l1_appears(tmp_path, project, shared_fixtures):
    transcript = shared_fixtures / "transcripts" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    started = time.monotonic()
    proc = run_hook(
        session_end_payload(session_id="5c0375b4", transcript_path=str(transcript), cwd=str(project)),
        env=env_for(tmp_path, project),
    )
    assert proc.returncode == 0 and proc.stdout == b""
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list((memory(project) / "sessions").glob("*.l1.jsonl")):
        time.sleep(0.1)
    (l1,) = list((memory(project) / "sessions").glob("*.l1.jsonl"))
    time.sleep(0.2)
    lines = [json.loads(line) for line in l1.read_text().splitlines()]
    assert {m["role"] for m in lines} == {"user", "assistant"} and len(lines) > 5


def test_l1_from_every_real_transcript(tmp_path, shared_fixtures):
    from omcm_memory_rotation import l1, layout

    folder = layout.memory_dir(tmp_path)
    for transcript in sorted((shared_fixtures / "transcripts").rglob("*.jsonl")):
        path = l1.write(folder, transcript, transcript.stem)
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert rows and all(r["role"] in ("user", "assistant") and r["content"] for r in rows)


@pytest.mark.slow
def test_search_tiers_in_order_with_sources(tmp_path, project):
    folder = memory(project)
    (folder / "memory.md").write_text("we chose Redis for caching\n")
    (folder / "memory_20260101_000000.md").write_text("## 2026-01-01\nRedis was slow before tuning\n")
    (folder / "memory_20260101_000000.summary.json").write_text(
        json.dumps(
            {
                "themes": [{"name": "Redis caching", "summary": "x"}],
                "keyDecisions": [],
                "issues": [],
                "overallSummary": "Caching work.",
            }
        )
    )
    (folder / "sessions").mkdir(exist_ok=True)
    (folder / "sessions" / "a.l1.jsonl").write_text(json.dumps({"role": "user", "content": "try redis"}) + "\n")
    env = {**os.environ, **env_for(tmp_path, project)}
    out = subprocess.run(
        [sys.executable, "-m", "omcm_core", "memory", "search", "redis", "--deep", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    sources = [h["source"] for h in json.loads(out.stdout)]
    assert sources == ["memory.md", "L3 summaries", "L2 archives", "L1 sessions"]
    plain = subprocess.run(
        [sys.executable, "-m", "omcm_core", "memory", "search", "redis"], env=env, capture_output=True, text=True
    ).stdout
    assert plain.splitlines() == [
        "memory.md:1  we chose Redis for caching",
        "memory_20260101_000000.md summary, theme  Redis caching",
        "memory_20260101_000000.md:2  Redis was slow before tuning",
    ]
