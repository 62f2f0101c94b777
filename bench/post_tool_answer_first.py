"""PostToolUse with a large output, warm, through the registered command: answered before it is recorded.

    python bench/post_tool_answer_first.py                      # this checkout, 30 rounds
    python bench/post_tool_answer_first.py --before 3ada415     # and the given commit, interleaved
    python bench/post_tool_answer_first.py --native             # through the native client (as installed)

Each round times, as separate processes, `/usr/bin/python3 -c pass` (the ratios' base) and
`python -S .../omcm_core/fast_hook.py PostToolUse` (what `omcm install` registers) with the warm
dispatcher and every installed plugin, for a Bash call with 100 KB of output (2,000 lines, a
secret among them) and with 20 lines; each call has its own tool_use_id. After the rounds it
checks that every call was recorded (the observer records after answering) and says how long
the last record took to land after its answer. ``--before REV`` runs the same rounds against
that commit's code (a git worktree put first on PYTHONPATH, its own dispatcher), interleaved.
``--native`` calls each variant through the native client built for it (what ``omcm install``
registers where a C compiler exists) instead of the Python client.
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
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hook_latency import daemon_command, timed  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SESSION = "b3nch000-0000-4000-8000-0000000000a1"


def payload(project: Path, lines: int) -> bytes:
    text = "".join(f"tests/test_module_{i:04}.py::test_case_{i:04} PASSED    [{i % 100:3}%]\n" for i in range(lines))
    if lines > 100:
        text = text[:30_000] + "export GITHUB_TOKEN=ghp_" + "Zq9Xw8Vu" * 5 + "\n" + text[30_000:]
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -v"},
            "tool_response": {"stdout": text, "stderr": "", "interrupted": False, "isImage": False},
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
            "duration_ms": 410,
        }
    ).encode()


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--before", help="a commit to measure too, interleaved")
    parser.add_argument("--native", action="store_true", help="through the native client, as installed")
    parser.add_argument(
        "--gap",
        type=float,
        default=0.0,
        help="seconds between calls (Claude Code's next hook comes after the model's turn)",
    )
    args = parser.parse_args()
    python = Path(sys.executable)
    work = Path(tempfile.mkdtemp(prefix="omcm-answer-first-"))
    project = work / "project"
    project.mkdir()
    variants = {"after": (ROOT, {})}
    if args.before:
        tree = work / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), args.before], check=True
        )
        paths = [str(tree)] + [str(p) for p in sorted((tree / "plugins").iterdir()) if (p / "pyproject.toml").exists()]
        variants["before"] = (tree, {"PYTHONPATH": os.pathsep.join(paths)})
    envs = {}
    for name, (tree, extra) in variants.items():
        env = {**os.environ, **extra, "OMCM_HOME": str(work / f"home-{name}"), "CLAUDE_PROJECT_DIR": str(project)}
        env.pop("OMCM_LOAD_PLUGINS", None)
        env["OMCM_DAEMON"] = "1"
        argv = [str(python), "-S", str(tree / "omcm_core" / "fast_hook.py"), "PostToolUse"]
        if args.native:  # built by that variant's own code, for its own installation (socket, client path)
            binary = work / f"omcm-hook-{name}"
            build = "import sys; from pathlib import Path; from omcm_core._cli import native_client as n; "
            build += "b, how = n.build(Path(sys.argv[1])); print(how) if b is None else None; sys.exit(b is None)"
            subprocess.run([str(python), "-c", build, str(binary)], env=env, cwd=tree, check=True)
            argv = [str(binary), "hook", "PostToolUse"]
        envs[name] = (argv, env)
        timed(argv, payload(project, 20), env)  # starts its dispatcher
    time.sleep(3)
    for argv, env in envs.values():  # warm: each plugin's first call untimed
        for _ in range(3):
            timed(argv, payload(project, 2000), env)
    base = ["/usr/bin/python3", "-c", "pass"]
    times: dict[str, list[float]] = {"python3 -c pass": []}
    for _ in range(args.rounds):
        times["python3 -c pass"].append(timed(base, b"", dict(os.environ)))
        for name, (argv, env) in envs.items():
            for lines, label in ((2000, "100 KB"), (20, "20 lines")):
                time.sleep(args.gap)
                times.setdefault(f"PostToolUse {label}, {name}", []).append(timed(argv, payload(project, lines), env))
    base_median = statistics.median(times["python3 -c pass"])
    print(
        f"{args.rounds} rounds, {'native' if args.native else 'Python'} client, gap {args.gap} s, load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print(f"{'':40} {'median':>8} {'p95':>8} {'x base':>7}")
    for label, values in times.items():
        median, p95 = quantiles(values)
        print(f"{label:40} {median:8.1f} {p95:8.1f} {median / base_median:7.2f}")
    for name, (argv, env) in envs.items():
        # Recorded after answering: the last call's row lands shortly after its answer.
        last = payload(project, 2000)
        use_id = json.loads(last)["tool_use_id"]
        answered = time.perf_counter()
        timed(argv, last, env)
        answered = time.perf_counter()
        db = Path(env["OMCM_HOME"]) / "omcm.db"
        landed = None
        while time.perf_counter() - answered < 10:
            with sqlite3.connect(db) as conn:
                if conn.execute("SELECT 1 FROM observer_events WHERE tool_use_id = ?", (use_id,)).fetchone():
                    landed = (time.perf_counter() - answered) * 1000
                    break
            time.sleep(0.002)
        with sqlite3.connect(db) as conn:
            (count,) = conn.execute("SELECT count(*) FROM observer_events").fetchone()
        expected = 1 + 3 + 2 * args.rounds + 1
        print(
            f"{name}: {count}/{expected} calls recorded; the last one's row landed {landed and round(landed, 1)} ms after its answer"
        )
        daemon_command(python, env, "stop")
    if args.before:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "before")], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
