"""PostToolBatch or one call per tool, for post-tool-observer and tool-counter (issue 27).

    python bench/post_tool_batch.py                  # 8 sessions per arrangement, 40 rounds of hook calls
    python bench/post_tool_batch.py --runs 4 --rounds 20 --json out.json
    python bench/post_tool_batch.py --client 2.1.332   # another client version (installed like the e2e one)

Part 1, the real client (tests/e2e's pinned Claude Code against the fake API):
one turn of four parallel Reads (three files and a missing one), then an
answer; and once a turn with a single Read. omcm is installed as a user installs it (every bundled plugin; `claude`
on PATH, so the version-gated events a plugin answers are registered), and a
PostToolBatch hook is added that runs omcm's own hook command for that event,
as `omcm install` would register it if a plugin answered it; its payload is
also kept, to see what a batch carries. From the client's debug log: how many
hook processes one batch costs, each one's duration (spawn to exit, as the
client times it), and the batch's hook wall time (first start to last exit).

Part 2, the dispatcher alone (real `omcm hook` processes through the command
`omcm install` registers, the warm daemon running): four PostToolUse calls for
the four Reads, one after another, against one PostToolBatch call carrying all
four, with (a) only post-tool-observer and tool-counter loaded and (b) every
bundled plugin; and the observer's own share (PostToolUse with the observer
loaded minus with only tool-counter, which does nothing at PostToolUse).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))

from claude_client import CLIENT_VERSION, install_client  # noqa: E402
from e2e_harness import Harness  # noqa: E402
from fake_anthropic import read, text  # noqa: E402
from hook_latency import timed  # noqa: E402

SESSION = "b3nch000-0000-4000-8000-00000000ba7c"
POST_EVENTS = ("PostToolUse", "PostToolUseFailure", "PostToolBatch")


def percentile(values: list, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def stats(values: list) -> dict:
    return {"n": len(values), "median": round(statistics.median(values), 1), "p95": round(percentile(values, 0.95), 1)}


def _iso_ms(at: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000


# --- part 1: the real client -------------------------------------------------------------------


def real_client(runs: int, work: Path, version: str) -> dict:
    claude = install_client(version)
    env = {"PATH": f"{claude.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}
    harness = Harness(work / "client", claude, extra_env=env)
    try:
        settings = json.loads(harness.settings_path.read_text())
        post_command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        keep = work / "batch-payloads.jsonl"
        argv = shlex.split(post_command)
        batch_command = shlex.join([*argv[:-1], "PostToolBatch"])
        # Keep the payload too: a tee into a file, then omcm's own hook command on the same stdin.
        harness.add_hook("PostToolBatch", f"tee -a {shlex.quote(str(keep))} | {batch_command}")
        files = []
        for n in range(3):
            path = harness.project / f"module_{n}.py"
            path.write_text("".join(f"def f{n}_{i}():\n    return {i}\n" for i in range(60)))
            files.append(path)
        files.append(harness.project / "missing.py")
        per_batch: dict = {"processes": [], "post_tool_ms": [], "batch_ms": [], "wall_ms": [], "wall_without_batch": []}
        for _ in range(runs + 1):  # the first starts the daemon: dropped
            run = harness.session([[read(p) for p in files], [text("read them")]], prompt="read the modules")
            if run.returncode != 0 or run.timed_out:
                raise SystemExit(f"a session failed:\n{run.explain()}")
            post = [t for t in run.hook_durations() if t.event in POST_EVENTS and t.ms is not None]
            per_batch["processes"].append(len(post))
            per_batch["post_tool_ms"].extend(t.ms for t in post if t.event != "PostToolBatch")
            per_batch["batch_ms"].extend(t.ms for t in post if t.event == "PostToolBatch")
            spans = [(_iso_ms(t.at) - t.ms, _iso_ms(t.at)) for t in post]
            per_batch["wall_ms"].append(max(e for _, e in spans) - min(s for s, _ in spans))
            tools = [(s, e) for (s, e), t in zip(spans, post, strict=True) if t.event != "PostToolBatch"]
            per_batch["wall_without_batch"].append(max(e for _, e in tools) - min(s for s, _ in tools))
        for key in per_batch:
            per_batch[key] = (
                per_batch[key][1:] if key in ("processes", "wall_ms", "wall_without_batch") else per_batch[key]
            )
        batches = [json.loads(line) for line in keep.read_text().splitlines()]
        shape = batches[-1]
        # A turn with a single tool call: does the client fire PostToolBatch for it too?
        single = harness.session([[read(files[0])], [text("read it")]], prompt="read one module")
        single_hooks = [t.event for t in single.hook_durations() if t.event in POST_EVENTS]
        return {
            "client": version,
            "sessions": runs,
            "hook processes per batch": per_batch["processes"],
            "PostToolUse/Failure each": stats(per_batch["post_tool_ms"]),
            "PostToolBatch (omcm, no plugin answers it)": stats(per_batch["batch_ms"]),
            "post-tool hooks wall, today": stats(per_batch["wall_without_batch"]),
            "post-tool hooks wall, with PostToolBatch": stats(per_batch["wall_ms"]),
            "post-tool hooks for a single Read": single_hooks,
            "batch payload keys": sorted(shape),
            "batch tool_calls keys": [sorted(c) for c in shape.get("tool_calls", [])],
            "batch payload": shape,
        }
    finally:
        harness.close()


# --- part 2: the dispatcher alone --------------------------------------------------------------


def payloads(project: Path) -> tuple[list[bytes], bytes]:
    common = {"session_id": SESSION, "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    calls = []
    for n in range(4):
        path = project / f"module_{n}.py"
        content = "".join(f"def f{n}_{i}():\n    return {i}\n" for i in range(60))
        calls.append(
            {
                "tool_name": "Read",
                "tool_input": {"file_path": str(path)},
                "tool_use_id": f"toolu_bench{n}",
                "tool_response": {
                    "type": "text",
                    "file": {
                        "filePath": str(path),
                        "content": content,
                        "numLines": 120,
                        "startLine": 1,
                        "totalLines": 120,
                    },
                },
            }
        )
    singles = [
        json.dumps(
            {**common, "permission_mode": "default", "hook_event_name": "PostToolUse", **c, "duration_ms": 3}
        ).encode()
        for c in calls
    ]
    batch = json.dumps(
        {**common, "permission_mode": "default", "hook_event_name": "PostToolBatch", "tool_calls": calls}
    )
    return singles, batch.encode()


def dispatcher(rounds: int, work: Path, version: str) -> dict:
    claude = install_client(version)
    env = {"PATH": f"{claude.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}
    harness = Harness(work / "dispatcher", claude, extra_env=env)
    try:
        post_command = json.loads(harness.settings_path.read_text())["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        argv = shlex.split(post_command)[:-1]
        singles, batch = payloads(harness.project)
        base = {**harness.env(), "CLAUDE_PROJECT_DIR": str(harness.project)}
        loads = {
            "observer + tool-counter": "post-tool-observer,tool-counter",
            "tool-counter only": "tool-counter",
            "every bundled plugin": None,
        }
        times: dict = {}
        for _ in range(rounds + 2):  # the first two warm each daemon: dropped
            for name, load in loads.items():
                env = {k: v for k, v in base.items() if k != "OMCM_LOAD_PLUGINS"}
                if load:
                    env["OMCM_LOAD_PLUGINS"] = load
                started = time.perf_counter()
                each = [timed([*argv, "PostToolUse"], raw, env) for raw in singles]
                four = (time.perf_counter() - started) * 1000
                one = timed([*argv, "PostToolBatch"], batch, env)
                times.setdefault(f"{name}: 4 x PostToolUse", []).append(four)
                times.setdefault(f"{name}: PostToolUse each", []).extend(each)
                times.setdefault(f"{name}: 1 x PostToolBatch", []).append(one)
        return {name: stats(values[2:] if "each" not in name else values[8:]) for name, values in times.items()}
    finally:
        harness.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8, help="real-client sessions")
    parser.add_argument("--rounds", type=int, default=40, help="rounds of hook calls per arrangement")
    parser.add_argument("--client", default=CLIENT_VERSION, help="Claude Code version (default: the e2e pin)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="omcm-batch-bench-") as tmp:
        result = {
            "cores": os.cpu_count(),
            "load_average_before": round(load, 1),
            "real client": real_client(args.runs, Path(tmp), args.client),
            "dispatcher": dispatcher(args.rounds, Path(tmp), args.client),
            "load_average_after": round(os.getloadavg()[0], 1),
        }
    shown = {**result, "real client": {k: v for k, v in result["real client"].items() if k != "batch payload"}}
    print(json.dumps(shown, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
