"""memory-rotation in process: tokens, tails, rotation, legacy split, index repair, summaries, session start."""

import json
import os

import pytest
from omcm_memory_rotation import index, layout, legacy, loader, summary
from omcm_memory_rotation.rotation import check_and_rotate
from omcm_memory_rotation.settings import Settings

from omcm_core.log import get_logger

LOG = get_logger(plugin="memory-rotation")
SETTINGS = Settings()


def folder_with(tmp_path, text):
    folder = layout.memory_dir(tmp_path)
    index.ensure_structure(folder)
    (folder / "memory.md").write_text(text, encoding="utf-8")
    return folder


def test_token_estimates():
    assert layout.estimate_tokens("Hello World") == 3
    assert layout.estimate_tokens("한" * 10) == 8  # 30 bytes
    assert SETTINGS.threshold_tokens == 23_750 and SETTINGS.carryover_tokens == 2_375


def test_tail_by_tokens_keeps_whole_lines_within_budget():
    content = "".join(f"line {i:04d} " + "x" * 30 + "\n" for i in range(1000))
    tail = layout.tail_by_tokens(content, 2500)
    assert layout.estimate_tokens(tail) <= 2500
    assert tail.endswith("line 0999 " + "x" * 30 + "\n") and tail.startswith("line ")
    assert tail.count("\n") == 2500 // 11  # 41-byte lines cost 11 tokens each


def test_structure_is_created_with_an_empty_index(tmp_path):
    folder = layout.memory_dir(tmp_path)
    index.ensure_structure(folder)
    assert (folder / "sessions").is_dir() and (folder / "logs").is_dir()
    assert json.loads((folder / "memory-index.json").read_text())["rotatedFiles"] == []
    assert not (folder / "memory.md").exists()


@pytest.mark.parametrize("size,rotates", [(0, False), (23_749 * 4, False), (23_750 * 4, True)])
def test_threshold_edges(tmp_path, size, rotates):
    folder = folder_with(tmp_path, ("a" * 99 + "\n") * (size // 100) + "b" * (size % 100))
    assert layout.tokens_of_file(folder / "memory.md") == size // 4
    assert (check_and_rotate(folder, SETTINGS, LOG) is not None) is rotates


def test_rotation_archives_everything_and_keeps_the_tail(tmp_path):
    original = "".join(f"## note {i}\n" for i in range(12_000))
    folder = folder_with(tmp_path, original)
    archive = check_and_rotate(folder, SETTINGS, LOG)
    assert archive.startswith("memory_") and archive.endswith(".md")
    assert (folder / archive).read_text() == original
    carry = (folder / "memory.md").read_text()
    assert original.endswith(carry) and layout.estimate_tokens(carry) <= 2375 and carry.endswith("## note 11999\n")
    entry = json.loads((folder / "memory-index.json").read_text())["rotatedFiles"][0]
    assert (
        entry["file"] == archive
        and entry["summaryGenerated"] is False
        and entry["summary"] == archive[:-3] + ".summary.json"
    )


def test_korean_only_memory(tmp_path):
    text = "오늘은 회의에서 배포 일정을 결정했다.\n" * 5000  # 3-byte characters
    folder = folder_with(tmp_path, text)
    assert layout.tokens_of_file(folder / "memory.md") == layout.estimate_tokens(text) > 23_750
    archive = check_and_rotate(folder, SETTINGS, LOG)
    assert (folder / archive).read_text() == text
    assert text.endswith((folder / "memory.md").read_text())


def test_archives_never_overwrite(tmp_path):
    folder = folder_with(tmp_path, "x\n")
    assert layout.archive_name(folder, "20260101_000000") == "memory_20260101_000000.md"
    (folder / "memory_20260101_000000.md").write_text("old")
    assert layout.archive_name(folder, "20260101_000000") == "memory_20260101_000000_2.md"


def test_corrupt_index_is_rebuilt_from_the_archives(tmp_path):
    folder = folder_with(tmp_path, "x\n")
    (folder / "memory_20260101_101010.md").write_text("## 2026-01-01\nold\n")
    (folder / "memory_20260101_101010.summary.json").write_text("{}")
    (folder / "memory_20260202_101010.md").write_text("## 2026-02-02\nnewer\n")
    (folder / "memory-index.json").write_text("{ this is not json")
    data = index.read(folder, LOG)
    assert [(e["file"], e["summaryGenerated"]) for e in data["rotatedFiles"]] == [
        ("memory_20260101_101010.md", True),
        ("memory_20260202_101010.md", False),
    ]
    assert data["rotatedFiles"][1]["dateRange"] == {"first": "2026-02-02", "last": "2026-02-02"}
    assert any(p.name.startswith("memory-index.json.corrupt-") for p in folder.iterdir())


def test_legacy_split_by_date_headers_keeps_every_line(tmp_path):
    days = [
        f"## 2026-01-{d:02d}\n" + "".join(f"- work item {d}.{i} " + "y" * 60 + "\n" for i in range(400))
        for d in range(1, 11)
    ]
    original = "".join(days)
    folder = folder_with(tmp_path, original)
    archives = legacy.migrate(folder, SETTINGS, LOG)
    assert len(archives) >= 3
    assert all(a.endswith("_235959.md") for a in archives)
    joined = "".join((folder / a).read_text() for a in archives)
    assert sorted(joined.splitlines()) == sorted(original.splitlines())
    assert all(layout.tokens_of_file(folder / a) <= SETTINGS.threshold_tokens for a in archives)
    assert original.endswith((folder / "memory.md").read_text())


def test_legacy_without_headers_is_one_archive_and_huge_sections_are_split(tmp_path):
    folder = folder_with(tmp_path, "plain line of text\n" * 6000)
    assert len(legacy.migrate(folder, SETTINGS, LOG)) == 1
    section = {"date": "2026-01-01", "lines": ["z" * 400] * 1000}
    parts = legacy.force_split(section, SETTINGS.threshold_tokens)
    assert len(parts) == 5 and sum(len(p["lines"]) for p in parts) == 1000


def test_summary_validation_and_index_update(tmp_path):
    folder = folder_with(tmp_path, "x\n")
    (folder / "memory_20260101_000000.md").write_text("## 2026-01-01\nx\n")
    index.reconcile(folder, LOG)
    good = {
        "themes": [{"name": "t", "summary": "s"}],
        "keyDecisions": [],
        "issues": [{"issue": "i", "status": "open"}],
        "overallSummary": "all",
    }
    with pytest.raises(summary.SummaryError, match="overallSummary"):
        summary.save(folder, "memory_20260101_000000.md", json.dumps({**good, "overallSummary": ""}), LOG)
    assert "overallSummary" in (folder / "logs" / "summary-error.log").read_text()
    assert (folder / "memory_20260101_000000.summary.raw.txt").exists()
    with pytest.raises(summary.SummaryError):
        summary.save(folder, "memory_20260101_000000.md", json.dumps({**good, "themes": [{"name": 1}]}), LOG)
    summary.save(folder, "memory_20260101_000000.md", json.dumps(good), LOG)
    assert index.pending(index.read(folder, LOG)) == []


def test_session_start_context_order_and_cap(tmp_path):
    folder = folder_with(tmp_path, "".join(f"memory line {i}\n" for i in range(80)))
    (folder / "memory_20260101_000000.md").write_text("## 2026-01-01\nold\n")
    (folder / "memory_20260101_000000.summary.json").write_text(json.dumps({"overallSummary": "We built the API."}))
    (folder / "memory_20260202_000000.md").write_text("## 2026-02-02\nold\n")
    index.reconcile(folder, LOG)
    (folder / "sessions" / "2026-02-03_1000_s.l1.jsonl").write_text(
        json.dumps(
            {
                "role": "assistant",
                "content": "At the end I switched the cache to Redis and documented the keys in README.",
            }
        )
        + "\n"
    )
    text = loader.context(folder, LOG)
    order = [
        text.index(h)
        for h in ("Previous session's end", "Earlier memory summary", "Recent memory", "[MEMORY_KEEPER] 1 summaries")
    ]
    assert order == sorted(order)
    assert "memory line 79" in text and "memory line 29" not in text  # the last 50 lines
    assert "[MEMORY_KEEPER_ROTATE] file=memory_20260202_000000.md" in text
    assert len(loader.cap("z" * 20_000)) <= loader.MAX_CHARS


def test_the_last_l1_is_read_from_its_end_and_never_through_a_link(tmp_path):
    folder = folder_with(tmp_path, "")
    said = "I moved the sessions table to SQLite and kept the JSON export for old clients."
    filler = json.dumps({"role": "assistant", "content": "short", "pad": "x" * 200}) + "\n"
    body = filler * (2 * loader.L1_TAIL_BYTES // len(filler)) + json.dumps({"role": "assistant", "content": said})
    l1 = folder / "sessions" / "2026-02-03_1000_s.l1.jsonl"
    l1.write_text(body + "\n")  # 8 MB: the end is past a read of the first 4 MB
    assert loader.unreflected_l1(folder, "") == [said[:200]]
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({"role": "assistant", "content": "a secret line from outside the project " * 3}))
    l1.unlink()
    os.link(outside, l1)
    assert loader.unreflected_l1(folder, "") == []  # a hard link may name any file of the user's
    l1.unlink()
    l1.symlink_to(outside)
    assert loader.unreflected_l1(folder, "") == []
