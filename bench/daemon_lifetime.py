"""How long the warm dispatcher stays after a session ends, or after its Claude Code dies, and its memory.

    .venv/bin/python bench/daemon_lifetime.py          # default settings: about 2 minutes

A stand-in for Claude Code (a long-lived process that runs each hook through
``sh -c`` as its child, as Claude Code does) makes a session's calls with all of
this checkout's plugins: SessionStart, then PreToolUse/PostToolUse pairs. Then,
once with a SessionEnd and once by killing the stand-in without one, it times
how long the dispatcher takes to exit, with the default settings (linger 30 s,
session idle bound 1 h). Also printed: the dispatcher's resident memory after
the session's calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hook_latency import daemon_memory_mb

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
CLAUDE = r"""
import shlex, subprocess, sys
for line in sys.stdin:
    event, payload = line.split(" ", 1)
    command = shlex.join([sys.argv[1], "-S", sys.argv[2], event])
    subprocess.run(["sh", "-c", command], input=payload.encode(), capture_output=True)
    print("done", flush=True)
"""


def running(env: dict) -> bool:
    status = [PYTHON, "-m", "omcm_core", "daemon", "status"]
    return subprocess.run(status, env=env, capture_output=True, cwd="/").returncode == 0


def session(env: dict, project: Path, calls: int) -> subprocess.Popen:
    find = "from omcm_core._cli.install import fast_hook_argv; print(fast_hook_argv('')[2])"
    fast_hook = subprocess.check_output([PYTHON, "-c", find], text=True, cwd="/").strip()
    claude = subprocess.Popen(
        [PYTHON, "-c", CLAUDE, PYTHON, fast_hook], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
    )
    base = {"session_id": "11fe0000-0000-4000-8000-000000000001", "cwd": str(project)}
    payloads = [("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})]
    for n in range(calls):
        tool = {"tool_name": "Bash", "tool_input": {"command": f"ls {n}"}, "tool_use_id": f"toolu_{n}"}
        payloads.append(("PreToolUse", {**base, **tool, "hook_event_name": "PreToolUse"}))
        response = {"tool_response": {"stdout": "x\n" * 50, "stderr": "", "interrupted": False}}
        payloads.append(("PostToolUse", {**base, **tool, **response, "hook_event_name": "PostToolUse"}))
    for n, (event, payload) in enumerate(payloads):
        claude.stdin.write(f"{event} {json.dumps(payload)}\n")
        claude.stdin.flush()
        claude.stdout.readline()
        if n == 0:
            while not running(env):  # the first call started the dispatcher
                time.sleep(0.1)
    return claude


def seconds_until_gone(env: dict, limit: float = 600) -> float:
    started = time.monotonic()
    while running(env) and time.monotonic() - started < limit:
        time.sleep(0.5)
    return round(time.monotonic() - started, 1)


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="omcm-lifetime-"))
    project = work / "project"
    project.mkdir()
    report = {}
    for ending in ("session_end", "killed"):
        home = work / ending
        env = {
            **os.environ,
            "OMCM_HOME": str(home),
            "CLAUDE_PROJECT_DIR": str(project),
            "OMCM_DAEMON": "1",
            "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
        }
        claude = session(env, project, calls=50)
        report[f"{ending}_memory_mb"] = daemon_memory_mb(home)
        if ending == "session_end":
            end = {"session_id": "11fe0000-0000-4000-8000-000000000001", "hook_event_name": "SessionEnd"}
            claude.stdin.write(f"SessionEnd {json.dumps({**end, 'reason': 'logout'})}\n")
            claude.stdin.flush()
            claude.stdout.readline()
        else:
            claude.send_signal(signal.SIGKILL)
        report[f"{ending}_exit_after_s"] = seconds_until_gone(env)
        claude.kill()
        claude.communicate()
    report["load"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
