"""Cold hook calls (no dispatcher: answered in process) against a bare Python start, before and after.

Each round, interleaved: ``/usr/bin/python3 -c pass``; then, per event
(PreToolUse of Bash, SessionStart), ``python -S omcm_core/fast_hook.py EVENT``
with ``OMCM_DAEMON=0`` (the cold path's answer: the dispatcher it would start
afterwards is not timed), for this checkout and, with ``--before-code DIR``,
for another checkout's ``omcm_core`` (first on PYTHONPATH, same interpreter,
same plugins, same store). Each variant's plugin cache is warmed first. Prints
medians, p95 and the ratio to the bare interpreter, plus the load average, and
each process's CPU time (user + system, from ``getrusage``), which a loaded
machine disturbs far less than wall time.

    python bench/cold_calls.py --rounds 20 --before-code /tmp/omcm-before [--log-level debug]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAST_HOOK = Path(__file__).resolve().parents[1] / "omcm_core" / "fast_hook.py"


def payloads(project: Path) -> dict[str, dict]:
    common = {"session_id": "cold-bench", "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    return {
        "PreToolUse": {
            **common,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "permission_mode": "default",
        },
        "SessionStart": {**common, "hook_event_name": "SessionStart", "source": "startup"},
    }


#: CPU time (user + system) of each call's process, by variant: steadier than wall time on a loaded machine.
CPU: dict[object, list[float]] = {}


#: ``--floor``: what the interpreter costs before any plugin runs, each row adding imports to the one before
#: (``python -S`` then ``site.main()``, as the client does before importing omcm_core).
FLOOR = {
    "site": "",
    "+attrs": "; import attrs",
    "+pluggy,sqlite3,json": "; import attrs, pluggy, sqlite3, json",
    "+omcm_core's call path": "; import attrs, pluggy, sqlite3, json; from omcm_core._runtime import dispatch, manager"
    "; from omcm_core import config, context, store, records, events; from omcm_core._runtime import breaker, stats",
}


def timed(argv: list[str], data: bytes, env: dict, cwd: Path, key: object = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, input=data, capture_output=True, env=env, cwd=cwd, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    CPU.setdefault(key, []).append(cpu)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--before-code", type=Path)
    parser.add_argument("--floor", action="store_true", help="also time the imports under a cold call, row by row")
    parser.add_argument(
        "--log-level", default="info", help="OMCM_LOG_LEVEL of the calls (debug: every call writes a log line)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="omcm-cold-"))
    project = work / "project"
    project.mkdir()
    base_env = {
        **os.environ,
        "OMCM_DAEMON": "0",
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
        "OMCM__CORE__PLUGIN_BUDGET_MS": "60000",
        "OMCM_LOG_LEVEL": args.log_level,
    }
    variants = {"after": {**base_env, "OMCM_HOME": str(work / "home-after")}}
    if args.before_code:
        variants["before"] = {**base_env, "OMCM_HOME": str(work / "home-before"), "PYTHONPATH": str(args.before_code)}
    calls = payloads(project)
    results: dict[tuple, list[float]] = {}
    bases: list[float] = []
    n = 0
    try:
        for env in variants.values():  # plugin cache, store schema
            for event, payload in calls.items():
                for _ in range(2):
                    n += 1
                    data = json.dumps({**payload, "tool_use_id": f"toolu_warm_{n}"}).encode()
                    timed([sys.executable, "-S", str(FAST_HOOK), event], data, env, project)
        loads = []
        for _ in range(args.rounds):
            bases.append(timed(["/usr/bin/python3", "-c", "pass"], b"", os.environ.copy(), project, "base"))
            loads.append(os.getloadavg()[0])
            for label, code in FLOOR.items() if args.floor else ():
                argv = [sys.executable, "-S", "-c", "import site; site.main()" + code]
                results.setdefault(("floor", label), []).append(timed(argv, b"", base_env, project, ("floor", label)))
            for name, env in variants.items():
                for event, payload in calls.items():
                    n += 1
                    data = json.dumps({**payload, "tool_use_id": f"toolu_cold_{n}"}).encode()
                    results.setdefault((name, event), []).append(
                        timed([sys.executable, "-S", str(FAST_HOOK), event], data, env, project, (name, event))
                    )
        base = statistics.median(bases)
        print(
            f"{args.rounds} rounds, {os.cpu_count()} cpus, load average {min(loads):.1f}-{max(loads):.1f},"
            f" log level {args.log_level}"
        )
        base_cpu = statistics.median(CPU["base"])
        print(f"bare /usr/bin/python3 -c pass: median {base:.1f} ms, CPU {base_cpu:.1f} ms")
        for (name, event), values in results.items():
            values.sort()
            med, p95 = statistics.median(values), values[min(len(values) - 1, int(0.95 * len(values)))]
            cpu = statistics.median(CPU[(name, event)])
            print(
                f"{name:<7} {event:<13.13} cold median {med:7.1f} ms  p95 {p95:7.1f}  x{med / base:5.2f}"
                f"   CPU {cpu:6.1f} ms  x{cpu / base_cpu:5.2f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
