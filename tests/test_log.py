"""The log facade: one sink per configuration, even when threads write their first line at once."""

from __future__ import annotations

import json
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
