"""The lifetime policy on its own: which sessions are live, and when the dispatcher may go."""

import subprocess
import sys

from omcm_core._runtime.sessions import MAX_SESSIONS, Policy, Sessions, field, owner_of, process

POLICY = Policy(idle_s=300, session_idle_s=3600, linger_s=30)


def test_no_session_known_means_the_plain_idle_limit():
    books = Sessions(POLICY)
    assert not books.should_exit(now=299, last_activity=0)
    assert books.should_exit(now=301, last_activity=0)


def test_a_live_session_keeps_it_until_its_session_end_then_the_linger_applies():
    books = Sessions(POLICY)
    books.seen("a", "SessionStart", None, now=0)
    books.seen("b", "PreToolUse", None, now=5)
    assert not books.should_exit(now=3000, last_activity=5)
    books.seen("a", "SessionEnd", None, now=3000)
    assert not books.should_exit(now=3100, last_activity=3000)  # b is still live
    books.seen("b", "SessionEnd", None, now=3100)
    assert not books.should_exit(now=3129, last_activity=3100)
    assert books.should_exit(now=3131, last_activity=3100)


def test_a_session_idle_past_its_bound_is_forgotten():
    books = Sessions(POLICY)
    books.seen("a", "PreToolUse", None, now=0)
    assert books.prune(now=3599) == []
    books.seen("a", "PostToolUse", None, now=3000)  # a call renews it
    assert books.prune(now=6599) == []
    assert books.prune(now=6601) == [("a", "idle")]
    assert not books.should_exit(now=6620, last_activity=3000)  # the linger counts from then
    assert books.should_exit(now=6632, last_activity=3000)


def test_a_session_whose_client_is_gone_is_forgotten_at_once():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    owner = process(dead.pid)
    dead.wait()
    assert owner is not None and process(dead.pid) is None
    books = Sessions(POLICY)
    books.seen("a", "PreToolUse", owner, now=0)
    books.seen("b", "PreToolUse", None, now=0)
    assert books.prune(now=1) == [("a", "client_gone")]
    assert list(books.live) == ["b"]


def test_a_reused_pid_is_not_the_same_client(tmp_path):
    # A fake /proc: the same pid with another start time is another process.
    (tmp_path / "42").mkdir()
    stat = tmp_path / "42" / "stat"
    stat.write_text("42 (claude) S 7 " + " ".join(["0"] * 17) + " 1000 0 0\n")
    owner = process(42, str(tmp_path))
    assert owner is not None and (owner.name, owner.parent, owner.start) == ("claude", 7, 1000)
    stat.write_text("42 (claude) S 7 " + " ".join(["0"] * 17) + " 2000 0 0\n")
    books = Sessions(POLICY, proc=str(tmp_path))
    books.seen("a", "PreToolUse", owner, now=0)
    assert books.prune(now=1) == [("a", "client_gone")]


def test_owner_walks_past_shells_and_stops_at_init(tmp_path):
    def proc(pid, name, parent):
        (tmp_path / str(pid)).mkdir()
        fields = " ".join(["0"] * 17)
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({name}) S {parent} {fields} {pid * 10} 0 0\n")

    proc(100, "claude", 1)
    proc(101, "sh", 100)
    proc(102, "bash", 101)
    proc(103, "python3", 102)
    proc(200, "sh", 1)
    proc(201, "python3", 200)
    assert owner_of(103, str(tmp_path)).pid == 100
    assert owner_of(201, str(tmp_path)) is None  # orphaned hook: nothing to watch
    assert owner_of(999, str(tmp_path)) is None


def test_session_id_and_event_come_from_the_payload_not_from_tool_data():
    raw = b'{"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_input": {"command": "echo \\"session_id\\": \\"x\\""}}'
    assert field(raw, b"session_id") == "s-1"
    assert field(raw, b"hook_event_name") == "PreToolUse"
    assert field(b'{"tool_input": {"command": "echo \\"session_id\\": \\"x\\""}}', b"session_id") is None
    assert field(b"not json", b"session_id") is None


def test_the_table_of_sessions_is_bounded():
    books = Sessions(POLICY)
    for n in range(MAX_SESSIONS + 10):
        books.seen(f"s{n}", "PreToolUse", None, now=n)
    assert len(books.live) == MAX_SESSIONS
    assert "s0" not in books.live and f"s{MAX_SESSIONS + 9}" in books.live


def test_no_linger_means_leaving_as_soon_as_the_last_session_is_forgotten():
    books = Sessions(Policy(idle_s=300, session_idle_s=1, linger_s=0))
    books.seen("a", "PreToolUse", None, now=0)
    assert books.prune(now=1.2) == [("a", "idle")]
    assert books.should_exit(now=1.2, last_activity=0)
