"""The incremental transcript reader: one test per entry shape and per hostile file."""

import contextlib
import json
import os

import pytest

from omcm_core import transcript_tail
from omcm_core._runtime import transcript_reading
from omcm_core.records import PostToolEvent, StopEvent
from omcm_core.store import Store

OLD = "2026-01-02T03:04:05.678Z"  # far older than the grace period


def use(tool_id, name="Edit", **tool_input):
    return {
        "type": "assistant",
        "sessionId": "s1",
        "cwd": "/p",
        "timestamp": OLD,
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
        },
    }


def result(tool_id, content, is_error=False, timestamp=OLD):
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return {
        "type": "user",
        "sessionId": "s1",
        "cwd": "/p",
        "timestamp": timestamp,
        "message": {"role": "user", "content": [block]},
    }


def lines(*entries):
    return b"".join(json.dumps(e).encode() + b"\n" for e in entries)


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "home")
    yield store
    store.close()


def read(store, path, consumer="guide", settled=False, now=None):
    return transcript_tail.unreported_calls(store, consumer, [str(path)], settled=settled, now=now)


def test_a_failed_call_is_paired_with_its_input_and_masked(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        lines(
            use("t1", file_path="/p/a.py", old_string="x", new_string="AKIAIOSFODNN7EXAMPLE"),
            result(
                "t1",
                "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
                True,
            ),
        )
    )
    (call,) = read(store, path)
    assert (call.tool_use_id, call.tool_name, call.is_error, call.session_id, call.cwd) == (
        "t1",
        "Edit",
        True,
        "s1",
        "/p",
    )
    assert call.tool_input["file_path"] == "/p/a.py" and "AKIA" not in json.dumps(call.tool_input)
    assert "File has not been read yet" in call.result
    event = call.as_event()
    assert isinstance(event, PostToolEvent) and event.hook_event_name == "PostToolUseFailure"
    assert not event.succeeded and event.error == call.result and event.tool_use_id == "t1"


@pytest.mark.parametrize(
    "content, expected",
    [
        ("plain text", "plain text"),
        (
            [{"type": "text", "text": "one"}, {"type": "image", "source": {}}, {"type": "text", "text": "two"}],
            "one\ntwo",
        ),
        (None, ""),
    ],
)
def test_result_content_shapes(store, tmp_path, content, expected):
    path = tmp_path / "t.jsonl"
    path.write_bytes(lines(use("t1", name="Bash", command="ls"), result("t1", content)))
    (call,) = read(store, path)
    assert call.result == expected and not call.is_error and call.as_event().succeeded


def test_a_result_without_its_use_and_other_entries_are_ignored(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        lines(
            {"type": "summary", "summary": "x"},
            {"type": "progress", "data": {}},
            result("nobody", "x", True),
            {"type": "user", "message": {"content": "a prompt"}},
            [1, 2],
            "text",
        )
    )
    assert read(store, path) == []


def test_only_appended_bytes_are_read_and_a_partial_line_waits(store, tmp_path):
    path = tmp_path / "t.jsonl"
    first = lines(use("t1", file_path="/p/a.py"))
    second = lines(result("t1", "boom", True))
    path.write_bytes(first + second[:20])  # Claude Code is halfway through writing the result
    assert read(store, path) == []
    ((offset,),) = store.query("SELECT offset FROM transcript_files")
    assert offset == len(first)
    with open(path, "ab") as fh:
        fh.write(second[20:])
    assert [c.tool_use_id for c in read(store, path)] == ["t1"]
    assert read(store, path) == []  # handed out once


def test_each_consumer_gets_each_call_once_and_hook_reported_calls_never(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(lines(use("t1"), result("t1", "bad", True), use("t2"), result("t2", "fine")))
    transcript_tail.note_reported(store, "t2")  # its PostToolUse hook fired
    assert [c.tool_use_id for c in read(store, path, "guide")] == ["t1"]
    assert [c.tool_use_id for c in read(store, path, "observer")] == ["t1"]
    assert read(store, path, "guide") == [] and read(store, path, "observer") == []


def test_fresh_results_wait_for_their_hook_unless_settled(store, tmp_path):
    path = tmp_path / "t.jsonl"
    now = transcript_reading._timestamp("2026-03-01T10:00:00.000Z", 0)
    path.write_bytes(lines(use("t1"), result("t1", "bad", True, timestamp="2026-03-01T09:59:59.500Z")))
    assert read(store, path, now=now) == []
    assert [c.tool_use_id for c in read(store, path, now=now, settled=True)] == ["t1"]


def test_a_truncated_or_replaced_transcript_is_read_again_without_duplicates(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(lines(use("t1"), result("t1", "bad", True)))
    assert len(read(store, path)) == 1
    path.write_bytes(lines(use("t2"), result("t2", "worse", True)))  # shorter: truncated and rewritten
    assert [c.tool_use_id for c in read(store, path)] == ["t2"]
    replaced = tmp_path / "new.jsonl"
    replaced.write_bytes(lines(use("t1"), result("t1", "bad", True), use("t3"), result("t3", "x", True), use("t4")))
    os.replace(replaced, path)  # another inode, longer than before
    assert [c.tool_use_id for c in read(store, path)] == ["t3"]


def test_a_huge_line_is_skipped_without_holding_it(store, tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    huge = b'{"type": "user", "x": "' + b"A" * (3 * transcript_reading.MAX_READ) + b'"}\n'
    path.write_bytes(lines(use("t1")) + huge + lines(result("t1", "bad", True)))
    reads = []
    real_pread = os.pread
    monkeypatch.setattr(transcript_reading.os, "pread", lambda fd, n, off: reads.append(n) or real_pread(fd, n, off))
    found = []
    for _ in range(6):
        found += read(store, path)
    assert [c.tool_use_id for c in found] == ["t1"]
    assert max(reads) <= transcript_reading.MAX_READ


def test_binary_garbage_is_skipped(store, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"\x00\xff\xfe garbage\n{not json}\n"
        + lines(use("t1"))
        + b"\x89PNG\r\n\x1a\n"
        + lines(result("t1", "bad", True))
    )
    assert [c.tool_use_id for c in read(store, path)] == ["t1"]


def test_a_2_gb_sparse_transcript_costs_one_bounded_read(store, tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    with open(path, "wb") as fh:
        fh.truncate(2 << 30)
    with open(path, "ab") as fh:
        fh.write(b"\n" + lines(use("t1"), result("t1", "bad", True)))
    reads = []
    real_pread = os.pread
    monkeypatch.setattr(
        transcript_reading.os, "pread", lambda fd, n, off: reads.append((n, off)) or real_pread(fd, n, off)
    )
    calls = []
    for _ in range(10):
        calls += read(store, path)
    # Only the last window is ever read: a file first seen large starts near its end.
    chunks = [(n, off) for n, off in reads if n > 64]  # 64-byte reads check the file was not rewritten
    assert sum(n for n, _ in chunks) <= transcript_reading.FIRST_WINDOW + 64
    assert all(off >= (2 << 30) - transcript_reading.FIRST_WINDOW for _, off in chunks)
    assert [c.tool_use_id for c in calls] == ["t1"]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "missing", "directory"])
def test_what_is_not_a_regular_file_is_not_read(store, tmp_path, kind):
    path = tmp_path / "t.jsonl"
    target = tmp_path / "real.jsonl"
    target.write_bytes(lines(use("t1"), result("t1", "bad", True)))
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading must not hang the hook
    elif kind == "symlink":
        path.symlink_to(target)
    elif kind == "directory":
        path.mkdir()
    assert read(store, path) == []


def test_subagent_transcripts_are_read_when_settled(store, tmp_path):
    main = tmp_path / "s1.jsonl"
    main.write_bytes(lines(use("m1"), result("m1", "main failed", True)))
    sub = tmp_path / "s1" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-a1.jsonl").write_bytes(lines(use("a1", name="Write"), result("a1", "ENOTDIR", True)))
    event = StopEvent(hook_event_name="Stop", session_id="s1", transcript_path=str(main))
    assert transcript_tail.transcripts_of(event, settled=False) == [str(main)]
    paths = transcript_tail.transcripts_of(event, settled=True)
    calls = transcript_tail.unreported_calls(store, "guide", paths, settled=True)
    assert sorted(c.tool_use_id for c in calls) == ["a1", "m1"]
    agent = StopEvent(
        hook_event_name="SubagentStop",
        session_id="s1",
        transcript_path=str(main),
        agent_transcript_path=str(sub / "agent-a1.jsonl"),
    )
    assert str(sub / "agent-a1.jsonl") in transcript_tail.transcripts_of(agent, settled=False)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-02-10T21:55:11.345Z", 1770760511.0),
        ("1970-01-01T00:00:00Z", 0.0),
        ("2024-02-29T12:00:00Z", 1709208000.0),
        ("not a time", -1.0),
        (12, -1.0),
        ("2026-13-10T21:55:11Z", -1.0),
    ],
)
def test_timestamps(text, expected):
    assert transcript_reading._timestamp(text, -1.0) == expected


def test_a_partial_line_whose_rest_arrives_later_is_read_whole(store, tmp_path):
    """Issue 30 item 7: half a line alone, read; then its rest (and half the next), read; then the rest."""
    path = tmp_path / "t.jsonl"
    first = lines(use("t1", name="Bash", command="make"))
    second = lines(result("t1", "make: *** [all] Error 2", True))
    path.write_bytes(first[:25])
    assert read(store, path) == []
    ((offset,),) = store.query("SELECT offset FROM transcript_files")
    assert offset == 0  # nothing consumed: the half line waits
    with open(path, "ab") as fh:
        fh.write(first[25:] + second[:30])
    assert read(store, path) == []  # the use is stored, its result not yet whole
    with open(path, "ab") as fh:
        fh.write(second[30:])
    (call,) = read(store, path)
    assert (call.tool_use_id, call.tool_input, call.is_error) == ("t1", {"command": "make"}, True)


def test_the_stored_mark_is_a_hash_not_transcript_bytes(store, tmp_path):
    """Issue 24 item 6: the rewrite check kept the transcript's last 64 bytes, a token in clear."""
    path = tmp_path / "t.jsonl"
    token = "gh" + "p_" + "Z9y8X7w6V5u4T3s2R1q0" * 2
    path.write_bytes(lines(use("t1", name="Bash", command="ls"), {"type": "user", "note": token}))
    read(store, path)
    ((mark,),) = store.query("SELECT mark FROM transcript_files")
    tail = path.read_bytes()[-64:]
    assert not any(tail[i : i + 8] in bytes(mark) for i in range(len(tail) - 8))
    assert token.encode()[:12] not in bytes(mark)


def test_an_old_raw_mark_is_hashed_and_the_file_read_on_from_its_offset(tmp_path):
    """A store written before the hash: the migration hashes the raw mark; reading goes on where it was."""
    import sqlite3

    home = tmp_path / "home"
    path = tmp_path / "t.jsonl"
    first = lines(use("t1", name="Bash", command="ls"))
    path.write_bytes(first)
    old = Store(home)
    try:
        old.migrate(transcript_tail.SCHEMA, transcript_tail.MIGRATIONS[:1])  # version 1, as before
        with old.transaction() as conn:
            conn.execute(
                "INSERT INTO transcript_files(path, dev, ino, mark, offset, skipping, updated) VALUES(?, ?, ?, ?, ?, 0, 0)",
                (str(path), path.stat().st_dev, path.stat().st_ino, first[-64:], len(first)),
            )
    finally:
        old.close()
    with open(path, "ab") as fh:
        fh.write(lines(result("t1", "boom", True)))
    new = Store(home)
    try:
        # t1's use was in the part read before (under version 1): only its result is new, so nothing pairs.
        assert read(new, path) == []
        ((mark, offset),) = new.query("SELECT mark, offset FROM transcript_files")
        assert first[-64:] not in bytes(mark) and offset == path.stat().st_size
    finally:
        new.close()
    with contextlib.closing(sqlite3.connect(home / "omcm.db")) as db:  # 3.13 warns of an unclosed one
        assert first[-40:] not in b"".join(bytes(m or b"") for (m,) in db.execute("SELECT mark FROM transcript_files"))
