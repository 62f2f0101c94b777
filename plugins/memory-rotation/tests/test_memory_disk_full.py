"""Rotation on a full disk: no half-written archive, memory.md left whole.

The disk is "full" through a file-size limit (``RLIMIT_FSIZE``) on the
``omcm memory rotate`` process, which any OS user may set: a write past the
limit fails with EFBIG (SIGXFSZ is ignored so the process is not killed).
"""

import json
import os
import resource
import signal
import subprocess
import sys

import pytest

LIMIT = 1_000_000


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE is POSIX")
def test_rotation_past_the_file_size_limit_leaves_no_archive_and_memory_unchanged(tmp_path):
    project = tmp_path / "project"
    folder = project / ".claude" / "memory"
    folder.mkdir(parents=True)
    original = "".join(f"entry {i} " + "f" * 90 + "\n" for i in range(15_000)).encode()  # ~1.5 MB
    assert len(original) > LIMIT
    (folder / "memory.md").write_bytes(original)
    # An earlier archive in the index, so this is a rotation, not a first legacy split.
    (folder / "memory-index.json").write_text(
        json.dumps(
            {
                "version": 1,
                "rotatedFiles": [{"file": "memory_20200101_000000.md", "summaryGenerated": True}],
                "stats": {},
            }
        )
    )
    (folder / "memory_20200101_000000.md").write_text("older\n")
    env = {
        **os.environ,
        "OMCM_LOAD_PLUGINS": "memory-rotation",
        "OMCM_HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
    }

    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "memory", "rotate"],
        env=env,
        capture_output=True,
        timeout=120,
        preexec_fn=_limit_file_size,
    )

    assert proc.returncode == 0, proc.stderr[-2000:]
    assert b"[MEMORY_KEEPER_ROTATE]" not in proc.stdout
    assert sorted(p.name for p in folder.glob("memory_*.md")) == ["memory_20200101_000000.md"], (
        "a partial archive was left"
    )
    assert (folder / "memory.md").read_bytes() == original
    assert [p.name for p in folder.rglob("*.tmp")] == []
    assert "rotation failed" in (folder / "logs" / "rotation-error.log").read_text()  # logged, not hidden
