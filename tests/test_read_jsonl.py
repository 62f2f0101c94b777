"""omcm_core.transcripts.read_jsonl: the one JSONL reader (transcripts, the log tail in doctor, memory-rotation's L1)."""

import json

import pytest

from omcm_core._cli.doctor import recent_errors
from omcm_core.transcripts import read_jsonl, transcript_entries


def test_objects_in_order_damaged_and_other_lines_skipped(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{not json\n[1, 2]\n\n"text"\n{"b": "\xff"}\r\n{"c": 3}')
    assert list(read_jsonl(path)) == [{"a": 1}, {"b": "\ufffd"}, {"c": 3}]
    assert list(transcript_entries(path)) == [{"a": 1}, {"b": "\ufffd"}, {"c": 3}]


def test_max_bytes_reads_the_tail_less_the_cut_line(tmp_path):
    path = tmp_path / "log.jsonl"
    lines = [json.dumps({"n": n, "pad": "x" * 20}) for n in range(100)]
    path.write_text("\n".join(lines) + "\n")
    three = (len(lines[-1]) + 1) * 3
    assert [e["n"] for e in read_jsonl(path, max_bytes=three)] == [97, 98, 99]
    assert [e["n"] for e in read_jsonl(path, max_bytes=three + 1)] == [97, 98, 99]
    assert [e["n"] for e in read_jsonl(path, max_bytes=three - 1)] == [98, 99]
    assert [e["n"] for e in read_jsonl(path, max_bytes=10**9)] == list(range(100))


def test_a_missing_file_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        list(read_jsonl(tmp_path / "absent.jsonl"))


def test_doctor_lists_the_newest_errors_first(tmp_path):
    log = tmp_path / "omcm.jsonl"
    rows = [{"level": "info", "event": "ok"}] + [{"level": "error", "event": f"e{n}"} for n in range(12)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{torn")
    assert [e["event"] for e in recent_errors(log, limit=3)] == ["e11", "e10", "e9"]
    assert recent_errors(tmp_path / "absent.jsonl") == []


def test_a_file_the_caller_opened_confined_is_read_the_same_way(tmp_path):
    import os

    from omcm_core.confined import open_confined

    path = tmp_path / "l1.jsonl"
    path.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(50)))
    with os.fdopen(open_confined(tmp_path, path), "rb") as fh:
        tail = list(read_jsonl(fh, max_bytes=30))
    assert tail == list(read_jsonl(path, max_bytes=30)) == [{"n": 47}, {"n": 48}, {"n": 49}]
