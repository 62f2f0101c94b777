"""The 16 MiB limit on memory.md, at the boundary itself (issue 38 item 6)."""

from __future__ import annotations

from omcm_memory_rotation import layout, rotation
from omcm_memory_rotation.settings import Settings

LIMIT = 16 * 1024 * 1024


class Log:
    def __init__(self):
        self.events = []

    def _note(self, event, **kw):
        self.events.append((event, kw))

    info = warning = error = debug = _note


def memory_of(tmp_path, size: int):
    folder = layout.memory_dir(tmp_path / "project")
    folder.mkdir(parents=True)
    line = b"- a remembered fact about the project, kept for the next session\n"
    body = line * (size // len(line))
    (folder / layout.MEMORY_FILE).write_bytes(body + b"x" * (size - len(body)))
    return folder


def archives(folder):
    return sorted(p for p in folder.iterdir() if p.name.startswith("memory_"))


def test_a_memory_md_of_exactly_16_mib_is_rotated(tmp_path):
    assert rotation.MAX_MEMORY_BYTES == LIMIT
    folder = memory_of(tmp_path, LIMIT)
    log = Log()
    archive = rotation.check_and_rotate(folder, Settings(threshold_tokens=1000, carryover_tokens=100), log)
    assert archive is not None, log.events
    assert [p.name for p in archives(folder)] == [archive]
    assert (folder / archive).stat().st_size == LIMIT
    assert (folder / layout.MEMORY_FILE).stat().st_size < 1000
    assert "memory_too_large" not in [e for e, _ in log.events]


def test_a_memory_md_one_byte_over_16_mib_is_refused_untouched(tmp_path):
    folder = memory_of(tmp_path, LIMIT + 1)
    log = Log()
    assert rotation.check_and_rotate(folder, Settings(threshold_tokens=1000, carryover_tokens=100), log) is None
    assert archives(folder) == []
    assert (folder / layout.MEMORY_FILE).stat().st_size == LIMIT + 1
    assert [kw["limit"] for e, kw in log.events if e == "memory_too_large"] == [LIMIT]
