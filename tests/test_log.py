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
