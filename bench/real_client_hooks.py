"""Hook latency as the real Claude Code client measures it: omcm against a bare Python hook.

    python bench/real_client_hooks.py              # 5 sessions each (the e2e client is installed if needed)
    python bench/real_client_hooks.py --runs 10 --json out.json

The same scripted session (a prompt, four tool calls: Bash, Read, Bash, Read,
then a final answer) runs N times with omcm's hooks installed the way a user
installs them (the native client, built by `omcm install`), N times installed
with the Python client (`OMCM_NATIVE_CLIENT=0`), and N times with every one of
those hook registrations pointing at a bare `python -S -c pass` (the same
interpreter omcm's Python hook command uses), interleaved so machine load hits
all alike. Claude Code times
every command hook in its debug log (spawn to exit, what the user waits for);
those durations are parsed (tests/e2e/hook_timing.py) and printed per event:
median, p95, and the ratio of the medians.

The first SessionStart of the omcm runs starts the warm dispatcher and is
reported on its own line ("cold"); every later call finds it running. The
fake API answers on 127.0.0.1 (tests/e2e/fake_anthropic.py), so nothing here
measures a model.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from claude_client import CLIENT_VERSION, install_client  # noqa: E402
from e2e_harness import Harness  # noqa: E402
from fake_anthropic import bash, read, text  # noqa: E402

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")


def script(project: Path) -> list:
    notes = project / "notes.txt"
    notes.write_text("".join(f"line {n}\n" for n in range(40)))
    return [[bash("echo one")], [read(notes)], [bash("ls -la")], [read(notes)], [text("done")]]


def bare_settings(omcm: Harness, bare: Harness) -> str:
    """Copy omcm's registrations into ``bare`` with each command replaced by a bare interpreter start."""
    settings = json.loads(omcm.settings_path.read_text())
    command = None
    for entries in settings.get("hooks", {}).values():
        for entry in entries:
            for hook in entry.get("hooks", []):
                command = command or f"{shlex.split(hook['command'])[0]} -S -c pass"
                hook["command"] = command
    bare.settings_path.write_text(json.dumps(settings, indent=2))
    return command or ""


def one_run(harness: Harness) -> list:
    run = harness.session(script(harness.project), prompt="look at notes.txt")
    if run.returncode != 0 or run.timed_out or run.turns_served != 5:
        raise SystemExit(f"a session failed:\n{run.explain()}")
    return [t for t in run.hook_durations() if t.ms is not None]


def percentile(values: list, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(timings: list) -> dict:
    by_event: dict = {}
    for t in timings:
        by_event.setdefault(t.event, []).append(t.ms)
    return {
        event: {"n": len(v), "median": statistics.median(v), "p95": percentile(v, 0.95), "samples": v}
        for event, v in by_event.items()
    }


def measure(runs: int, work: Path) -> dict:
    claude = install_client()
    load_before = os.getloadavg()[0]
    harnesses = {
        "native": Harness(work / "native", claude),  # `omcm install` with a C compiler here: the native client
        "python": Harness(work / "python", claude, extra_env={"OMCM_NATIVE_CLIENT": "0"}),
        "bare": Harness(work / "bare", claude, install_hooks=False),
    }
    try:
        bare_command = bare_settings(harnesses["python"], harnesses["bare"])
        names = list(harnesses)
        cold: dict = {}
        times: dict = {name: [] for name in names}
        for n in range(runs):
            # Rotate which goes first, so none always follows another's leftovers.
            for name in names[n % 3 :] + names[: n % 3]:
                timings = one_run(harnesses[name])
                if name != "bare" and name not in cold:
                    cold[name], timings = timings[0], timings[1:]  # the call that started the daemon
                times[name].extend(timings)
        return {
            "client": CLIENT_VERSION,
            "runs": runs,
            "bare_command": bare_command,
            "commands": {
                name: json.loads(h.settings_path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
                for name, h in harnesses.items()
                if name != "bare"
            },
            "cores": os.cpu_count(),
            "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
            "cold_first_call": {name: {"name": t.name, "ms": t.ms} for name, t in cold.items()},
            **{name: summary(values) for name, values in times.items()},
        }
    finally:
        for harness in harnesses.values():
            harness.close()


def report(result: dict) -> str:
    load = result["load_average"]
    lines = [
        f"Claude Code {result['client']}, {result['runs']} sessions each; bare hook: {result['bare_command']}",
        f"{result['cores']} cores, 1-minute load average {load[0]} before, {load[1]} after",
        f"{'event':<18}{'n':>4}  {'bare median':>12}{'p95':>7}  {'python median':>14}{'p95':>7}{'x':>6}"
        f"  {'native median':>14}{'p95':>7}{'x':>6}",
    ]
    for event in EVENTS:
        base, py, nat = (result[k].get(event) for k in ("bare", "python", "native"))
        if not base or not py or not nat:
            continue
        lines.append(
            f"{event:<18}{nat['n']:>4}  {base['median']:>10.0f}ms{base['p95']:>5.0f}ms  "
            f"{py['median']:>12.0f}ms{py['p95']:>5.0f}ms{py['median'] / base['median']:>5.2f}x  "
            f"{nat['median']:>12.0f}ms{nat['p95']:>5.0f}ms{nat['median'] / base['median']:>5.2f}x"
        )
    for name, cold in result["cold_first_call"].items():
        lines.append(f"cold ({name}): the first call ({cold['name']}, daemon not yet running) took {cold['ms']:.0f} ms")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="sessions per variant (default 5)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="omcm-real-client-") as work:
        result = measure(max(1, args.runs), Path(work))
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
