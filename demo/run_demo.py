"""Drive `omcm hook` with a recorded session and show what every plugin said.

    python3 dev.py demo                   # demo/session.jsonl, our own small recorded session
    python3 dev.py demo --fixtures        # then also replay ../shared/fixtures transcripts, when present
    python3 dev.py demo --keep            # keep the demo's OMCM_HOME and project folder

Each payload goes to a real `omcm hook` process, exactly as Claude Code sends
it, through the fast registered command (`python -S .../fast_hook.py EVENT`, warm
dispatcher included). With OMCM_TRACE_PLUGINS=1 the dispatcher writes one line
per plugin to stderr; the demo prints those, then the one JSON object Claude
Code receives.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SESSION_ID = "d3m0c0de-5e55-4a1d-9b2c-000000000001"


def hook_argv(event: str) -> list[str]:
    from omcm_core._cli.install import fast_hook_argv

    return fast_hook_argv(event)


def make_project(root: Path) -> Path:
    """A small project with a memory.md big enough to rotate on the first check."""
    project = root / "project"
    (project / "app").mkdir(parents=True)
    (project / "app" / "server.py").write_text("PORT = 80\n")
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True)
    day = ["## 2026-11-{:02d}", "- Worked on the request handler and its tests.", "- Decided: keep the port in one constant."]
    lines = []
    for n in range(1, 23):
        lines.append(day[0].format(n))
        lines += [f"{line} (note {i} of day {n})" for i in range(60) for line in day[1:]]
    (memory / "memory.md").write_text("\n".join(lines) + "\n")
    return project


def substitute(line: str, project: Path, transcript: Path) -> dict:
    payload = json.loads(line)
    text = json.dumps(payload)
    text = text.replace("{{PROJECT}}", str(project)).replace("{{SESSION}}", SESSION_ID)
    text = text.replace("{{TRANSCRIPT}}", str(transcript))
    return json.loads(text)


def describe(payload: dict) -> str:
    event = payload["hook_event_name"]
    tool = payload.get("tool_name")
    detail = ""
    if tool:
        tool_input = payload.get("tool_input", {})
        detail = tool_input.get("command") or tool_input.get("file_path") or tool_input.get("pattern") or ""
        detail = f" {tool} {detail}".rstrip()
    return f"{event}{detail}"


def run_one(payload: dict, env: dict) -> tuple[list[dict], str, float]:
    started = time.perf_counter()
    proc = subprocess.run(
        hook_argv(payload["hook_event_name"]), input=json.dumps(payload).encode(), capture_output=True, env=env
    )
    elapsed = (time.perf_counter() - started) * 1000
    traces = []
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("omcm-trace "):
            traces.append(json.loads(line[len("omcm-trace ") :]))
    if proc.returncode != 0:
        raise SystemExit(f"omcm hook exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return traces, proc.stdout.decode().strip(), elapsed


def show(payload: dict, traces: list[dict], stdout: str, elapsed: float) -> None:
    print(f"\n▶ {describe(payload)}   ({elapsed:.0f} ms)")
    for trace in traces:
        if "failed" in trace:
            print(f"    {trace['plugin']:<19} FAILED {trace['failed']}")
        elif "result" in trace:
            result = trace["result"]
            said = "; ".join(f"{k}={v}" for k, v in result.items())
            print(f"    {trace['plugin']:<19} {textwrap.shorten(said, 300)}")
        else:
            print(f"    {trace['plugin']:<19} (nothing to say, {trace['ms']:.1f} ms)")
    if stdout:
        print(f"    → Claude Code gets: {textwrap.shorten(stdout, 400)}")


def run_cli(env: dict, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, env=env, text=True)
    return (proc.stdout + proc.stderr).strip()


def replay_fixtures(env: dict, project: Path) -> None:
    fixtures = HERE.parent.parent / "shared" / "fixtures" / "transcripts"
    if not fixtures.is_dir():
        print("\n(../shared/fixtures is not here; skipping the replay of real transcripts)")
        return
    from omcm_core.transcripts import replay_transcript

    print(f"\n=== Replaying real Claude Code transcripts from {fixtures} ===")
    for path in sorted(fixtures.rglob("*.jsonl")):
        count, answered = 0, 0
        for payload in replay_transcript(path):
            payload = {**payload, "cwd": str(project)}
            _traces, stdout, _ms = run_one(payload, env)
            count += 1
            answered += bool(stdout)
        print(f"  {path.name}: {count} hook calls, {answered} answered")


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    root = Path(tempfile.mkdtemp(prefix="omcm-demo-"))
    home = root / "omcm-home"
    project = make_project(root)
    transcript = root / "transcript.jsonl"
    shutil.copy(HERE / "transcript.jsonl", transcript)
    env = {
        **os.environ,
        "OMCM_HOME": str(home),
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM_TRACE_PLUGINS": "1",
        "LANG": os.environ.get("LANG", "en_US.UTF-8"),
    }
    print(f"omcm demo — OMCM_HOME={home}\n           project={project}")
    print(run_cli(env, "plugins"))
    try:
        for line in (HERE / "session.jsonl").read_text().splitlines():
            if line.strip():
                payload = substitute(line, project, transcript)
                show(payload, *run_one(payload, env))
        time.sleep(1.0)  # SessionEnd detached its slow part; give it a moment
        print("\n=== After the session ===")
        print("$ omcm search pytest\n" + run_cli(env, "search", "pytest"))
        print("$ omcm memory status\n" + run_cli(env, "memory", "status"))
        l1 = sorted((project / ".claude" / "memory" / "sessions").glob("*.l1.jsonl"))
        print(f"L1 transcript written at session end: {', '.join(p.name for p in l1) or 'not yet'}")
        secrets = ["ghp_R8x2Lq9Vb7Zt4Wm1Np6Kc3Hs5Jd0Fg2Ay8Ue", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]
        leaked = [p for p in home.rglob("*") if p.is_file() and any(s.encode() in p.read_bytes() for s in secrets)]
        print(f"secrets from the session found on disk under OMCM_HOME: {len(leaked)}")
        if "--fixtures" in argv:
            replay_fixtures(env, project)
    finally:
        subprocess.run([sys.executable, "-m", "omcm_core", "daemon", "stop"], env=env, capture_output=True)
        if keep:
            print(f"\nkept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
