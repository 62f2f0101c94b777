"""Warm hook calls through the native client vs the Python client vs a bare `python3 -c pass`.

    python bench/native_client.py                 # this interpreter's omcm and plugins, 60 rounds
    python bench/native_client.py --rounds 100 --json out.json

Each process is started with `sh -c '<command>'`, as Claude Code starts a hook
command. Every round runs each variant once, interleaved (machine load hits
all alike): the bare interpreter (`python3 -c pass`, the real binary), and
PreToolUse and PostToolUse through the Python client's registered command
(`python -S .../fast_hook.py EVENT`) and through the native client
(`omcm-hook hook EVENT`, built here with the machine's C compiler), both with
the warm dispatcher. It prints medians, p95 and the ratio of each median to
the bare interpreter's. Answers are checked byte-identical first.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hook_latency import payloads, real_python, timed  # noqa: E402

from omcm_core._cli import native_client  # noqa: E402
from omcm_core._cli.install import fast_hook_argv  # noqa: E402
from omcm_core._runtime import daemon  # noqa: E402

EVENTS = ("PreToolUse", "PostToolUse")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="omcm-bench-") as work:
        home, project = Path(work, "home"), Path(work, "project")
        (project / "src").mkdir(parents=True)
        binary, how = native_client.build(Path(work, "omcm-hook"))
        if binary is None:
            print(f"cannot build the native client: {how}", file=sys.stderr)
            return 1
        env = {**os.environ, "OMCM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project), "OMCM_DAEMON": "1"}
        env.pop("OMCM_LOAD_PLUGINS", None)
        data = payloads(project)
        # The distribution's python3, as hook_latency.py's ratios (a pyenv build may load extra .pth files).
        python3 = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else real_python()
        commands = {
            "bare python3 -c pass": shlex.join([python3, "-c", "pass"]),
            "bare python3 -S -c pass": shlex.join([python3, "-S", "-c", "pass"]),
        }
        for event in EVENTS:
            commands[f"{event} python client"] = shlex.join(fast_hook_argv(event))
            commands[f"{event} native client"] = shlex.join([str(binary), "hook", event])
        try:
            for event in EVENTS:  # start the dispatcher, let it load, prime each event; then compare answers
                for _ in range(3):
                    subprocess.run(["sh", "-c", commands[f"{event} python client"]], input=data[event], env=env)
                    time.sleep(1)
                answers = {
                    kind: subprocess.run(
                        ["sh", "-c", commands[f"{event} {kind} client"]],
                        input=data[event],
                        env=env,
                        capture_output=True,
                    ).stdout
                    for kind in ("python", "native")
                }
                assert answers["python"] == answers["native"], answers
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.rounds):
                for name, command in commands.items():
                    event = name.split()[0]
                    times[name].append(timed(["/bin/sh", "-c", command], data.get(event, b""), env))
        finally:
            daemon.stop(env)
    base = statistics.median(times["bare python3 -c pass"])
    base_s = statistics.median(times["bare python3 -S -c pass"])
    summary = {}
    print(f"{'variant':32} {'median ms':>10} {'p95 ms':>8} {'x bare':>7} {'x -S':>6}   ({how}, {args.rounds} rounds)")
    for name, values in times.items():
        median = statistics.median(values)
        p95 = sorted(values)[int(len(values) * 0.95) - 1]
        summary[name] = {
            "median_ms": round(median, 2),
            "p95_ms": round(p95, 2),
            "ratio": round(median / base, 2),
            "ratio_no_site": round(median / base_s, 2),
        }
        print(f"{name:32} {median:10.2f} {p95:8.2f} {median / base:7.2f} {median / base_s:6.2f}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
