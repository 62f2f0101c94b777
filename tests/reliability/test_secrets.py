"""Secrets in tool calls never reach a file under OMCM_HOME, even through a careless plugin.

A corpus of realistic secret shapes (``secret_corpus``) goes through PostToolUse
in the command, the tool output and an unknown payload key. ``rel-leaky`` logs
the whole call and then fails with the command in its error message, so the
core's log masking and everything the core keeps about failures (log lines,
breaker rows in the store) are exercised. Afterwards no secret's random part
may appear in any byte of any file under OMCM_HOME: database, WAL, logs,
session files.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest
from reliability_harness import log_entries, parse_stdout, post_tool, run_hook, spawn_hook
from secret_corpus import ISSUE_24_SHAPES, corpus, ordinary_texts, secret_shapes, structured

from omcm_core.redact import mask, mask_structured

PLUGINS = ["rel-answer", "rel-leaky", "rel-rows", "post-tool-observer", "pre-tool-guide", "tool-counter"]
PER_CALL = 7


def _files(home):
    return sorted(p for p in home.rglob("*") if p.is_file())


def _leaks(home, secrets) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in _files(home):
        data = path.read_bytes()
        for name, _text, needle in secrets:
            if needle.encode() in data:
                found.setdefault(name, []).append(str(path.relative_to(home)))
    return found


def test_corpus_is_large_and_each_needle_is_distinctive():
    secrets = corpus()
    assert len(secrets) >= 40
    assert len({needle for _n, _t, needle in secrets}) == len(secrets)
    for name, text, needle in secrets:
        assert needle in text and len(needle) >= 16, name


def test_the_breadth_corpus_is_large_and_distinct():
    shapes, ordinary = secret_shapes(), ordinary_texts()
    assert len(shapes) >= 150 and len(ordinary) >= 150
    assert len(ISSUE_24_SHAPES) == 29
    assert len({s.needle for s in shapes}) == len({s.name for s in shapes}) == len(shapes)
    assert len(set(ordinary)) == len(ordinary)


@pytest.mark.parametrize("shape", secret_shapes(), ids=lambda s: s.name)
def test_every_secret_shape_is_masked(shape):
    """Recall: each shape of the corpus (docs/reliability.md's table) loses its random part."""
    masked = mask_structured(shape.value)
    assert shape.needle not in json.dumps(masked), masked


@pytest.mark.parametrize("text", ordinary_texts(), ids=lambda t: t[:40])
def test_every_ordinary_text_stays_readable(text):
    """Precision: errors, commands, code, paths, hashes, UUIDs and plain base64 come out unchanged."""
    assert mask(text) == text


@pytest.mark.slow
def test_no_secret_reaches_any_file_under_omcm_home(rel_site, tmp_path):
    home = tmp_path / "home"
    secrets = corpus()
    env = rel_site.env(home, PLUGINS, OMCM__CORE__BREAKER_THRESHOLD="1000")
    for start in range(0, len(secrets), PER_CALL):
        batch = secrets[start : start + PER_CALL]
        text = "\n".join(t for _n, t, _s in batch)
        payload = post_tool(
            f"secret-session-{start}",
            tool_input={"command": text, "description": "deploy"},
            tool_response={"stdout": text, "stderr": "error: " + text, "interrupted": False},
            env_dump=text,
        )
        proc = run_hook(json.dumps(payload).encode(), env)
        assert proc.returncode == 0
        parse_stdout("PostToolUse", proc.stdout)
    entries = log_entries(home)
    assert sum(e["event"] == "rel_leaky_saw" for e in entries) == -(-len(secrets) // PER_CALL), (
        "the leaky plugin did not log"
    )
    assert sum(e["event"] == "plugin_failed" for e in entries) == -(-len(secrets) // PER_CALL)
    assert (home / "omcm.db").exists() and (home / "logs" / "omcm.jsonl").exists()
    assert _leaks(home, secrets) == {}


@pytest.mark.slow
def test_no_secret_in_the_wal_while_the_store_is_open(rel_site, tmp_path):
    """The same check while a dispatcher still holds the store open (WAL not yet checkpointed)."""
    home, side = tmp_path / "home", tmp_path / "side.txt"
    secrets = corpus()
    text = "\n".join(t for _n, t, _s in secrets)
    env = rel_site.env(
        home,
        PLUGINS + ["rel-writer"],
        OMCM__CORE__BREAKER_THRESHOLD="1000",
        REL_SIDE_FILE=str(side),
        REL_WRITES="3",
        REL_HOLD_S="20",
    )
    first = run_hook(json.dumps(post_tool("wal-1", tool_input={"command": text})).encode(), rel_site.env(home, PLUGINS))
    assert first.returncode == 0
    proc = spawn_hook(json.dumps(post_tool("wal-2", tool_input={"command": text}, tool_response=text)).encode(), env)
    try:
        import time

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(side.read_text().split() if side.exists() else []) < 3:
            time.sleep(0.01)
        assert (home / "omcm.db-wal").exists(), "the store was not open in WAL mode"
        assert _leaks(home, secrets) == {}
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def test_structured_input_and_cut_secrets_never_reach_disk(rel_site, tmp_path):
    """Secret-named keys of an MCP tool's input, a key cut mid-body and a token on the 10 KB cut."""
    home = tmp_path / "home"
    env = rel_site.env(home, PLUGINS, OMCM__CORE__BREAKER_THRESHOLD="1000")
    cases = structured()
    tool_input = {f"field{i}": value for i, (_k, value, _n) in enumerate(cases)}
    key_body = [f"MIIEow{i:04d}" + "Q" * 54 for i in range(80)]
    lines = [f"log {i}" for i in range(200)] + [
        "-----BEGIN RSA PRIVATE KEY-----",
        *key_body,
        "-----END RSA PRIVATE KEY-----",
        "done",
    ]
    token = "gh" + "p_" + "Abc123XyZ9" * 4
    straddle = "x" * 4976 + " " + token + " " + "y" * 12_000
    needles = [("structured-" + k, "", n) for k, _v, n in cases] + [
        ("pem-body", "", key_body[-1]),
        ("token-prefix", "", token[:12]),
    ]
    for i, output in enumerate(("\n".join(lines), straddle)):
        payload = post_tool(f"cut-{i}", tool_input={"command": "query", **tool_input}, tool_response={"stdout": output})
        proc = run_hook(json.dumps(payload).encode(), env)
        assert proc.returncode == 0
    assert (home / "omcm.db").exists()
    assert _leaks(home, needles) == {}


def _store_bytes(home) -> int:
    return sum(p.stat().st_size for p in home.glob("omcm.db*"))


@pytest.mark.slow
def test_a_huge_command_and_output_are_capped_before_masking(rel_site, tmp_path):
    """Issue 24 item 7: a 64 MB command became 161 MB of store. 16 MB in each field here, store growth bounded."""
    home = tmp_path / "home"
    env = rel_site.env(home, ["post-tool-observer", "pre-tool-guide"], OMCM__CORE__PLUGIN_BUDGET_MS="60000")
    shapes = {s.name: s for s in ISSUE_24_SHAPES}
    first, last = shapes["docker-login-p"], shapes["vault-hvs"]
    filler = ("echo building step; " * 50 + "\n") * 16_000  # 16 MB, 16,000 lines
    command = first.text + "\n" + filler + last.text
    ok = post_tool("huge-1", tool_input={"command": command}, tool_response={"stdout": command, "stderr": ""})
    failed = post_tool("huge-1", tool_input={"command": command}, hook_event_name="PostToolUseFailure")
    failed.pop("tool_response")
    failed.update(error="Exit code 1\n" + command, is_interrupt=False)
    for payload in (ok, failed):
        proc = run_hook(json.dumps(payload).encode(), env, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
    import sqlite3

    with contextlib.closing(sqlite3.connect(home / "omcm.db")) as db:  # 3.13 warns of an unclosed one
        recorded = db.execute("SELECT count(*), max(length(command)) FROM observer_events").fetchone()
    assert recorded[0] == 2 and recorded[1] < 20_000, recorded  # both recorded (not abandoned), the command cut
    assert _store_bytes(home) < 2_000_000  # each call's record is ~10 KB of every field, not 16 MB
    assert _leaks(home, [first, last]) == {}


def test_an_l1_message_is_capped_before_masking(tmp_path):
    """memory-rotation's L1 session file keeps a huge message's masked head and tail, not 8 MB masked whole."""
    from omcm_memory_rotation import l1

    shape = {s.name: s for s in ISSUE_24_SHAPES}["netrc"]
    text = shape.text + "\n" + "word " * 800_000 + "\n" + shape.text
    entry = {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": text}}
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps(entry) + "\n")
    folder = tmp_path / "project" / ".claude" / "memory"
    folder.mkdir(parents=True)
    written = l1.write(folder, transcript, "s1")
    data = written.read_text()
    assert len(data) < 200_000  # of a 4 MB message
    assert shape.needle not in data and data.count("[REDACTED") >= 2


def _wait_for(paths_of, timeout: float = 90.0) -> list:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = paths_of()
        if found:
            return found
        time.sleep(0.2)
    return []


@pytest.mark.slow
def test_no_issue_24_shape_reaches_disk_through_real_hooks(rel_site, tmp_path):
    """Issue 24 item 5's end-to-end check: the 29 shapes through real `omcm hook` processes.

    Each shape is a Bash command (or an MCP tool's input) whose output and failure repeat it, and a
    user message of the transcript. Afterwards it is in none of: the store (observations, the
    guide's failures, the transcript reader's tables), the team outbox, the project's
    `.claude/memory/sessions/*.l1.jsonl`, the log, or what `omcm search` prints.
    """
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".claude" / "memory").mkdir(parents=True)
    transcript = tmp_path / "session.jsonl"
    env = rel_site.env(
        home,
        ["post-tool-observer", "pre-tool-guide", "memory-rotation"],
        OMCM__CORE__BREAKER_THRESHOLD="1000",
        OMCM__CORE__PLUGIN_BUDGET_MS="60000",
        OMCM__CORE__TEAM_STORE="postgresql://127.0.0.1:9/omcm-test-unreachable",
        OMCM__POST_TOOL_OBSERVER__SHARE="true",
        OMCM__PRE_TOOL_GUIDE__SHARE="true",
    )
    messages = []
    for i, shape in enumerate(ISSUE_24_SHAPES):
        tool = "Bash" if isinstance(shape.value, str) else "mcp__db__query"
        messages.append({"type": "user", "message": {"role": "user", "content": f"please run {shape.text}"}})
        ok = post_tool("e2e", f"toolu_ok_{i}", cwd=str(project), tool_name=tool, tool_input=shape.tool_input)
        ok.update(transcript_path=str(transcript), tool_response={"stdout": shape.text, "stderr": shape.text})
        failed = post_tool("e2e", f"toolu_fail_{i}", cwd=str(project), tool_name=tool, tool_input=shape.tool_input)
        failed.pop("tool_response")
        failed.update(
            transcript_path=str(transcript),
            hook_event_name="PostToolUseFailure",
            error=f"Exit code 1\nerror: {shape.text}",
            is_interrupt=False,
        )
        for payload in (failed, ok):
            proc = run_hook(json.dumps(payload).encode(), env, cwd=project)
            assert proc.returncode == 0, proc.stderr[-2000:]
    transcript.write_text("".join(json.dumps({**m, "timestamp": "2026-01-01T00:00:00Z"}) + "\n" for m in messages))
    end = {
        "session_id": "e2e",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    assert run_hook(json.dumps(end).encode(), env, cwd=project).returncode == 0
    sessions = project / ".claude" / "memory" / "sessions"
    l1_files = _wait_for(lambda: sorted(sessions.glob("*.l1.jsonl")) if sessions.is_dir() else [])
    assert l1_files, "memory-rotation wrote no L1 session file"
    assert "please run" in l1_files[0].read_text()
    import sqlite3

    with contextlib.closing(sqlite3.connect(home / "omcm.db")) as db:  # 3.13 warns of an unclosed one
        assert db.execute("SELECT count(*) FROM observer_events").fetchone()[0] >= 2 * len(ISSUE_24_SHAPES)
        assert db.execute("SELECT count(*) FROM team_outbox").fetchone()[0] >= len(ISSUE_24_SHAPES)
    searches = [
        subprocess.run(
            [sys.executable, "-m", "omcm_core", "search", *args],
            capture_output=True,
            env=env,
            cwd=project,
            timeout=120,
        )
        for args in (["--json", "--limit", "200"], ["run", "--limit", "200"], ["login", "--json"], ["--stop-server"])
    ]
    assert all(s.returncode == 0 for s in searches) and b"REDACTED" in searches[0].stdout
    printed = b"".join(s.stdout + s.stderr for s in searches)
    leaks = {s.name for s in ISSUE_24_SHAPES if s.needle.encode() in printed}
    assert leaks == set(), f"omcm search printed {leaks}"
    assert _leaks(home, ISSUE_24_SHAPES) == {}
    assert _leaks(project, ISSUE_24_SHAPES) == {}
