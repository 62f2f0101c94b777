"""Hooks under load: 8 callers at once over 4 sessions, every call checked, latency percentiles.

    .venv/bin/python bench/concurrency.py                  # 240 calls, 8 callers, 4 sessions
    .venv/bin/python bench/concurrency.py --calls 400 --diagnose
    .venv/bin/python bench/concurrency.py --code /tmp/old   # another checkout's omcm_core (the "before")

Claude Code runs one hook process per event and per parallel tool call, so a
session with parallel tools, or several sessions, call the warm dispatcher at
once. Each caller runs the registered command (``python -S .../fast_hook.py
EVENT``) with all of this checkout's plugins on an empty store, PreToolUse,
PostToolUse and UserPromptSubmit in turn, each with its own tool_use_id.

Checked for every call: exit 0, stdout empty or one JSON object for its event,
and each PostToolUse recorded exactly once by the observer (nothing lost,
nothing run twice). Printed: p50/p90/p99/max of the wall time each caller saw,
the warm dispatcher's memory. With ``--diagnose`` the run logs at debug level
(slower) and also prints how many calls the dispatcher answered, why others
were answered in process, and the dispatcher's own time per call.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hook_latency import daemon_memory_mb

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit")


def payload(n: int, session: str, project: Path) -> tuple[str, bytes]:
    event = EVENTS[n % len(EVENTS)]
    common = {"session_id": session, "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    body: dict = {**common, "hook_event_name": event, "permission_mode": "default"}
    if event == "UserPromptSubmit":
        body["prompt"] = f"please look at module {n}"
    else:
        body.update(tool_name="Bash", tool_input={"command": f"ls src/{n}"}, tool_use_id=f"toolu_{n:06d}")
    if event == "PostToolUse":
        body["tool_response"] = {"stdout": f"file{n}.py\n" * 20, "stderr": "", "interrupted": False}
    return event, json.dumps(body).encode()


def one_call(argv: list[str], event: str, raw: bytes, env: dict) -> tuple[float, str | None, float]:
    """(wall ms, problem or None, start)."""
    started = time.perf_counter()
    done = subprocess.run(argv + [event], input=raw, capture_output=True, env=env, timeout=60)
    ms = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        return ms, f"exit {done.returncode}: {done.stderr[-300:]!r}", started
    out = done.stdout.strip()
    if not out:
        return ms, None, started
    try:
        answer = json.loads(out)
    except ValueError:
        return ms, f"not one JSON object: {out[:200]!r}", started
    said = answer.get("hookSpecificOutput", {}).get("hookEventName", event)
    return ms, None if said == event else f"answer for {said}, not {event}", started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def wait_for_daemon(python: str, env: dict) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        probe = subprocess.run([python, "-m", "omcm_core", "daemon", "status"], env=env, capture_output=True, cwd="/")
        if probe.returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit("the warm dispatcher did not start")


def diagnose(home: Path) -> dict:
    entries = [json.loads(line) for line in (home / "logs" / "omcm.jsonl").read_text().splitlines()]
    daemons = {e["pid"] for e in entries if e["event"] == "daemon_started"}
    served = [e["ms"] for e in entries if e["event"] == "dispatched" and e["pid"] in daemons]
    return {
        "answered_by_daemon": len(served),
        "answered_in_process": sum(e["event"] == "dispatched" and e["pid"] not in daemons for e in entries),
        "not_used": dict(Counter(e.get("reason", "?") for e in entries if e["event"] == "daemon_not_used")),
        "daemon_call_ms_p50": round(statistics.median(served), 1) if served else None,
        "daemon_call_ms_p99": round(percentile(served, 0.99), 1) if served else None,
        "daemons_started": len(daemons),
        "queue_wait_ms_p50": _pct([e["waited_ms"] for e in entries if e["event"] == "daemon_call"], 0.5),
        "queue_wait_ms_p99": _pct([e["waited_ms"] for e in entries if e["event"] == "daemon_call"], 0.99),
    }


def _pct(values: list[float], q: float) -> float | None:
    return round(percentile(values, q), 1) if values else None


def run(args: argparse.Namespace) -> dict:
    python = args.python
    code_env = {**os.environ, "PYTHONPATH": args.code} if args.code else dict(os.environ)
    find = "from omcm_core._cli.install import fast_hook_argv; print(fast_hook_argv('')[2])"
    argv = [python, "-S", subprocess.check_output([python, "-c", find], text=True, env=code_env, cwd="/").strip()]
    work = Path(tempfile.mkdtemp(prefix="omcm-concurrency-"))
    home, project = work / "home", work / "project"
    project.mkdir()
    env = {
        **code_env,
        "OMCM_HOME": str(home),
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM_DAEMON": "1",
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",  # no background worker competing for the CPU
    }
    if args.diagnose:
        env["OMCM_LOG_LEVEL"] = "debug"
    sessions = [f"c0ncurr{s:01d}-0000-4000-8000-{s:012d}" for s in range(args.sessions)]
    for session in sessions:  # the first starts the dispatcher; each session begins as in Claude Code
        start = {"session_id": session, "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
        one_call(argv, "SessionStart", json.dumps(start).encode(), env)
    wait_for_daemon(python, env)
    calls = [payload(n, sessions[n % len(sessions)], project) for n in range(args.calls)]
    started = time.perf_counter()
    with ThreadPoolExecutor(args.callers) as pool:
        results = list(pool.map(lambda c: one_call(argv, c[0], c[1], env), calls))
    seconds = time.perf_counter() - started
    memory = daemon_memory_mb(home)
    # The floor under the same concurrency and load: starting Python and nothing else.
    bare = [python, "-S", "-c", "pass"]
    with ThreadPoolExecutor(args.callers) as pool:
        floor = [r[0] for r in pool.map(lambda c: one_call(bare, "", b"", env), calls)]
    problems = [p for _, p, _ in results if p]
    with sqlite3.connect(home / "omcm.db") as db:
        recorded = Counter(r[0] for r in db.execute("SELECT tool_use_id FROM observer_events"))
    sent = {json.loads(raw)["tool_use_id"] for event, raw in calls if event == "PostToolUse"}
    lost = sorted(sent - set(recorded))
    doubled = sorted(t for t, n in recorded.items() if n > 1)
    ms = [m for m, _, _ in results]
    slowest = sorted(((m, n, at - started) for n, (m, _, at) in enumerate(results)), reverse=True)[:5]
    p50, p99 = statistics.median(ms), percentile(ms, 0.99)
    report = {
        "code": argv[2],
        "calls": len(calls),
        "callers": args.callers,
        "sessions": len(sessions),
        "seconds": round(seconds, 2),
        "p50_ms": round(p50, 1),
        "p90_ms": round(percentile(ms, 0.90), 1),
        "p99_ms": round(p99, 1),
        "max_ms": round(max(ms), 1),
        "slowest": [f"call {n} ({calls[n][0]}) at +{at:.1f} s: {m:.0f} ms" for m, n, at in slowest],
        "p99_over_p50": round(p99 / p50, 2),
        "bare_python_p50_ms": round(statistics.median(floor), 1),
        "bare_python_p99_ms": round(percentile(floor, 0.99), 1),
        "problems": problems[:5],
        "problem_count": len(problems),
        "post_tool_lost": lost[:5],
        "post_tool_doubled": doubled[:5],
        "daemon_memory_mb": memory,
        "load_before": os.getloadavg(),
    }
    if args.diagnose:
        report["diagnosis"] = diagnose(home)
    subprocess.run([python, "-m", "omcm_core", "daemon", "stop"], env=env, capture_output=True, cwd="/")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=240)
    parser.add_argument("--callers", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--code", help="a folder holding another omcm_core to measure (put on PYTHONPATH)")
    parser.add_argument("--diagnose", action="store_true", help="debug log: who answered, why, daemon time")
    args = parser.parse_args()
    report = run(args)
    print(json.dumps(report, indent=1))
    ok = not report["problem_count"] and not report["post_tool_lost"] and not report["post_tool_doubled"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
