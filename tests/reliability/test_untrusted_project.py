"""The project repository is untrusted: planted symlinks and FIFOs lead nowhere.

A cloned repository can hold ``.claude/memory/memory.md -> ~/.ssh/id_ed25519``,
a symlinked memory folder, archive, index, ``logs/`` or ``sessions/``. Through
the real ``omcm hook`` (memory-rotation installed) nothing is read from or
written outside the project, the key never reaches Claude, and the log names
the refused path. The ``omcm_core.confined`` helpers are also
checked directly, since third-party plugins use them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core import confined
from omcm_core.testing import post_tool_payload, run_hook, session_start_payload

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlinks and umask are POSIX")

KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"


@pytest.fixture
def world(tmp_path):
    pytest.importorskip("omcm_memory_rotation", reason="the planted files are memory-rotation's (tox cell core: alone)")
    """A project with .claude/memory, an OMCM_HOME, and an outside folder holding a 'private key'."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".claude" / "memory").mkdir(parents=True)
    outside.mkdir()
    (outside / "id_ed25519").write_text(KEY * 2000)  # well over the rotation threshold
    env = {
        "OMCM_LOAD_PLUGINS": "memory-rotation",
        # A check at every tool use, rotating at 950 tokens.
        "OMCM__MEMORY_ROTATION__SAVE_INTERVAL": "1",
        "OMCM__MEMORY_ROTATION__THRESHOLD_TOKENS": "1000",
        "OMCM__MEMORY_ROTATION__CARRYOVER_TOKENS": "100",
        "OMCM_HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    return {
        "project": project,
        "memory": project / ".claude" / "memory",
        "outside": outside,
        "env": env,
        "home": tmp_path / "home",
    }


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = (path.stat().st_mode, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def refusals(home: Path) -> list[dict]:
    log = home / "logs" / "omcm.jsonl"
    lines = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    return [x for x in lines if x.get("event") == "unsafe_path_refused"]


def drive(world) -> str:
    """Session start, three tool uses (each a rotation check) and a search; all stdout joined.

    Strict: a plugin refuses a planted file by logging it and answering nothing, not by raising.
    """
    out = []
    proc = run_hook(session_start_payload(session_id="s1", cwd=str(world["project"])), env=world["env"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    out.append(proc.stdout.decode())
    for _ in range(3):
        proc = run_hook(post_tool_payload("Read", {"file_path": "/a"}, {}, session_id="s1"), env=world["env"])
        assert proc.returncode == 0, proc.stderr[-2000:]
        out.append(proc.stdout.decode())
    search = subprocess.run(
        [sys.executable, "-m", "omcm_core", "memory", "search", "OPENSSH", "--deep"],
        env={**os.environ, **world["env"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "".join(out) + search.stdout


def assert_contained(world, before, text, planted: str) -> None:
    assert snapshot(world["outside"]) == before, "a file outside the project was written"
    assert KEY_BODY not in text, "the outside key reached Claude or the terminal"
    for path in world["project"].rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert KEY_BODY not in path.read_text(errors="replace"), f"the key was copied into {path}"
    assert any(planted in r["path"] for r in refusals(world["home"])), "no log line names the refused path"


def test_memory_md_symlinked_to_a_private_key(world):
    (world["memory"] / "memory.md").symlink_to(world["outside"] / "id_ed25519")
    before = snapshot(world["outside"])
    text = drive(world)
    assert_contained(world, before, text, "memory.md")
    assert (world["memory"] / "memory.md").is_symlink(), "the planted link was followed or replaced"


@pytest.mark.parametrize("planted", ["memory", "logs", "sessions"])
def test_symlinked_folders(world, planted):
    target = world["outside"] / planted
    target.mkdir()
    (target / "memory.md").write_text(KEY * 2000)
    link = world["memory"] if planted == "memory" else world["memory"] / planted
    if planted == "memory":
        world["memory"].rmdir()
    link.symlink_to(target, target_is_directory=True)
    before = snapshot(world["outside"])
    text = drive(world)
    transcript = world["project"] / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hello there"}}) + "\n")
    l1 = subprocess.run(
        [
            sys.executable,
            "-m",
            "omcm_core",
            "memory",
            f"--project={world['project']}",
            "write-l1",
            f"--transcript={transcript}",
            "--session=s1",
        ],
        env={**os.environ, **world["env"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert l1.returncode != 0 and "refused" in l1.stderr
    assert_contained(world, before, text, planted)


def test_symlinked_archive_and_index(world):
    outside_index = world["outside"] / "index.json"
    outside_index.write_text(json.dumps({"version": 1, "rotatedFiles": [], "stats": {}}))
    (world["memory"] / "memory_20260101_000000.md").symlink_to(world["outside"] / "id_ed25519")
    (world["memory"] / "memory-index.json").symlink_to(outside_index)
    (world["memory"] / "memory.md").write_text("## 2026-01-01\n" + "a safe note\n" * 600)
    before = snapshot(world["outside"])
    text = drive(world)
    assert_contained(world, before, text, "memory_20260101_000000.md")
    archives = [p for p in world["memory"].glob("memory_*.md") if not p.is_symlink()]
    assert archives, "the real memory.md should still rotate next to the refused links"


def test_memory_text_is_masked_before_it_reaches_claude(world):
    (world["memory"] / "memory.md").write_text("deploy with AKIAIOSFODNN7EXAMPLE and\n" + KEY)
    proc = run_hook(session_start_payload(session_id="s1", cwd=str(world["project"])), env=world["env"])
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "deploy with" in context
    assert "AKIAIOSFODNN7EXAMPLE" not in context and KEY_BODY not in context


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_files_created_in_the_project_follow_the_callers_umask(world, umask):
    (world["memory"] / "memory.md").write_text("x" * 8000)
    payload = json.dumps(post_tool_payload("Read", {"file_path": "/a"}, {}, session_id="s1")).encode()
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "hook"],
        input=payload,
        capture_output=True,
        timeout=60,
        env={**os.environ, "OMCM_DAEMON": "0", **world["env"]},
        preexec_fn=lambda: os.umask(umask),
    )
    assert b"MEMORY_KEEPER_ROTATE" in proc.stdout, proc.stderr[-2000:]
    made = [world["memory"] / "memory-index.json", world["memory"] / "memory.md", *world["memory"].glob("memory_*.md")]
    assert {oct(p.stat().st_mode & 0o777) for p in made} == {oct(0o666 & ~umask)}
    assert oct((world["memory"] / "sessions").stat().st_mode & 0o777) == oct(0o777 & ~umask)
    assert oct(world["home"].stat().st_mode & 0o777) == "0o700"  # OMCM_HOME stays owner-only


# --- the helper itself, as a third-party plugin would call it -----------------------------------


def test_helper_refuses_every_way_out(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_text("s3cret")
    (root / "link").symlink_to(outside / "secret")
    (root / "dirlink").symlink_to(outside, target_is_directory=True)
    os.mkfifo(root / "fifo")  # a blocking read would hang the hook
    for path in (
        "link",
        "dirlink/secret",
        "fifo",
        "../outside/secret",
        str(outside / "secret"),
        "sub/../../outside/secret",
    ):
        with pytest.raises(confined.UnsafePathError):
            confined.read_confined_bytes(root, path)
    for path in ("link", "dirlink/new", "dirlink/x/y"):
        with pytest.raises(confined.UnsafePathError):
            confined.write_confined_atomic(root, path, "x")
    with pytest.raises(confined.UnsafePathError):
        confined.ensure_confined_dir(root, "dirlink/deeper")
    with pytest.raises(confined.UnsafePathError):
        confined.append_confined(root, "link", "x")
    assert (outside / "secret").read_text() == "s3cret" and sorted(os.listdir(outside)) == ["secret"]


def test_helper_reads_writes_and_creates_inside(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    target = confined.write_confined_atomic(root, ".omc/state/mode.json", '{"on": true}')
    assert target == root / ".omc" / "state" / "mode.json"
    assert confined.read_confined_text(root, root / ".omc/state/mode.json") == '{"on": true}'
    confined.append_confined(root, ".omc/log.txt", "a\n")
    confined.append_confined(root, ".omc/log.txt", "b\n")
    assert confined.read_confined_text(root, ".omc/log.txt") == "a\nb\n"
    assert confined.list_confined(root, ".omc") == ["log.txt", "state"]
    assert confined.list_confined(root, "missing") == [] and confined.stat_confined(root, "missing") is None
    confined.unlink_confined(root, ".omc/log.txt")
    assert confined.list_confined(root, ".omc") == ["state"]
    assert [p.name for p in (root / ".omc" / "state").iterdir()] == ["mode.json"]  # no temp file left


def test_helper_options_refuse_hard_links_and_oversized_files(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / ".omc").mkdir(parents=True)
    outside.mkdir()
    (outside / "netrc").write_text("machine x password s3cret")
    os.link(outside / "netrc", root / ".omc" / "notes.md")  # another name for a file outside
    assert "s3cret" in confined.read_confined_text(root, ".omc/notes.md")  # the default reads it, as before
    with pytest.raises(confined.UnsafePathError, match="2 hard links"):
        confined.read_confined_text(root, ".omc/notes.md", single_link=True)
    (root / ".omc" / "state.json").write_text("x" * 100)
    with pytest.raises(confined.UnsafePathError, match="100 bytes, over the limit of 99"):
        confined.read_confined_bytes(root, ".omc/state.json", max_bytes=99)
    assert confined.read_confined_bytes(root, ".omc/state.json", max_bytes=100) == b"x" * 100
    assert confined.read_confined_bytes(root, ".omc/state.json", 10, max_bytes=100) == b"x" * 10  # limit still cuts


def test_helper_keep_mode_keeps_the_users_mode_and_new_files_take_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        path = confined.write_confined_atomic(tmp_path, ".omc/notes.md", "a", keep_mode=True)
        assert oct(path.stat().st_mode & 0o777) == oct(0o640)
        path.chmod(0o600)
        confined.write_confined_atomic(tmp_path, ".omc/notes.md", "b", keep_mode=True)
        assert (oct(path.stat().st_mode & 0o777), path.read_text()) == (oct(0o600), "b")
        confined.write_confined_atomic(tmp_path, ".omc/notes.md", "c")
        assert oct(path.stat().st_mode & 0o777) == oct(0o640)  # without keep_mode: mode less the umask
    finally:
        os.umask(old)


def test_helper_lock_is_confined_exclusive_and_creates_only_when_asked(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    with pytest.raises(FileNotFoundError), confined.lock_confined(root, ".omc/.x.lock"):
        pass
    assert list(root.iterdir()) == []  # no .omc made behind the caller's back
    with (
        confined.lock_confined(root, ".omc/.x.lock", create_dirs=True),
        pytest.raises(TimeoutError),
        confined.lock_confined(root, ".omc/.x.lock", timeout=0),
    ):
        pass
    with confined.lock_confined(root, ".omc/.x.lock", timeout=0):  # released on exit
        pass
    (root / ".omc" / ".y.lock").symlink_to(outside / "made-by-the-lock")
    with pytest.raises(confined.UnsafePathError), confined.lock_confined(root, ".omc/.y.lock"):
        pass
    assert list(outside.iterdir()) == []


def test_memory_md_hard_linked_to_a_private_key(world):
    os.link(world["outside"] / "id_ed25519", world["memory"] / "memory.md")  # a tarball can carry one
    text = drive(world)
    assert KEY_BODY not in text, "the hard-linked key reached Claude or the terminal"
    for path in world["project"].rglob("*"):
        if path.is_file() and path.name != "memory.md":
            assert KEY_BODY not in path.read_text(errors="replace"), f"the key was copied into {path}"
    assert any("memory.md" in r["path"] for r in refusals(world["home"]))


def test_a_symlinked_project_config_is_not_followed(tmp_path):
    from omcm_core.config import Config

    project, outside, home = tmp_path / "project", tmp_path / "outside", tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    outside.mkdir()
    home.mkdir()
    (outside / "omcm.toml").write_text("[core]\nfail_closed = []\nplugin_budget_ms = 7\n")
    (project / ".claude" / "omcm.toml").symlink_to(outside / "omcm.toml")
    config = Config.load(home, project, env={})
    assert config.sources == [] and "core" not in config.sections
    (project / ".claude" / "omcm.toml").unlink()
    (project / ".claude" / "omcm.toml").write_text('[core]\nlanguage = "ko"\n')  # a key a project may set
    assert Config.load(home, project, env={}).sections["core"] == {"language": "ko"}
