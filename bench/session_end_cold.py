"""A cold SessionEnd on a busy machine: how long the hook process keeps Claude Code waiting.

    .venv/bin/python bench/session_end_cold.py                   # 12 calls each, 2 busy loops per core
    .venv/bin/python bench/session_end_cold.py --code /tmp/old    # also another checkout's omcm_core (before)
    .venv/bin/python bench/session_end_cold.py --busy 0           # an idle machine

Claude Code cancels SessionEnd hooks 1.5 s after the first starts ("SessionEnd
hook ... failed: Hook cancelled"). Short sessions (`claude mcp list`, a one-turn
`claude -p`) have no warm dispatcher, so the call is cold. Each call here runs
the registered command (``python -S .../fast_hook.py SessionEnd``) with all of
this checkout's plugins, a fresh OMCM_HOME (so no dispatcher is warm) and a real
transcript when ../shared/fixtures has one, while ``--busy`` processes per core
spin. Printed: p50/p90/max wall time until the hook process exits (with its
pipes closed, which is what the client waits for), next to a bare ``python -S
-c pass`` under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "transcripts"


def busy(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def transcript() -> str | None:
    found = sorted(FIXTURES.glob("*.jsonl")) if FIXTURES.is_dir() else []
    return str(found[0]) if found else None


def one_call(argv: list[str], work: Path, n: int, extra: dict) -> float:
    home = work / f"home-{n}"
    home.mkdir()
    (home / "config.toml").write_text("[post-tool-observer]\nembeddings = false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMCM", "CLAUDE"))}
    env |= {"OMCM_HOME": str(home), "OMCM_DAEMON_IDLE_S": "2", **extra}
    payload = {"hook_event_name": "SessionEnd", "session_id": f"s{n}", "cwd": str(work), "reason": "other"}
    if transcript():
        payload["transcript_path"] = transcript()
    started = time.perf_counter()
    subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=work, timeout=120)
    return time.perf_counter() - started


def measure(name: str, argv: list[str], runs: int, work: Path, **extra: str) -> None:
    times = sorted(one_call(argv, work, n, extra) for n in range(runs))
    for n in range(runs):  # dispatchers the calls started: not timed
        home = work / f"home-{n}"
        subprocess.run(
            [sys.executable, "-m", "omcm_core", "daemon", "stop"],
            env={**os.environ, "OMCM_HOME": str(home)},
            capture_output=True,
            timeout=60,
        )
        for item in sorted(home.rglob("*"), reverse=True):
            item.unlink() if not item.is_dir() or item.is_symlink() else item.rmdir()
        home.rmdir()
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    print(
        f"{name:<34} p50 {statistics.median(times) * 1000:7.0f} ms  p90 {p90 * 1000:7.0f} ms  max {times[-1] * 1000:7.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--busy", type=int, default=2, help="busy loops per core")
    parser.add_argument("--code", type=Path, help="another checkout's omcm_core folder, measured too")
    args = parser.parse_args()
    hook = [sys.executable, "-S", str(ROOT / "omcm_core" / "fast_hook.py"), "SessionEnd"]
    spinners = busy(args.busy * (os.cpu_count() or 1))
    print(f"{os.cpu_count()} cores, {len(spinners)} busy loops, transcript: {transcript() or 'none'}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            measure("python -S -c pass", [sys.executable, "-S", "-c", "pass"], args.runs, work)
            measure("SessionEnd, cold, this checkout", hook, args.runs, work)
            if args.code:
                old = [sys.executable, "-S", str(args.code / "fast_hook.py"), "SessionEnd"]
                measure(f"SessionEnd, cold, {args.code}", old, args.runs, work)
            measure("SessionEnd, in process (OMCM_DAEMON=0)", hook, args.runs, work, OMCM_DAEMON="0")
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


if __name__ == "__main__":
    main()
