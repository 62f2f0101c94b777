"""atomic_write_bytes: readers see the old file or the new one, owner-only, nothing left beside it."""

import os
import stat
import threading

import pytest

from omcm_core import files


def test_a_new_file_is_written_owner_only_and_nothing_else_is_left(tmp_path):
    target = tmp_path / "state.json"
    files.atomic_write_bytes(target, b'{"a": 1}')
    assert target.read_bytes() == b'{"a": 1}'
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_replaced_file_keeps_the_mode_asked_for(tmp_path):
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    target.chmod(0o644)
    files.atomic_write_bytes(target, b"new", mode=0o600, durable=False)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_bytes(b"old")

    def broken(fd, data, durable, mode=None):
        os.close(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "_fill", broken)
    with pytest.raises(OSError):
        files.atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_temporary_names_never_reuse_an_existing_file_or_follow_a_link(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep")
    draws = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    # The first name drawn is taken by a planted link: it is neither followed nor replaced.
    planted = tmp_path / f".state.json.{'00' * 6}.tmp"
    planted.symlink_to(outside)
    fd, name = files.temporary_beside(target)
    os.close(fd)
    assert name == str(tmp_path / f".state.json.{'01' * 6}.tmp")
    assert stat.S_IMODE(os.stat(name).st_mode) == 0o600
    assert outside.read_bytes() == b"keep" and planted.is_symlink()


def test_concurrent_writers_leave_one_whole_version(tmp_path):
    target = tmp_path / "state.json"
    versions = [bytes([65 + i]) * 50_000 for i in range(8)]
    threads = [
        threading.Thread(target=files.atomic_write_bytes, args=(target, v), kwargs={"durable": False}) for v in versions
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_bytes() in versions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
