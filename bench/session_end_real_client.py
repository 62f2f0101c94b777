"""Short sessions of the real client on a busy machine: does its SessionEnd hook get cancelled?

    .venv/bin/python bench/session_end_real_client.py --code /tmp/old/omcm_core   # before (a copy) and after
    .venv/bin/python bench/session_end_real_client.py --runs 8 --busy 2

Claude Code gives SessionEnd hooks 1.5 s in all and prints "SessionEnd hook
... failed: Hook cancelled" when they overrun. `claude mcp list` and a one-turn
`claude -p` end before any warm dispatcher exists, so omcm's SessionEnd runs
cold. Each variant is omcm installed with `omcm install` (the Python client, so
the registered command names the omcm_core folder it runs; `--code` points the
"before" variant's commands at a copy of another revision's omcm_core), in its own
HOME against the fake API, with ``--busy`` spinning processes per core; the
dispatcher is stopped before every run. Printed per variant and command: runs,
how many printed "Hook cancelled", and the median wall time of the command.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from claude_client import install_client  # noqa: E402
from e2e_harness import Harness  # noqa: E402
from fake_anthropic import text  # noqa: E402

CANCELLED = "Hook cancelled"


def point_at(harness: Harness, code: Path) -> None:
    """Make every registered command run ``code`` (another omcm_core folder) instead of this checkout's."""
    here = str(ROOT / "omcm_core")
    settings = harness.settings_path.read_text()
    assert here in settings, "the registered commands do not name this checkout's omcm_core"
    harness.settings_path.write_text(settings.replace(here, str(code)))


def mcp_list(harness: Harness, claude: Path) -> tuple[bool, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [str(claude), "mcp", "list"],
        env=harness.env(),
        cwd=harness.project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return CANCELLED in done.stdout + done.stderr, time.perf_counter() - started


def one_turn(harness: Harness) -> tuple[bool, float]:
    started = time.perf_counter()
    run = harness.session([[text("ok")]], prompt="hi")
    said = run.stdout + run.stderr + (run.debug_log.read_text(errors="replace") if run.debug_log.exists() else "")
    return CANCELLED in said, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2, help="busy loops per core")
    parser.add_argument("--code", type=Path, help="another revision's omcm_core folder: the 'before' variant")
    args = parser.parse_args()
    claude = install_client()
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy * (os.cpu_count() or 1))
    ]
    results: dict = {}
    try:
        with tempfile.TemporaryDirectory(prefix="omcm-session-end-") as work:
            variants = {"this checkout": None} | ({f"before ({args.code})": args.code} if args.code else {})
            for name, code in variants.items():
                harness = Harness(Path(work) / name.split()[0], claude, extra_env={"OMCM_NATIVE_CLIENT": "0"})
                if code is not None:
                    point_at(harness, code)
                for command, run in (
                    ("claude mcp list", lambda h=harness: mcp_list(h, claude)),
                    ("claude -p", lambda h=harness: one_turn(h)),
                ):
                    outcomes = []
                    for _ in range(args.runs):
                        harness.close()  # no warm dispatcher: every SessionEnd is cold
                        outcomes.append(run())
                    cancelled = sum(c for c, _ in outcomes)
                    median = statistics.median(t for _, t in outcomes)
                    results[f"{name}: {command}"] = {"runs": len(outcomes), "cancelled": cancelled, "median_s": median}
                    print(
                        f"{name + ': ' + command:<60} runs {len(outcomes)}  'Hook cancelled' {cancelled}  median {median:5.1f} s"
                    )
                harness.close()
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    print(json.dumps({"cores": os.cpu_count(), "busy": len(spinners), "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
