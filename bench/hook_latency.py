"""Hook latency: what one `omcm hook` costs compared with starting Python at all.

    python bench/hook_latency.py                 # builds bench/.work/venv (real wheels), a populated store, measures
    python bench/hook_latency.py --rounds 60 --empty-only
    python bench/hook_latency.py --venv /path/to/venv --skip-populate

Every round runs, interleaved so that machine load hits all of them alike:
the bare interpreter (`python3 -c pass`: the venv's base binary, not a pyenv
shim, and the distribution's /usr/bin/python3, the ratios' base),
then `omcm hook` for PreToolUse, PostToolUse and SessionStart, through the
registered fast command (`python -S .../fast_hook.py EVENT`) with the warm
dispatcher, and through the in-process path (`OMCM_DAEMON=0`, the "before").
Peak memory is each hook process's own max RSS (wait4). It prints medians, p95
and ratios to the bare interpreter, for an empty store and for a populated one
(1,000,000 observations, 100,000 error_kb rows and 1,000,000 guide events, a
90 KB memory.md).
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
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "bench" / ".work"
SESSION = "b3nch000-0000-4000-8000-000000000001"


def build_venv(path: Path) -> Path:
    python = path / "bin" / "python"
    if python.exists():
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["--upgrade", "pip", "setuptools", "wheel"], check=True)
    plugins = sorted(str(p) for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
    subprocess.run(pip + [str(ROOT), *plugins], check=True)
    return python


def real_python() -> str:
    """The interpreter binary behind `python3` (pyenv shims add ~70 ms of bash)."""
    return os.path.realpath(sys._base_executable if hasattr(sys, "_base_executable") else sys.executable)


def payloads(project: Path) -> dict[str, bytes]:
    common = {"session_id": SESSION, "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    pre = {
        **common,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(project / "src" / "app.py"), "old_string": "a", "new_string": "b"},
        "tool_use_id": "toolu_bench",
    }
    post = {
        **common,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q"},
        "tool_response": {"stdout": "12 passed in 0.41s\n" * 20, "stderr": "", "interrupted": False, "isImage": False},
        "tool_use_id": "toolu_bench",
        "duration_ms": 410,
    }
    start = {**common, "hook_event_name": "SessionStart", "source": "startup"}
    return {name: json.dumps(p).encode() for name, p in (("PreToolUse", pre), ("PostToolUse", post), ("SessionStart", start))}


def timed(argv: list[str], stdin: bytes, env: dict) -> tuple[float, int]:
    """(milliseconds, peak RSS in KB) of one child process."""
    read_fd, write_fd = os.pipe()
    devnull = os.open(os.devnull, os.O_WRONLY)
    started = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[
        (os.POSIX_SPAWN_DUP2, read_fd, 0),
        (os.POSIX_SPAWN_DUP2, devnull, 1),
        (os.POSIX_SPAWN_DUP2, devnull, 2),
        (os.POSIX_SPAWN_CLOSE, write_fd),
    ])
    os.close(read_fd)
    os.write(write_fd, stdin)
    os.close(write_fd)
    _pid, _status, usage = os.wait4(pid, 0)
    elapsed = (time.perf_counter() - started) * 1000
    os.close(devnull)
    return elapsed, usage.ru_maxrss


def populate(python: Path, home: Path, project: Path) -> None:
    """Fill the store through each plugin's own bench builder, and write a 90 KB memory.md."""
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    line = "- 2026-11-20: decided to keep the request handler small; tests cover the error paths.\n"
    (memory / "memory.md").write_text(line * (90_000 // len(line)))
    script = ROOT / "bench" / "populate_store.py"
    subprocess.run([str(python), str(script), str(home)], check=True)


def measure(python: Path, home: Path, project: Path, rounds: int) -> dict:
    bare = real_python()
    find = "from omcm_core.install import fast_hook_argv; print(fast_hook_argv('')[2])"
    client = subprocess.check_output([str(python), "-I", "-c", find], text=True).strip()
    data = payloads(project)
    base_env = {**os.environ, "OMCM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
    base_env.pop("OMCM_LOAD_PLUGINS", None)
    warm_env = {**base_env, "OMCM_DAEMON": "1"}
    cold_env = {**base_env, "OMCM_DAEMON": "0"}
    # Start the warm dispatcher and let it load.
    timed([str(python), "-S", client, "PreToolUse"], data["PreToolUse"], warm_env)
    time.sleep(3)
    results: dict[str, list[tuple[float, int]]] = {}
    for _ in range(rounds):
        for event, raw in data.items():
            results.setdefault("python3 -c pass", []).append(timed([bare, "-c", "pass"], b"", base_env))
            results.setdefault("python3 -S -c pass", []).append(timed([bare, "-S", "-c", "pass"], b"", base_env))
            if os.path.exists("/usr/bin/python3"):  # the distribution's python3, as most users have it
                results.setdefault("/usr/bin/python3 -c pass", []).append(timed(["/usr/bin/python3", "-c", "pass"], b"", base_env))
            results.setdefault(f"{event} warm", []).append(timed([str(python), "-S", client, event], raw, warm_env))
            results.setdefault(f"{event} in-process", []).append(timed([str(python), "-S", client, event], raw, cold_env))
    subprocess.run([str(python), "-m", "omcm_core", "daemon", "stop"], env=warm_env, capture_output=True)
    baseline = "/usr/bin/python3 -c pass" if "/usr/bin/python3 -c pass" in results else "python3 -c pass"
    bare_median = statistics.median(ms for ms, _ in results[baseline])
    summary = {}
    for name, samples in results.items():
        times = sorted(ms for ms, _ in samples)
        summary[name] = {
            "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
            "ratio": round(statistics.median(times) / bare_median, 2),
            "peak_rss_mb": round(max(rss for _, rss in samples) / 1024, 1),
        }
    return summary


def print_table(title: str, summary: dict) -> None:
    print(f"\n{title}")
    print(f"{'':<26}{'median ms':>10}{'p95 ms':>10}{'x base':>8}{'peak MB':>9}   (x base: ratio to /usr/bin/python3 -c pass)")
    for name, row in summary.items():
        print(f"{name:<26}{row['median_ms']:>10}{row['p95_ms']:>10}{row['ratio']:>8}{row['peak_rss_mb']:>9}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=WORK / "venv")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--empty-only", action="store_true")
    parser.add_argument("--skip-populate", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    python = build_venv(args.venv)
    figures = {}
    with tempfile.TemporaryDirectory(prefix="omcm-bench-") as tmp:
        for label in ("empty store", "populated store"):
            if label == "populated store" and args.empty_only:
                continue
            home, project = Path(tmp) / label.replace(" ", "-") / "home", Path(tmp) / label.replace(" ", "-") / "project"
            (project / "src").mkdir(parents=True)
            if label == "populated store" and not args.skip_populate:
                started = time.monotonic()
                populate(python, home, project)
                print(f"populated in {time.monotonic() - started:.0f} s")
            figures[label] = measure(python, home, project, args.rounds)
            print_table(f"{label} ({args.rounds} interleaved rounds)", figures[label])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
