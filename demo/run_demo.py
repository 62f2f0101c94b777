"""Play a recorded session through `omcm hook` and tell what every plugin did for it.

    python3 dev.py demo                   # demo/session.jsonl, our own small recorded session
    python3 dev.py demo --fixtures        # then also replay ../shared/fixtures transcripts, when present
    python3 dev.py demo --fixtures DIR    # ... or the transcripts (*.jsonl, any depth) under DIR
    python3 dev.py demo --keep            # keep the demo's OMCM_HOME and project folder

Each payload goes to a real `omcm hook` process, exactly as Claude Code sends
it, through the fast registered command (`python -S .../fast_hook.py EVENT`,
warm dispatcher included). With OMCM_TRACE_PLUGINS=1 the dispatcher writes one
line per plugin to stderr; the demo turns those into sentences and shows the
JSON Claude Code receives where a plugin decides something (a deny, a blocked
stop). The example third-party plugin examples/omcm-bash-guard is built and
installed into a temporary folder, so its deny is part of the story.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import narrate

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SESSION_ID = "d3m0c0de-5e55-4a1d-9b2c-000000000001"
SECRETS = ["ghp_R8x2Lq9Vb7Zt4Wm1Np6Kc3Hs5Jd0Fg2Ay8Ue", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]
MEMORY = """# Project memory

## 2026-11-20
- The service listens on one port, set in app/server.py.
- Decided: configuration comes from environment variables, never from files in the repo.

## 2026-11-21
- Tests: `pytest -q` from the project root; they need the `requests` package.
"""


def hook_argv(event: str) -> list[str]:
    from omcm_core._cli.install import fast_hook_argv

    return fast_hook_argv(event)


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "app").mkdir(parents=True)
    (project / "app" / "server.py").write_text("PORT = 80\n")
    (project / ".claude" / "memory").mkdir(parents=True)
    (project / ".claude" / "memory" / "memory.md").write_text(MEMORY)
    return project


def install_bash_guard(root: Path) -> Path:
    """Build the example plugin from a copy (nothing written into the repo) and install it into a folder."""
    src, site = root / "bash-guard-src", root / "bash-guard-site"
    ignore = shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build")
    shutil.copytree(ROOT / "examples" / "omcm-bash-guard", src, ignore=ignore)
    pip = [sys.executable, "-m", "pip", "install", "-qq", "--disable-pip-version-check", "--no-deps"]
    subprocess.run(pip + ["--no-build-isolation", "--target", str(site), str(src)], check=True)
    return site


def substitute(line: str, project: Path, transcript: Path) -> dict:
    text = line.replace("{{PROJECT}}", str(project)).replace("{{SESSION}}", SESSION_ID)
    return json.loads(text.replace("{{TRANSCRIPT}}", str(transcript)))


def run_one(payload: dict, env: dict) -> tuple[list[dict], str]:
    proc = subprocess.run(
        hook_argv(payload["hook_event_name"]), input=json.dumps(payload).encode(), capture_output=True, env=env
    )
    traces = [
        json.loads(line[len("omcm-trace ") :])
        for line in proc.stderr.decode("utf-8", "replace").splitlines()
        if line.startswith("omcm-trace ")
    ]
    if proc.returncode not in (0, 2):  # 2 is a deliberate block, anything else a broken hook
        raise SystemExit(f"omcm hook exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return traces, proc.stdout.decode().strip()


def run_cli(env: dict, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, env=env, text=True)
    sys.stderr.write(proc.stderr)  # a problem of the command is the person's to see, not part of the story
    return proc.stdout.strip()


def observations(home: Path) -> int:
    try:
        with sqlite3.connect(f"file:{home / 'omcm.db'}?mode=ro", uri=True) as db:
            return db.execute("SELECT count(*) FROM observer_events").fetchone()[0]
    except sqlite3.Error:
        return 0


def wait_for_l1(project: Path) -> list[Path]:
    """SessionEnd hands the transcript copy to a detached process: wait for it, so nothing outlives the demo."""
    for _ in range(50):
        found = sorted((project / ".claude" / "memory" / "sessions").glob("*.l1.jsonl"))
        if found:
            return found
        time.sleep(0.1)
    return []


def after_session(env: dict, home: Path, project: Path, story: narrate.Story) -> None:
    state_file = project / ".omc" / "ralph" / f"{SESSION_ID}.json"
    state = json.loads(state_file.read_text()) if state_file.is_file() else {}
    print(
        f"\nThe ralph loop ended with status {state.get('status', 'unknown')!r} "
        f"after {state.get('iteration', '?')} continuation(s)."
    )
    print("\n$ omcm search requests")
    print(run_cli(env, "search", "requests").replace(f"{project}/", ""))
    print("\n$ omcm search GITHUB_TOKEN")
    print(run_cli(env, "search", "GITHUB_TOKEN"))
    leaked = [p for p in home.rglob("*") if p.is_file() and any(s.encode() in p.read_bytes() for s in SECRETS)]
    print(f"(the tokens themselves: found in {len(leaked)} of the files under OMCM_HOME)")
    l1 = wait_for_l1(project)
    extra = {
        "post-tool-observer": [("recorded tool calls for `omcm search` (secrets masked)", observations(home))],
        "memory-rotation": [("saved the session's transcript to memory at the end", len(l1))],
    }
    story.table(extra)


def replay_fixtures(env: dict, project: Path, fixtures: Path) -> None:
    if not fixtures.is_dir():
        print(f"\n(no real transcripts at {fixtures}: skipping their replay)")
        return
    from omcm_core.transcripts import replay_transcript

    paths = sorted(fixtures.rglob("*.jsonl"))
    print(f"\n=== What the plugins said across {len(paths)} real Claude Code transcript(s) ===")
    said: Counter = Counter()
    calls = 0
    for path in paths:
        for payload in replay_transcript(path):
            traces, _stdout = run_one({**payload, "cwd": str(project)}, env)
            calls += 1
            for trace in traces:
                answer = trace.get("result") or {}
                text = answer.get("reason") or narrate.context_of(answer) or answer.get("system_message")
                if text or "failed" in trace:
                    said[trace["plugin"], text or f"failed: {trace['failed']}"] += 1
    print(f"{calls} hook calls replayed; {sum(said.values())} answer(s).")
    print("\n".join(narrate.digest(said)) if said else "No plugin said anything.")


def demo_env(home: Path, project: Path, guard_site: Path) -> dict:
    return {
        **os.environ,
        "OMCM_HOME": str(home),
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM_TRACE_PLUGINS": "1",
        # The embeddings worker would outlive the demo (and its temp folder): keep the observer in-process.
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(guard_site), os.environ.get("PYTHONPATH")])),
        "LANG": os.environ.get("LANG", "en_US.UTF-8"),
    }


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 dev.py demo", description="Tell what omcm's plugins do for a session."
    )
    parser.add_argument(
        "--fixtures",
        nargs="?",
        type=Path,
        const=ROOT.parent / "shared" / "fixtures" / "transcripts",
        metavar="DIR",
        help="also replay real transcripts (default: ../shared/fixtures/transcripts)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the demo's OMCM_HOME and project folder")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    root = Path(tempfile.mkdtemp(prefix="omcm-demo-"))
    home, project = root / "omcm-home", make_project(root)
    transcript = root / "transcript.jsonl"
    shutil.copy(HERE / "transcript.jsonl", transcript)
    env = dict(os.environ)
    try:
        env = demo_env(home, project, install_bash_guard(root))
        plugins = sorted(p["name"] for p in json.loads(run_cli(env, "plugins", "--json")) if p["enabled"])
        print(f"omcm demo: a recorded Claude Code session through `omcm hook`, with {len(plugins)} plugins installed:")
        print("  " + ", ".join(plugins))
        story = narrate.Story(project)
        for line in (HERE / "session.jsonl").read_text().splitlines():
            if line.strip():
                payload = substitute(line, project, transcript)
                story.step(payload, *run_one(payload, env))
        story.flush()
        after_session(env, home, project, story)
        if args.fixtures:
            replay_fixtures(env, project, args.fixtures)
    finally:
        subprocess.run([sys.executable, "-m", "omcm_core", "daemon", "stop"], env=env, capture_output=True)
        if args.keep:
            print(f"\nkept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
