"""Hook latency: what one `omcm hook` costs compared with starting Python at all.

    python bench/hook_latency.py                 # builds bench/.work/venv (real wheels), a populated store, measures
    python bench/hook_latency.py --rounds 60 --empty-only
    python bench/hook_latency.py --venv /path/to/venv --skip-populate

Every round runs, interleaved so that machine load hits all of them alike:
the bare interpreter (`python3 -c pass`: the venv's base binary, not a pyenv
shim, and the distribution's /usr/bin/python3, the ratios' base),
then `omcm hook` for PreToolUse, PostToolUse and SessionStart, through the
registered fast command (`python -S .../fast_hook.py EVENT`) with the warm
dispatcher, through the in-process path (`OMCM_DAEMON=0`), and cold: no
dispatcher running (stopped before the call, untimed), so the call is answered
in process and starts one for the next call (the bench then waits for it, untimed);
PreToolUse also through the `omcm hook` console script and the Claude Code
plugin's launcher (`bin/omcm-hook`, a shell script that runs it).
Peak memory is each hook process's own max RSS (GNU time, three runs), and the warm
dispatcher's peak resident memory (VmHWM) after the rounds. It prints medians, p95
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


def build_venv(path: Path, reinstall: bool = True) -> Path:
    python = path / "bin" / "python"
    if python.exists() and not reinstall:
        return python
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    plugins = sorted(str(p) for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
    if python.exists():
        # Reinstall this checkout's code: a venv left from an earlier run would measure old code.
        subprocess.run(pip + ["--no-deps", "--force-reinstall", str(ROOT), *plugins], check=True)
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    subprocess.run(pip + ["--upgrade", "pip", "setuptools", "wheel"], check=True)
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
    return {
        name: json.dumps(p).encode()
        for name, p in (("PreToolUse", pre), ("PostToolUse", post), ("SessionStart", start))
    }


def timed(argv: list[str], stdin: bytes, env: dict) -> float:
    """Milliseconds one child process takes, stdin fed and output discarded."""
    read_fd, write_fd = os.pipe()
    devnull = os.open(os.devnull, os.O_WRONLY)
    started = time.perf_counter()
    pid = os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, read_fd, 0),
            (os.POSIX_SPAWN_DUP2, devnull, 1),
            (os.POSIX_SPAWN_DUP2, devnull, 2),
            (os.POSIX_SPAWN_CLOSE, write_fd),
        ],
    )
    os.close(read_fd)
    os.write(write_fd, stdin)
    os.close(write_fd)
    os.waitpid(pid, 0)
    elapsed = (time.perf_counter() - started) * 1000
    os.close(devnull)
    return elapsed


def peak_rss_mb(argv: list[str], stdin: bytes, env: dict) -> float | None:
    """One child's peak resident memory, through GNU time (None without /usr/bin/time).

    Not from our own wait4: Linux carries the spawning process's peak RSS over
    into the child's, so every figure would read at least this script's size.
    """
    if not os.path.exists("/usr/bin/time"):
        return None
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], input=stdin, env=env, capture_output=True)
        return round(int(out.read().split()[-1]) / 1024, 1)


def populate_memory(project: Path) -> None:
    """A 90 KB memory.md, as a long-running project has."""
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    line = "- 2026-11-20: decided to keep the request handler small; tests cover the error paths.\n"
    (memory / "memory.md").write_text(line * (90_000 // len(line)))


def populate(python: Path, home: Path, project: Path) -> None:
    """Fill the store through each plugin's own bench builder, and write a 90 KB memory.md."""
    populate_memory(project)
    script = ROOT / "bench" / "populate_store.py"
    subprocess.run([str(python), str(script), str(home)], check=True)


def daemon_memory_mb(home: Path) -> dict:
    """Peak and current resident memory of the warm dispatcher serving ``home`` (Linux /proc)."""
    marker = f"OMCM_HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if (
                b"daemon" not in argv
                or b"run" not in argv
                or marker not in (entry / "environ").read_bytes().split(b"\0")
            ):
                continue
            fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue
        return {key: round(int(fields[key].split()[0]) / 1024, 1) for key in ("VmHWM", "VmRSS")}
    return {}


def daemon_command(python: Path, env: dict, action: str) -> str:
    # From /: in this checkout `-m omcm_core` would import the checkout's code, which names another socket.
    argv = [str(python), "-m", "omcm_core", "daemon", action]
    return subprocess.run(argv, env=env, capture_output=True, text=True, cwd="/").stdout


def wait_for_daemon(python: Path, env: dict, primes: list) -> None:
    """Until the dispatcher a cold call started answers; then untimed calls, two of each event.

    Without them the warm rows after a cold one would time the new dispatcher's first call of
    their event (its plugins' first use: lazy imports, first queries), not a warm call.
    """
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "running" not in daemon_command(python, env, "status"):
        time.sleep(0.2)
    for prime in primes + primes:
        timed(*prime)
    time.sleep(0.3)


def fast_hook(python: Path) -> str:
    find = "from omcm_core._cli.install import fast_hook_argv; print(fast_hook_argv('')[2])"
    return subprocess.check_output([str(python), "-I", "-c", find], text=True).strip()


def measure(python: Path, home: Path, project: Path, rounds: int, before: Path | None = None) -> dict:
    bare = real_python()
    client = fast_hook(python)
    data = payloads(project)
    base_env = {**os.environ, "OMCM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
    base_env.pop("OMCM_LOAD_PLUGINS", None)
    warm_env = {**base_env, "OMCM_DAEMON": "1"}
    cold_env = {**base_env, "OMCM_DAEMON": "0"}
    launcher_env = {**warm_env, "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # Start the warm dispatcher and let it load.
    timed([str(python), "-S", client, "PreToolUse"], data["PreToolUse"], warm_env)
    time.sleep(3)
    # One round, in the order it runs: each event's hooks between fresh bare interpreters.
    plan: list[tuple[str, list[str], bytes, dict]] = []
    stop_first: dict[str, Path] = {}  # cold rows -> their interpreter: its dispatcher is stopped before, awaited after
    for event, raw in data.items():
        plan.append(("python3 -c pass", [bare, "-c", "pass"], b"", base_env))
        plan.append(("python3 -S -c pass", [bare, "-S", "-c", "pass"], b"", base_env))
        if os.path.exists("/usr/bin/python3"):  # the distribution's python3, as most users have it
            plan.append(("/usr/bin/python3 -c pass", ["/usr/bin/python3", "-c", "pass"], b"", base_env))
        plan.append((f"{event} warm", [str(python), "-S", client, event], raw, warm_env))
        plan.append((f"{event} in-process", [str(python), "-S", client, event], raw, cold_env))
        if event == "PreToolUse":  # the other two ways in: `omcm hook`, and the Claude Code plugin's launcher
            plan.append(("PreToolUse omcm hook", [str(python.with_name("omcm")), "hook", event], raw, warm_env))
            plan.append(("PreToolUse plugin launcher", [str(ROOT / "bin" / "omcm-hook"), event], raw, launcher_env))
        plan.append((f"{event} cold", [str(python), "-S", client, event], raw, warm_env))
        stop_first[f"{event} cold"] = python
        if before is not None:  # another installation (an older checkout), same store, same rounds
            old = fast_hook(before)
            plan.append((f"{event} in-process, before", [str(before), "-S", old, event], raw, cold_env))
            plan.append((f"{event} cold, before", [str(before), "-S", old, event], raw, warm_env))
            stop_first[f"{event} cold, before"] = before
    times: dict[str, list[float]] = {name: [] for name, *_ in plan}
    for _ in range(rounds):
        for name, *command in plan:
            if name in stop_first:
                daemon_command(stop_first[name], warm_env, "stop")
            times[name].append(timed(*command))
            if name in stop_first:
                interpreter = stop_first[name]
                argv = command[0]
                primes = [([*argv[:-1], each], payload, warm_env) for each, payload in data.items()]
                wait_for_daemon(interpreter, warm_env, primes)
                if stop_first[name] != python:  # the other installation's dispatcher has its own socket
                    daemon_command(stop_first[name], warm_env, "stop")
    first = {name: command for name, *command in reversed(plan) if name not in stop_first}
    peaks = {name: max(peak_rss_mb(*command) or 0 for _ in range(3)) for name, command in first.items()}
    daemon_mb = daemon_memory_mb(home)
    daemon_command(python, warm_env, "stop")
    baseline = "/usr/bin/python3 -c pass" if "/usr/bin/python3 -c pass" in times else "python3 -c pass"
    bare_median = statistics.median(times[baseline])
    summary = {}
    for name, samples in times.items():
        samples.sort()
        summary[name] = {
            "median_ms": round(statistics.median(samples), 2),
            "p95_ms": round(samples[int(len(samples) * 0.95) - 1], 2),
            "ratio": round(statistics.median(samples) / bare_median, 2),
            "peak_rss_mb": peaks.get(name) or "-",
        }
    if daemon_mb:
        summary["warm dispatcher (daemon)"] = {"peak_rss_mb": daemon_mb["VmHWM"], "rss_mb": daemon_mb["VmRSS"]}
    return summary


def print_table(title: str, summary: dict) -> None:
    print(f"\n{title}")
    print(
        f"{'':<26}{'median ms':>10}{'p95 ms':>10}{'x base':>8}{'peak MB':>9}   (x base: ratio to /usr/bin/python3 -c pass)"
    )
    for name, row in summary.items():
        cells = [row.get(key, "-") for key in ("median_ms", "p95_ms", "ratio", "peak_rss_mb")]
        print(f"{name:<26}{cells[0]:>10}{cells[1]:>10}{cells[2]:>8}{cells[3]:>9}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=WORK / "venv")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--empty-only", action="store_true")
    parser.add_argument("--populated-only", action="store_true")
    parser.add_argument("--skip-populate", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--no-reinstall", action="store_true", help="measure the venv's code as it is")
    parser.add_argument("--before-venv", type=Path, help="also time cold calls of the omcm installed in this venv")
    parser.add_argument(
        "--populated-home",
        type=Path,
        help="an OMCM_HOME already filled by bench/populate_store.py (saves building one)",
    )
    args = parser.parse_args()
    python = build_venv(args.venv, not args.no_reinstall)
    figures = {}
    with tempfile.TemporaryDirectory(prefix="omcm-bench-") as tmp:
        for label in ("empty store", "populated store"):
            if (label == "populated store" and args.empty_only) or (label == "empty store" and args.populated_only):
                continue
            home, project = (
                Path(tmp) / label.replace(" ", "-") / "home",
                Path(tmp) / label.replace(" ", "-") / "project",
            )
            (project / "src").mkdir(parents=True)
            if label == "populated store" and args.populated_home:
                home = args.populated_home
                populate_memory(project)
            elif label == "populated store" and not args.skip_populate:
                started = time.monotonic()
                populate(python, home, project)
                print(f"populated in {time.monotonic() - started:.0f} s")
            figures[label] = measure(python, home, project, args.rounds, args.before_venv)
            print_table(f"{label} ({args.rounds} interleaved rounds)", figures[label])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
