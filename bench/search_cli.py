"""`omcm search` from the command line against `python3 -c pass`, interleaved, before and after (issue 35 item 4).

    python bench/search_cli.py --home STORE [--before-src DIR [--before-home STORE_COPY]] [--queries 20]

STORE is a filled store (``bench/observer_year.py --rows 1000000 --home STORE --build-only``);
it is searched from the recorded project's folder, as a user does. Each query runs, in turn:
``/usr/bin/python3 -c pass``, then each variant with ``--full-text`` and with the default mode
(hybrid where vectors exist):

- ``before``: the code of ``--before-src`` (an unpacked older commit, ``git archive REV | tar -x``),
  put first on PYTHONPATH, on the same store (or ``--before-home``, a copy, where older code would
  migrate or rebuild caches; two copies of a million calls no longer fit the page cache here, and
  their reads from disk then timed the disk);
- ``after, in process``: this tree's route with the search server off (``OMCM_SEARCH_SERVER=0``);
- ``after``: this tree as users run it (the search server answers semantic and hybrid).

Every variant ran once before the timings (the command remembered, the server started and warm).
The outputs of ``after`` and ``after, in process`` are compared for every query (they must be equal).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from observer_year import PROJECT, queries  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OMCM = str(Path(sys.executable).parent / "omcm")


def _timed(argv: list[str], env: dict) -> tuple[float, bytes]:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False, cwd=PROJECT)
    return (time.perf_counter() - started) * 1000, proc.stdout


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--before-src", type=Path)
    parser.add_argument("--before-home", type=Path)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()
    # PYTHONDONTWRITEBYTECODE off: an installed omcm has its .pyc files; compiling ~20 modules costs ~25 ms a run.
    drop = ("OMCM", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    base = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    base.update(CLAUDE_PROJECT_DIR=PROJECT, OMCM_DAEMON="0")
    after = {**base, "OMCM_HOME": str(args.home.resolve())}
    variants = {"after": after, "after, in process": {**after, "OMCM_SEARCH_SERVER": "0"}}
    if args.before_src:
        src = args.before_src.resolve()
        path = [str(src), *(str(p) for p in sorted((src / "plugins").iterdir()) if p.is_dir())]
        variants = {
            "before": {
                **base,
                "OMCM_HOME": str((args.before_home or args.home).resolve()),
                "PYTHONPATH": os.pathsep.join(path),
            },
            **variants,
        }
    modes = {"--full-text": ["--full-text"], "default (hybrid)": []}
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load {load[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for env in variants.values():  # remember the command, start the server, map the vectors
        for _ in range(2):
            for extra in modes.values():
                _timed([OMCM, "search", *extra, "warm up"], env)
    if "OMCM_SEARCH_SERVER" not in after:
        deadline = time.monotonic() + 300
        probe = "from omcm_post_tool_observer import search_client as c; import sys; print(c.status(sys.argv[1]))"
        while time.monotonic() < deadline:
            out = subprocess.run([sys.executable, "-c", probe, str(args.home)], capture_output=True, text=True)
            if out.stdout.strip() != "None":
                break
            time.sleep(1)
        _timed([OMCM, "search", "warm up"], after)
    times: dict[str, list[float]] = {"/usr/bin/python3 -c pass": [], f"{sys.executable} -c pass (this venv)": []}
    mismatches = 0
    for text in queries(args.queries):
        times["/usr/bin/python3 -c pass"].append(_timed(["/usr/bin/python3", "-c", "pass"], base)[0])
        times[f"{sys.executable} -c pass (this venv)"].append(_timed([sys.executable, "-c", "pass"], base)[0])
        for mode, extra in modes.items():
            outputs = {}
            for name, env in variants.items():
                took, out = _timed([OMCM, "search", *extra, *text.split()], env)
                times.setdefault(f"{mode}: {name}", []).append(took)
                outputs[name] = out
            mismatches += outputs["after"] != outputs["after, in process"]
    python = times["/usr/bin/python3 -c pass"]
    p50, p95 = statistics.median(python), _p(python, 0.95)
    print(f"{len(python)} queries; load at the end {os.getloadavg()[0]:.1f} (start {load[0]:.1f})")
    print(f"{'':44} {'p50':>8} {'p95':>8} {'p50 x':>7} {'p95 x':>7}")
    for label, values in times.items():
        a, b = statistics.median(values), _p(values, 0.95)
        print(f"{label[-44:]:44} {a:8.1f} {b:8.1f} {a / p50:7.1f} {b / p95:7.1f}")
    print(f"outputs differing between the server and in process: {mismatches}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
