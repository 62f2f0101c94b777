"""Shared helpers of the reliability suite: real plugin installs, real hook processes.

Test plugins live in ``tests/reliability/plugins/<dist>/`` and are installed
once per test session into a private ``--target`` folder; hook processes get it
on ``PYTHONPATH`` so ``importlib.metadata`` finds their entry points exactly as
for a user's install, and ``OMCM_LOAD_PLUGINS`` selects which ones run.

To add the project's own plugins (installed editable in the venv, so already
discoverable) to the hostile-input and isolation tests, add their entry-point
names to :data:`PLUGIN_SETS`; every test parametrised over it picks them up.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PLUGIN_SOURCES = HERE / "plugins"

#: Well-behaved plugin selections the hostile-input tests run under.
#: The lead extends this with the project plugins, e.g.
#: ``"project": ["tool-counter", "pre-tool-guide", "post-tool-observer", "memory-rotation"]``.
PLUGIN_SETS: dict[str, list[str]] = {
    "none": [],
    "test-plugins": ["rel-answer", "rel-counter", "rel-rows"],
    "project-plugins": ["tool-counter", "pre-tool-guide", "post-tool-observer", "memory-rotation"],
}


def install_plugins(sources: Iterable[Path], target: Path, scratch: Path) -> None:
    """pip-install plugin source folders into ``target`` in one pip run.

    Sources are copied to ``scratch`` first: setuptools builds in tree and would
    otherwise leave ``build/`` and ``*.egg-info`` in the repository.
    """
    copies = []
    for source in sources:
        copy = scratch / source.name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        copies.append(str(copy))
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-build-isolation",
        "--no-deps",
        "--no-index",
        "--disable-pip-version-check",
        "-q",
        "--target",
        str(target),
        *copies,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"installing test plugins failed:\n{proc.stdout}\n{proc.stderr}")


class PluginSite:
    """The installed test plugins and how to run ``omcm hook`` with them."""

    def __init__(self, site: Path) -> None:
        self.site = site

    def env(self, home: Path, plugins: Sequence[str], **extra: str) -> dict[str, str]:
        """The environment of a hook process: private home, selected plugins, no daemon."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OMCM")}
        env.update(
            PYTHONPATH=str(self.site),
            OMCM_HOME=str(home),
            OMCM_LOAD_PLUGINS=",".join(plugins),
            OMCM_DAEMON="0",
            PYTHONDONTWRITEBYTECODE="1",
            OMCM_PASS_ENV="REL_*",  # the test plugins' knobs (a call sees only OMCM_*, CLAUDE_*... otherwise)
        )
        env.update(extra)
        return env


#: The client ``run_hook`` starts (the ``hook_client`` fixture sets it): argv before the event.
CLIENT_ARGV = [sys.executable, "-m", "omcm_core", "hook"]


def hook_argv(event: str | None = None, raw: bytes = b"") -> list[str]:
    if event is None and CLIENT_ARGV[0] != sys.executable:
        # A registered client always gets its event, as settings.json names it: take it from the payload.
        try:
            event = json.loads(raw).get("hook_event_name")
        except (ValueError, AttributeError, RecursionError):  # hostile payloads: no event, as for any client
            event = None
        event = event if isinstance(event, str) else None
    return CLIENT_ARGV + ([event] if event else [])


def run_hook(
    raw: bytes,
    env: Mapping[str, str],
    cwd: Path | None = None,
    event: str | None = None,
    preexec_fn: Callable[[], None] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    """One ``omcm hook`` process, as Claude Code starts it (stdin payload, capture both pipes)."""
    return subprocess.run(
        hook_argv(event, raw),
        input=raw,
        capture_output=True,
        env=dict(env),
        cwd=cwd,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )


def spawn_hook(
    raw: bytes, env: Mapping[str, str], cwd: Path | None = None, event: str | None = None
) -> subprocess.Popen:
    """Start ``omcm hook`` and feed it ``raw`` without waiting for the answer."""
    proc = subprocess.Popen(
        hook_argv(event, raw),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
    )
    proc.stdin.write(raw)
    proc.stdin.close()
    proc.stdin = None  # so communicate() only collects the output
    return proc


def post_tool(session_id: str, tool_use_id: str | None = None, cwd: str = "/", **extra: Any) -> dict[str, Any]:
    payload = {
        "session_id": session_id,
        "transcript_path": f"/nonexistent/{session_id}.jsonl",
        "cwd": cwd,
        "hook_event_name": "PostToolUse",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "a\nb\n", "stderr": "", "interrupted": False},
        "tool_use_id": tool_use_id or f"toolu_{uuid.uuid4().hex[:24]}",
    }
    payload.update(extra)
    return payload


def parse_stdout(event_name: str | None, stdout: bytes) -> dict | None:
    """Fail unless stdout is empty or exactly one JSON object valid for ``event_name``."""
    from omcm_core.testing import assert_valid_response

    assert b"Traceback" not in stdout, stdout[:2000]
    text = stdout.decode("utf-8")
    if not text.strip():
        assert text == "", f"whitespace-only stdout: {text!r}"
        return None
    assert text.endswith("\n") and text.count("\n") == 1, f"more than one line on stdout: {text[:500]!r}"
    value = json.loads(text, parse_constant=_reject_constant)
    assert isinstance(value, dict), f"stdout is JSON but not an object: {text[:200]!r}"
    assert_valid_response(event_name, value)
    return value


def _reject_constant(name: str) -> None:
    raise AssertionError(f"stdout holds {name}, which is not JSON")


def log_entries(home: Path) -> list[dict]:
    """Every line of OMCM_HOME/logs/omcm.jsonl, each parsed (a torn line fails the test)."""
    path = home / "logs" / "omcm.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def snapshot(root: Path, exclude: Sequence[Path] = ()) -> dict[str, tuple]:
    """Every path under ``root`` (except ``exclude`` trees) with its type, mode, size and content hash."""
    excluded = {p.resolve() for p in exclude}
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        current = Path(dirpath)
        dirnames[:] = [d for d in dirnames if (current / d).resolve() not in excluded]
        for name in dirnames + filenames:
            path = current / name
            info = path.lstat()
            digest = ""
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[str(path.relative_to(root))] = (
                stat.S_IFMT(info.st_mode),
                stat.S_IMODE(info.st_mode),
                info.st_size,
                digest,
            )
    return state


def modes_under(root: Path) -> dict[str, str]:
    """``relative path -> octal mode`` for every folder and file under ``root`` (root included)."""
    found = {".": oct(stat.S_IMODE(root.stat().st_mode))}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            found[str(path.relative_to(root))] = oct(stat.S_IMODE(path.lstat().st_mode))
    return found


def sqlite_check(db: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA quick_check").fetchone()[0]
    finally:
        conn.close()


def sqlite_rows(db: Path, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    import sqlite3

    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


class FakeServer:
    """A listening socket at ``path`` that records what it is sent and answers ``reply``."""

    def __init__(self, path: str, reply: bytes) -> None:
        self.received: list[bytes] = []
        self.connections = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.reply, self.done = reply, threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while chunk := conn.recv(65536):
                        data += chunk
                except OSError:
                    pass
                self.received.append(data)
                try:
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self.sock.close()


def start_daemon(env: Mapping[str, str]) -> subprocess.Popen:
    """``omcm daemon run`` in the background, returned once it answers ``status``."""
    import time

    from omcm_core._runtime import daemon

    proc = subprocess.Popen(
        [sys.executable, "-m", "omcm_core", "daemon", "run"],
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while daemon.status(dict(env)) is None:
        assert proc.poll() is None and time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.05)
    return proc
