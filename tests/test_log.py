"""The log facade: one sink per configuration, even when threads write their first line at once."""

from __future__ import annotations

import json
import os
import threading
import time

from omcm_core import log


def test_threads_writing_the_first_line_at_once_share_one_sink(tmp_path, monkeypatch):
    opened = []
    real_open = log._open_sink

    def slow_open():
        opened.append(threading.current_thread().name)
        time.sleep(0.05)  # widen the window in which a second thread could open its own
        return real_open()

    monkeypatch.setattr(log, "_open_sink", slow_open)
    log.configure(tmp_path / "home", "info")
    start = threading.Barrier(8)

    def first_line(n: int) -> None:
        start.wait()
        log.get_logger(plugin="t").info("hello", n=n)

    threads = [threading.Thread(target=first_line, args=(n,)) for n in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(opened) == 1  # a second sink would be dropped unclosed (a ResourceWarning in tests)
        lines = (tmp_path / "home" / "logs" / "omcm.jsonl").read_text().splitlines()
        assert sorted(json.loads(line)["n"] for line in lines) == list(range(8))
    finally:
        log.configure(None)


def test_the_log_is_rotated_at_its_cap_and_keeps_a_bounded_number_of_files(tmp_path, monkeypatch):
    """Issue 24 item 3: a hostile config once added 13-27 MB per call to a log that was never rotated."""
    monkeypatch.setenv("OMCM_LOG_MAX_MB", str(20_000 / 1024 / 1024))  # 20 KB
    home = tmp_path / "home"
    logger = log.get_logger(component="t")
    try:
        for call in range(60):  # 60 hook calls of a long-lived process, 10 lines of ~200 bytes each
            log.configure(home, "info")
            for n in range(10):
                logger.info("line", call=call, n=n, text="x" * 150)
    finally:
        log.configure(None)
    folder = home / "logs"
    files = sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock"))
    assert files == ["omcm.jsonl"] + [f"omcm.jsonl.{n}" for n in range(1, log.KEEP + 1)]
    sizes = [(folder / name).stat().st_size for name in files]
    assert all(size <= 20_000 + 2_000 * 10 for size in sizes), sizes  # the cap plus at most one call's lines
    newest = [json.loads(line) for line in (folder / "omcm.jsonl").read_text().splitlines()]
    assert newest[-1]["call"] == 59 and newest[-1]["n"] == 9  # nothing lost at the end
    assert all((folder / name).stat().st_mode & 0o777 == 0o600 for name in files)


def test_a_line_waits_for_another_process_s_line_being_written_and_follows_it_whole(tmp_path, monkeypatch):
    # Seen in CI (64 dispatchers at once): a process opening the log read its last byte while another
    # process's line of several pages was half copied (the size grows a page at a time), took the file
    # for torn and began with a newline: an empty line. Writers now take an flock for each line and read
    # the end under it. The other writer here holds the lock with half its line written.
    import fcntl

    monkeypatch.setattr(log, "LOCK_WAIT_S", 60.0)  # the bound has its own test; here the line must wait
    path = tmp_path / "home" / "logs" / "omcm.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"event": "whole"}) + "\n")
    other = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(other, fcntl.LOCK_EX)
    os.write(other, b'{"event": "long", "pad": "')
    try:
        log.configure(tmp_path / "home", "info")
        writer = threading.Thread(target=lambda: log.get_logger().info("short"))
        writer.start()
        writer.join(0.3)  # not a timing check: only room for a wrong write to happen before the line ends
        os.write(other, b'xxx"}\n')
        fcntl.flock(other, fcntl.LOCK_UN)
        writer.join(60)
    finally:
        os.close(other)
        log.configure(None)
    lines = path.read_text().split("\n")
    assert lines[-1] == ""
    assert [json.loads(line)["event"] for line in lines[:-1]] == ["whole", "long", "short"]


def test_a_line_after_a_torn_one_starts_on_its_own_line(tmp_path):
    # What a writer killed mid-line, or a full disk, leaves: the next line must not run on from it.
    path = tmp_path / "home" / "logs" / "omcm.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"event": "whole"}) + "\n" + '{"event": "tor')
    try:
        log.configure(tmp_path / "home", "info")
        log.get_logger().info("after")
        log.get_logger().info("again")
    finally:
        log.configure(None)
    lines = path.read_text().splitlines()
    assert lines[1] == '{"event": "tor'
    assert [json.loads(line)["event"] for line in (lines[0], *lines[2:])] == ["whole", "after", "again"]


def test_a_writer_holding_the_lock_forever_does_not_stop_the_log(tmp_path):
    # A process stopped (Ctrl-Z, SIGSTOP) between its lock and its unlock: other writers wait a bounded time.
    import fcntl

    path = tmp_path / "home" / "logs" / "omcm.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"event": "whole"}) + "\n")
    stuck = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(stuck, fcntl.LOCK_EX)
    try:
        log.configure(tmp_path / "home", "info")
        writer = threading.Thread(target=lambda: log.get_logger().info("still logged"), daemon=True)
        writer.start()
        writer.join(60)
        assert not writer.is_alive()
    finally:
        os.close(stuck)
        log.configure(None)
    assert [json.loads(line)["event"] for line in path.read_text().splitlines()] == ["whole", "still logged"]
