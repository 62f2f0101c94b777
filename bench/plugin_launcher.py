"""What bin/omcm-hook (the plugin route's launcher) adds to every hook call, before and after a change.

    .venv/bin/python bench/plugin_launcher.py                    # this checkout's launcher
    .venv/bin/python bench/plugin_launcher.py --old 3ada415      # and the launcher of a git revision

The launcher runs on every hook event before omcm's own client. To see its cost
alone, the environment it finds is a stand-in whose Python is ``/bin/true``:
each call is the shell, the launcher's checks and one exec. Printed: the median
and p90 wall time per call for PreToolUse (the common path) and SessionStart
(which also looks for sources newer than the environment's stamp, with one
``find``), next to ``sh -c 'exec /bin/true'``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def plugin(folder: Path, launcher: str) -> tuple[Path, Path]:
    root, data = folder / "root", folder / "data"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "omcm-hook").write_text(launcher)
    shutil.copytree(ROOT / ".claude-plugin", root / ".claude-plugin")
    for name in ("omcm_core", "plugins"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    venv = data / "venv-1"
    venv.mkdir(parents=True)
    os.chmod(data, 0o700)
    version = next(
        line for line in (root / ".claude-plugin" / "plugin.json").read_text().splitlines() if "version" in line
    )
    (venv / ".omcm-stamp").write_text(f"{root} {version}\n")
    (venv / ".omcm-fast-hook").write_text(f"{venv / '.omcm-stamp'}\n")  # any file: /bin/true ignores it
    (venv / ".omcm-python").write_text("/bin/true\n")
    (data / "venv").symlink_to("venv-1")
    return root, data


def timed(argv: list[str], env: dict, runs: int) -> list[float]:
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, input=payload.encode(), capture_output=True, env=env, check=True)
        times.append(time.perf_counter() - started)
    return sorted(times)


def show(name: str, times: list[float]) -> float:
    p50, p90 = statistics.median(times), times[int(len(times) * 0.9)]
    print(f"{name:<40} p50 {p50 * 1000:6.2f} ms  p90 {p90 * 1000:6.2f} ms")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--old", help="a git revision whose bin/omcm-hook is measured too")
    args = parser.parse_args()
    launchers = {"this checkout": (ROOT / "bin" / "omcm-hook").read_text()}
    if args.old:
        shown = subprocess.run(["git", "show", f"{args.old}:bin/omcm-hook"], cwd=ROOT, capture_output=True, text=True)
        launchers[args.old] = shown.stdout
    base = {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir()}
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, {args.runs} calls each, interleaved")
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"sh -c 'exec /bin/true'": (["sh", "-c", "exec /bin/true"], base)}
        for name, text in launchers.items():
            root, data = plugin(Path(tmp) / name.replace(" ", "-"), text)
            env = base | {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)}
            for event in ("PreToolUse", "SessionStart"):
                variants[f"{name}: {event}"] = (["sh", str(root / "bin" / "omcm-hook"), event], env)
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.runs):  # round-robin: a burst of load hits every variant alike
            for name, (argv, env) in variants.items():
                times[name] += timed(argv, env, 1)
        for name, measured in times.items():
            show(name, sorted(measured))


if __name__ == "__main__":
    main()
