"""What omcm costs a script that makes 1,000 tool calls (Claude Code's Code Mode), PreToolUse each.

``omcm install`` writes a throw-away settings.json for the chosen plugins; then
1,000 tool calls (a mix of Read, Bash, Grep, Glob and Edit, as a script
exploring a code base makes them) are each checked against the registered
PreToolUse ``matcher`` as Claude Code checks it, and when it matches, the
registered command runs through ``sh -c`` with a real payload, one after the
other, the warm dispatcher running. The same 1,000 calls then run a bare
``python3 -S -c pass`` each (what any Python hook costs), and with no hook at
all. Prints calls that started a process, wall time and cost per call.

    python bench/code_mode_calls.py --plugins pre-tool-guide --calls 1000
    python bench/code_mode_calls.py --plugins pre-tool-guide,post-tool-observer,tool-counter
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIX = [("Read", 35), ("Grep", 20), ("Glob", 15), ("Bash", 20), ("Edit", 10)]


def matches(matcher: str | None, tool: str) -> bool:
    """Claude Code's rule (docs "Matcher patterns"): all, an exact list, else an unanchored regex."""
    if matcher in (None, "", "*"):
        return True
    if re.fullmatch(r"[A-Za-z0-9_|, -]+", matcher):
        return tool in {part.strip() for part in re.split(r"[|,]", matcher)}
    return re.search(matcher, tool) is not None


def payload(tool: str, n: int, project: Path) -> bytes:
    inputs = {
        "Read": {"file_path": str(project / f"src/m{n % 50}.py")},
        "Grep": {"pattern": f"def f{n}", "path": str(project)},
        "Glob": {"pattern": "**/*.py"},
        "Bash": {"command": f"ls src/m{n % 50}.py"},
        "Edit": {"file_path": str(project / f"src/m{n % 50}.py"), "old_string": "a", "new_string": "b"},
    }
    return json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "code-mode-bench",
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "permission_mode": "default",
            "tool_name": tool,
            "tool_input": inputs[tool],
            "tool_use_id": f"toolu_bench_{n:05d}",
        }
    ).encode()


def run_all(calls: list[str], command: str | None, matcher: str | None, env: dict, project: Path) -> tuple[int, float]:
    started, begin = 0, time.perf_counter()
    for n, tool in enumerate(calls):
        if command is None or not matches(matcher, tool):
            continue
        started += 1
        subprocess.run(
            ["sh", "-c", command], input=payload(tool, n, project), capture_output=True, env=env, cwd=project
        )
    return started, time.perf_counter() - begin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--plugins", default="pre-tool-guide")
    args = parser.parse_args()
    rng = random.Random(35)
    calls = rng.choices([t for t, _ in MIX], weights=[w for _, w in MIX], k=args.calls)
    work = Path(tempfile.mkdtemp(prefix="omcm-code-mode-"))
    project = work / "project"
    (project / "src").mkdir(parents=True)
    env = {
        **os.environ,
        "OMCM_HOME": str(work / "home"),
        "OMCM_LOAD_PLUGINS": args.plugins,
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
    }
    try:
        settings = work / "settings.json"
        subprocess.run(
            [sys.executable, "-m", "omcm_core", "install", "--settings", str(settings)],
            env=env,
            check=True,
            capture_output=True,
        )
        (group,) = json.loads(settings.read_text())["hooks"]["PreToolUse"]
        command, matcher = group["hooks"][0]["command"], group.get("matcher")
        run_all(calls[:20], command, matcher, env, project)  # start and warm the dispatcher
        rows = [
            ("omcm, with the matcher install wrote", command, matcher),
            ("omcm, no matcher (every call)", command, None),
            ("bare `python3 -S -c pass` on every call", "/usr/bin/python3 -S -c pass", None),
            ("no hook", None, None),
        ]
        load = os.getloadavg()[0]
        print(f"{args.calls} calls ({', '.join(f'{t} {calls.count(t)}' for t, _ in MIX)}), plugins {args.plugins}")
        print(f"registered matcher: {matcher!r}; load average {load:.1f}, {os.cpu_count()} cpus")
        for label, cmd, match in rows:
            started, seconds = run_all(calls, cmd, match, env, project)
            print(
                f"{label:<44} processes {started:>5}  wall {seconds:7.2f} s  {seconds / args.calls * 1000:6.2f} ms/call"
            )
    finally:
        subprocess.run([sys.executable, "-m", "omcm_core", "daemon", "stop"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
