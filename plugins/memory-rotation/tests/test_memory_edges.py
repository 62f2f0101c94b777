"""Edge cases once reproduced against memory-rotation: hostile session ids, huge transcripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from omcm_memory_rotation import l1, layout

from omcm_core.testing import run_hook, session_end_payload


class Lines:
    def __init__(self):
        self.lines = []

    def error(self, event, **kw):
        self.lines.append((event, kw))

    info = warning = debug = error


def test_long_session_ids_with_one_prefix_get_their_own_l1(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hello"}}) + "\n")
    (tmp_path / "p").mkdir()
    folder = layout.memory_dir(tmp_path / "p")
    prefix = "session-" + "x" * 60
    paths = {l1.write(folder, transcript, prefix + suffix) for suffix in ("-one", "-two")}
    assert len(paths) == 2 and all(p.exists() for p in paths)
    assert l1.session_name("abc-123") == "abc-123"
    for raw in ("-h", "--project=/etc", "a\0b", "../x", prefix):
        name = l1.session_name(raw)
        assert (
            l1.session_name(name) == name and not name.startswith(("-", ".")) and "/" not in name and "\0" not in name
        )


def _wait_for_l1(project: Path, timeout: float = 60) -> list[Path]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list((project / ".claude" / "memory" / "sessions").glob("*.l1.jsonl"))
        if found:
            return found
        time.sleep(0.2)
    return []


@pytest.mark.parametrize("session_id", ["ab\0cd", "-h", "--project=/tmp/elsewhere", "--transcript"])
def test_hostile_session_ids_still_get_a_session_log(tmp_path, session_id):
    project = tmp_path / "project"
    (project / ".claude" / "memory").mkdir(parents=True)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "a reply"}}) + "\n"
    )
    env = {
        "OMCM_LOAD_PLUGINS": "memory-rotation",
        "OMCM_HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    payload = session_end_payload(session_id=session_id, transcript_path=str(transcript), cwd=str(project))
    proc = run_hook(payload, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() in (b"", b"{}"), proc.stderr[-2000:]
    found = _wait_for_l1(project)
    assert len(found) == 1 and "a reply" in found[0].read_text()
    log = tmp_path / "home" / "logs" / "omcm.jsonl"
    failures = [x for x in log.read_text().splitlines() if "plugin_failed" in x] if log.exists() else []
    assert failures == []


def test_a_huge_sparse_transcript_is_read_in_bounded_memory(tmp_path):
    transcript = tmp_path / "sparse.jsonl"
    with open(transcript, "wb") as fh:
        fh.truncate(2 * 1024**3)  # 2 GB of NULs, no newline, nothing on disk
        fh.seek(0, os.SEEK_END)
        fh.write(
            b"\n"
            + json.dumps({"type": "user", "message": {"role": "user", "content": "the last words"}}).encode()
            + b"\n"
        )
    (tmp_path / "p").mkdir()
    # Measured in a grandchild: a process's peak RSS survives exec, so a child of this (large) test
    # worker would report the worker's own peak (449 MB seen in CI for a reader that peaks at 44 MB).
    writer = (
        "import sys; from pathlib import Path; from omcm_memory_rotation import l1\n"
        "print(l1.write(Path(sys.argv[1]), Path(sys.argv[2]), 'sparse').read_text())\n"
    )
    script = (
        "import resource, subprocess, sys\n"
        "proc = subprocess.run([sys.executable, '-c', sys.argv[1], *sys.argv[2:]], capture_output=True, text=True)\n"
        "print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, proc.stdout + proc.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, writer, str(layout.memory_dir(tmp_path / "p")), str(transcript)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    code, rss_kb, text = out.stdout.split(" ", 2)
    assert code == "0", text[-2000:]
    # Bounded: 44 MB on 3.11 (the window is 256 MB, a line at most 8 MB); unbounded, 4.1 GB.
    assert int(rss_kb) < 150 * 1024, f"peak RSS {int(rss_kb) // 1024} MB"
    assert "the last words" in text


def test_a_nul_in_the_payload_cwd_is_refused_not_a_plugin_failure(tmp_path):
    from omcm_core.testing import post_tool_payload, session_start_payload

    env = {"OMCM_LOAD_PLUGINS": "memory-rotation", "OMCM_HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": ""}
    cwd = str(tmp_path) + "/a\0b"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")
    for payload in (
        session_start_payload(session_id="s", cwd=cwd),
        post_tool_payload("Read", {"file_path": "/a"}, {}, session_id="s", cwd=cwd),
        session_end_payload(session_id="s", transcript_path=str(transcript), cwd=cwd),
    ):
        proc = run_hook(payload, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
    log = (tmp_path / "home" / "logs" / "omcm.jsonl").read_text()
    assert "plugin_failed" not in log


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_l1_writer_does_not_hang_on_or_follow_a_planted_transcript(tmp_path, kind):
    project, secret = tmp_path / "p", tmp_path / "secret.jsonl"
    project.mkdir()
    secret.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "OUTSIDE-TEXT"}}) + "\n")
    transcript = tmp_path / "t.jsonl"
    if kind == "fifo":
        os.mkfifo(transcript)  # reading it would block the detached writer for ever
    else:
        transcript.symlink_to(secret)
    env = {**os.environ, "OMCM_HOME": str(tmp_path / "home")}
    cmd = [
        sys.executable,
        "-m",
        "omcm_core",
        "memory",
        "--project",
        str(project),
        "write-l1",
        "--transcript",
        str(transcript),
        "--session",
        "s1",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    written = [p for p in project.rglob("*.l1.jsonl")]
    assert written == [] and "OUTSIDE-TEXT" not in "".join(p.read_text() for p in project.rglob("*") if p.is_file())


def test_a_huge_sparse_memory_md_is_refused_not_read_nor_archived(tmp_path):
    """Issue 24 item 4: a repository's 2 GB sparse memory.md, with the threshold the project raised to its maximum."""
    project = tmp_path / "project"
    memory = layout.memory_dir(project)
    memory.mkdir(parents=True)
    (project / ".claude" / "omcm.toml").write_text(
        "[memory-rotation]\nsave_interval = 1\nthreshold_tokens = 10000000\ncarryover_tokens = 9000000\n"
    )
    with open(memory / "memory.md", "wb") as fh:
        fh.truncate(2 * 1024**3)
    env = {
        **os.environ,
        "OMCM_LOAD_PLUGINS": "memory-rotation",
        "OMCM_HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM_DAEMON": "0",
        "OMCM__CORE__PLUGIN_BUDGET_MS": "60000",  # the user's budget: the check is not cut short by time
    }
    from omcm_core.testing import post_tool_payload

    payload = json.dumps(post_tool_payload("Read", {"file_path": "/a"}, {}, session_id="s", cwd=str(project)))
    script = (
        "import resource, subprocess, sys\n"
        "proc = subprocess.run([sys.executable, '-m', 'omcm_core', 'hook'], input=sys.argv[1].encode(), capture_output=True)\n"
        "print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, payload], capture_output=True, text=True, env=env, timeout=300)
    code, rss_kb = out.stdout.split()
    assert code == "0", out.stderr[-2000:]
    assert int(rss_kb) < 300 * 1024, f"peak RSS {int(rss_kb) // 1024} MB"
    assert sorted(p.name for p in memory.iterdir() if p.name.startswith("memory_")) == []  # nothing archived
    assert (memory / "memory.md").stat().st_size == 2 * 1024**3
    log = [json.loads(line) for line in (tmp_path / "home" / "logs" / "omcm.jsonl").read_text().splitlines()]
    assert [e["limit"] for e in log if e["event"] == "memory_too_large"] == [16 * 1024 * 1024]
