"""The warm dispatcher's peak memory after a short session, this checkout against another one.

Per run and variant, interleaved: a fresh ``OMCM_HOME``; a cold PreToolUse through
the registered fast hook starts the dispatcher (as in a real session); once it
answers, a SessionStart and ``--pairs`` PreToolUse/PostToolUse pairs (Bash, 2 KB
of output each, so the observer records and masks) go through it; then its
``VmHWM`` (peak resident set) and ``VmRSS`` are read from /proc and it is
stopped. Then, with the store and plugin cache that run left, the time from
spawning ``python -m omcm_core daemon run`` (as a cold call does) to its socket
accepting a connection. ``--before-code DIR`` runs the same with DIR's ``omcm_core`` first on
PYTHONPATH (same interpreter, same plugins). Linux only.

    python bench/daemon_rss.py --runs 3 --before-code /tmp/omcm-before
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def daemon_memory_mb(home: Path) -> dict:
    """Peak and current resident memory of the dispatcher serving ``home``."""
    marker = f"OMCM_HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"daemon" not in argv or marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue
        return {key: int(fields[key].split()[0]) / 1024 for key in ("VmHWM", "VmRSS")}
    return {}


def daemon(env: dict, action: str) -> str:
    argv = [sys.executable, "-m", "omcm_core", "daemon", action]
    return subprocess.run(argv, env=env, capture_output=True, text=True, cwd="/", check=False).stdout


def call(code: Path, event: str, payload: dict, env: dict, project: Path) -> None:
    argv = [sys.executable, "-S", str(code / "omcm_core" / "fast_hook.py"), event]
    subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=project, check=False)


def one_run(code: Path, env: dict, work: Path, pairs: int) -> dict:
    home = work / "home"
    project = work / "project"
    project.mkdir(parents=True)
    env = {**env, "OMCM_HOME": str(home), "OMCM_DAEMON": "1", "CLAUDE_PROJECT_DIR": str(project)}
    base = {"session_id": "rss-bench", "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    pre = {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash", "permission_mode": "default"}
    try:
        call(code, "PreToolUse", {**pre, "tool_input": {"command": "true"}, "tool_use_id": "toolu_0"}, env, project)
        deadline = time.monotonic() + 30
        while "running" not in daemon(env, "status") and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2.5)  # the dispatcher's after-listening imports (detect-secrets) are done
        call(code, "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}, env, project)
        output = "\n".join(f"line {n}: build step {n} ok, {n * 7} files" for n in range(70))[:2048]
        for n in range(pairs):
            tool = {"command": f"make step{n}"}
            call(code, "PreToolUse", {**pre, "tool_input": tool, "tool_use_id": f"toolu_{n + 1}"}, env, project)
            post = {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": tool,
                "tool_response": {"stdout": output, "stderr": "", "interrupted": False},
                "tool_use_id": f"toolu_{n + 1}",
            }
            call(code, "PostToolUse", post, env, project)
        time.sleep(1.5)  # the last recording (after the answer) is done
        memory = daemon_memory_mb(home)
    finally:
        daemon(env, "stop")
    return {**memory, "listen_ms": listen_ms(env)}


def listen_ms(env: dict) -> float | None:
    """Milliseconds from spawning the dispatcher to its socket accepting a connection."""
    import socket

    find = "import os; from omcm_core._runtime.wire import socket_path; print(socket_path(dict(os.environ)))"
    path = subprocess.run([sys.executable, "-c", find], env=env, capture_output=True, text=True, cwd="/").stdout
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "omcm_core", "daemon", "run"], env=env, cwd="/")
    try:
        while time.perf_counter() - start < 30 and proc.poll() is None:
            with socket.socket(socket.AF_UNIX) as probe:
                try:
                    probe.connect(path.strip())
                    return (time.perf_counter() - start) * 1000
                except OSError:
                    time.sleep(0.003)
        return None
    finally:
        daemon(env, "stop")
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--before-code", type=Path)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("OMCM_LOAD_PLUGINS", "OMCM_DISABLE_PLUGINS")}
    env["OMCM__POST_TOOL_OBSERVER__EMBEDDINGS"] = "false"
    variants = {"after": (HERE, env)}
    if args.before_code:
        variants["before"] = (args.before_code, {**env, "PYTHONPATH": str(args.before_code)})
    results: dict[str, list[dict]] = {name: [] for name in variants}
    loads = []
    for _ in range(args.runs):
        for name, (code, variant_env) in variants.items():
            work = Path(tempfile.mkdtemp(prefix="omcm-rss-"))
            try:
                results[name].append(one_run(code, variant_env, work, args.pairs))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            loads.append(os.getloadavg()[0])
    print(f"{args.runs} runs, {args.pairs} pairs, load average {min(loads):.1f}-{max(loads):.1f}")
    for name, runs in results.items():
        peaks = [r["VmHWM"] for r in runs if r]
        rss = [r["VmRSS"] for r in runs if r]
        if not peaks:
            print(f"{name:<7} no dispatcher found")
            continue
        listens = [r["listen_ms"] for r in runs if r.get("listen_ms")]
        print(
            f"{name:<7} peak RSS (VmHWM) median {statistics.median(peaks):.1f} MB"
            f" (min {min(peaks):.1f}, max {max(peaks):.1f}); RSS at the end {statistics.median(rss):.1f} MB;"
            f" listening {statistics.median(listens) if listens else float('nan'):.0f} ms after its spawn"
        )


if __name__ == "__main__":
    main()
