"""How long ``omcm mcp`` makes Claude Code wait: ``initialize`` and ``tools/list`` answered, and exit.

Each round, interleaved: a bare ``/usr/bin/python3 -c pass`` (start to exit),
then ``omcm mcp`` as Claude Code starts it (this interpreter's ``omcm``
script, the project as cwd): the time from spawn to the ``initialize``
answer, to the ``tools/list`` answer, then from closing stdin (or from SIGINT,
every other round) to the process's exit. ``--before-code DIR`` times the same
for another checkout's ``omcm_core`` (put first on PYTHONPATH), e.g. a
``git worktree`` of the previous main. The first round of each variant fills
the tool-list cache and is not counted.

    python bench/mcp_start.py --rounds 20 [--before-code /tmp/omcm-before]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
]


def line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def bare() -> float:
    start = time.perf_counter()
    subprocess.run(["/usr/bin/python3", "-c", "pass"], check=True)
    return (time.perf_counter() - start) * 1000


def one_server(command: list[str], env: dict, cwd: Path, sigint: bool) -> tuple[float, float, float, int]:
    """(ms to initialize answer, ms to tools/list answer, ms from stdin close or SIGINT to exit, tools)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(line(MESSAGES[0]))
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())
    t_init = (time.perf_counter() - start) * 1000
    assert first.get("id") == 1 and "result" in first, first
    proc.stdin.write(line(MESSAGES[1]) + line(MESSAGES[2]))
    proc.stdin.flush()
    listed = json.loads(proc.stdout.readline())
    t_list = (time.perf_counter() - start) * 1000
    assert listed.get("id") == 2, listed
    stop = time.perf_counter()
    if sigint:
        proc.send_signal(signal.SIGINT)
    else:
        proc.stdin.close()
    try:
        proc.wait(timeout=10)
        t_exit = (time.perf_counter() - stop) * 1000
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        t_exit = float("inf")
    return t_init, t_list, t_exit, len(listed["result"]["tools"])


def summary(values: list[float], base: float) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    med = statistics.median(values)
    return f"{med:8.1f} ms  p95 {p95:8.1f}  x{med / base:5.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--before-code", type=Path, help="a checkout whose omcm_core to time as 'before'")
    parser.add_argument("--plugins", default="post-tool-observer,pre-tool-guide,memory-rotation,notepad")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="omcm-mcp-bench-"))
    project = work / "project"
    project.mkdir()
    script = Path(sys.executable).with_name("omcm")
    command = [str(script), "mcp"] if script.exists() else [sys.executable, "-m", "omcm_core", "mcp"]
    base_env = {**os.environ, "OMCM_LOAD_PLUGINS": args.plugins, "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}
    variants = {"after": {**base_env, "OMCM_HOME": str(work / "home-after")}}
    if args.before_code:
        path = os.pathsep.join(filter(None, [str(args.before_code), os.environ.get("PYTHONPATH")]))
        variants["before"] = {**base_env, "OMCM_HOME": str(work / "home-before"), "PYTHONPATH": path}
    results: dict[str, dict[str, list[float]]] = {
        v: {"init": [], "list": [], "close": [], "sigint": []} for v in variants
    }
    bases: list[float] = []
    try:
        for env in variants.values():  # fills each variant's cache, not counted
            one_server(command, env, project, sigint=False)
        for n in range(args.rounds):
            bases.append(bare())
            for name, env in variants.items():
                t_init, t_list, t_exit, tools = one_server(command, env, project, sigint=n % 2 == 1)
                results[name]["init"].append(t_init)
                results[name]["list"].append(t_list)
                results[name]["sigint" if n % 2 else "close"].append(t_exit)
            bases.append(bare())
        load = os.getloadavg()
        base = statistics.median(bases)
        print(f"{args.rounds} rounds, {tools} tools, load average {load[0]:.1f}/{load[1]:.1f}, cpus {os.cpu_count()}")
        print(f"bare /usr/bin/python3 -c pass: {base:.1f} ms")
        for name, found in results.items():
            print(f"{name}: initialize answered  {summary(found['init'], base)}")
            print(f"{name}: tools/list answered  {summary(found['list'], base)}")
            print(f"{name}: exit after stdin closed {summary(found['close'], base)}")
            print(f"{name}: exit after SIGINT      {summary(found['sigint'], base)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
