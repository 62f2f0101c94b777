"""In the real Claude Code client: what ``omcm mcp`` costs the first model request, and whether omcm's text is cache-stable.

    python bench/real_client_mcp.py --runs 5 [--before-code /tmp/omcm-before]

**First request.** Each round, interleaved: a session with omcm installed as a
user installs it (hooks and the MCP server "omcm"), the same without the MCP
entry, one with no hooks at all, and, with ``--before-code``, omcm's MCP entry
running another checkout's ``omcm_core`` (PYTHONPATH in the entry's ``env``).
The time from spawning ``claude -p`` to the fake API receiving the first
main-loop request is what the user waits before the model starts. The first
session of each harness fills the tool-list cache and is not counted.

**Prompt cache.** Two consecutive sessions in the same project (a prompt, four
tool calls, an answer), omcm installed: for every main-loop request after the
first, is the previous request (system, tools, messages; ``cache_control``
markers aside, which move by design) a byte-identical prefix of it? And across
the two sessions, are the system prompt, the tools and omcm's SessionStart
and UserPromptSubmit context identical? A difference means the provider's
prompt cache cannot reuse the earlier prefix.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import fake_anthropic  # noqa: E402
from claude_client import CLIENT_VERSION, install_client  # noqa: E402
from e2e_harness import Harness  # noqa: E402
from fake_anthropic import bash, read, text  # noqa: E402

ARRIVALS: list[tuple[float, bool]] = []
_answer = fake_anthropic.FakeAnthropic.answer


def _timed_answer(self, method, path, headers, body):  # records when each request arrived
    route = path.split("?", 1)[0]
    ARRIVALS.append((time.perf_counter(), route == "/v1/messages" and fake_anthropic.is_main_loop(body)))
    return _answer(self, method, path, headers, body)


fake_anthropic.FakeAnthropic.answer = _timed_answer


def first_request_s(harness: Harness) -> float:
    ARRIVALS.clear()
    start = time.perf_counter()
    run = harness.session([[text("ok")]], prompt="hello")
    if run.returncode != 0:
        raise SystemExit(run.explain())
    return next(t for t, main in ARRIVALS if main) - start


def strip_cache_marks(value):
    if isinstance(value, dict):
        return {k: strip_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_marks(v) for v in value]
    return value


def prefix_kept(before: dict, after: dict) -> bool:
    a, b = strip_cache_marks(before), strip_cache_marks(after)
    if a.get("system") != b.get("system") or a.get("tools") != b.get("tools"):
        return False
    old, new = a.get("messages", []), b.get("messages", [])
    # The last old message may be merged with what follows (the client appends blocks to the last user turn).
    if old[:-1] != new[: len(old) - 1]:
        return False
    last_old, same_slot = old[-1], new[len(old) - 1] if len(new) >= len(old) else None
    if same_slot == last_old:
        return True
    content_old, content_new = last_old.get("content"), (same_slot or {}).get("content")
    return (
        isinstance(content_old, list)
        and isinstance(content_new, list)
        and content_new[: len(content_old)] == content_old
    )


def seed(harness: Harness) -> None:
    """Give omcm something to inject: a memory file, the notepad's priority context and a working-memory entry."""
    memory = harness.project / ".claude" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "memory.md").write_text("# Project memory\n\n- the build runs with `make all`\n- tests live in tests/\n")
    harness.omcm("notepad", "add", "--priority", "Release 2.0 ships Friday; keep the API frozen.")
    harness.omcm("notepad", "add", "The parser rewrite is half done: see src/parser.py.")


def cache_report(harness: Harness, label: str) -> None:
    print(f"-- {label}")
    notes = harness.project / "notes.txt"
    notes.write_text("".join(f"line {n}\n" for n in range(40)))
    sessions = []
    for _ in range(2):
        run = harness.session(
            [[bash("echo one")], [read(notes)], [bash("ls")], [read(notes)], [text("done")]], prompt="look around"
        )
        if run.returncode != 0:
            raise SystemExit(run.explain())
        sessions.append(run.main_requests)
    for n, requests in enumerate(sessions, 1):
        kept = [prefix_kept(a.body, b.body) for a, b in zip(requests, requests[1:], strict=False)]
        broken = [i + 1 for i, ok in enumerate(kept) if not ok]
        print(
            f"session {n}: {len(requests)} main requests; previous request a prefix of the next: "
            f"{sum(kept)}/{len(kept)}" + (f" (not at request {broken})" if broken else "")
        )
    first, second = (strip_cache_marks(s[0].body) for s in sessions)
    print("across sessions: system identical:", first.get("system") == second.get("system"))
    print("across sessions: tools identical:", first.get("tools") == second.get("tools"))
    for hook in ("SessionStart", "UserPromptSubmit"):
        one, two = sessions[0][0].hook_contexts(hook), sessions[1][0].hook_contexts(hook)
        print(f"across sessions: {hook} context identical: {one == two} ({sum(map(len, one))} characters)")
        if one != two:
            for a, b in zip(one, two, strict=False):
                if a != b:
                    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
                    print(
                        f"   first difference at {at}: {a[max(0, at - 60) : at + 60]!r}\n   vs {b[max(0, at - 60) : at + 60]!r}"
                    )
    first_user_1 = json.dumps(first["messages"][0], sort_keys=True)
    first_user_2 = json.dumps(second["messages"][0], sort_keys=True)
    print("across sessions: first user message identical:", first_user_1 == first_user_2)


#: The least an MCP server can cost the client: the system interpreter without ``site``, answering the
#: handshake and an empty tool list from constants. Its row against "omcm without MCP" is the client's
#: own price for any stdio server; omcm's row against it is what omcm adds.
MINIMAL_SERVER = r"""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "minimal", "version": "0"}}
    elif m["method"] == "tools/list":
        r = {"tools": []}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before-code", type=Path)
    parser.add_argument("--skip-cache", action="store_true")
    parser.add_argument("--client", default=CLIENT_VERSION, help="the client's version (default: the pinned one)")
    args = parser.parse_args()
    claude = install_client(args.client)
    root = Path(tempfile.mkdtemp(prefix="omcm-real-mcp-"))
    harnesses = {
        "omcm with MCP": Harness(root / "mcp", claude, mcp=True),
        "omcm without MCP": Harness(root / "nomcp", claude),
        "no hooks": Harness(root / "none", claude, install_hooks=False),
    }
    minimal = Harness(root / "minimal", claude)
    config_file = minimal.home / ".claude.json"
    config = json.loads(config_file.read_text())
    config.setdefault("mcpServers", {})["minimal"] = {
        "type": "stdio",
        "command": "/usr/bin/python3",
        "args": ["-S", "-c", MINIMAL_SERVER],
    }
    config_file.write_text(json.dumps(config, indent=2))
    harnesses["omcm without MCP, a minimal MCP server"] = minimal
    if args.before_code:
        before = Harness(root / "before", claude, mcp=True)
        config_file = before.home / ".claude.json"
        config = json.loads(config_file.read_text())
        config["mcpServers"]["omcm"]["env"] = {"PYTHONPATH": str(args.before_code)}
        config_file.write_text(json.dumps(config, indent=2))
        harnesses["omcm with MCP, before"] = before
    times: dict[str, list[float]] = {name: [] for name in harnesses}
    try:
        for harness in harnesses.values():
            first_request_s(harness)  # fills caches, starts nothing that stays but the dispatcher
        for _ in range(args.runs):
            for name, harness in harnesses.items():
                times[name].append(first_request_s(harness))
        load = os.getloadavg()
        print(f"client {args.client}, {args.runs} sessions each, load average {load[0]:.1f}/{load[2]:.1f}")
        for name, values in [(n, v) for n, v in times.items() if v]:
            print(
                f"{name:<40} first request after median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f})"
            )
        if not args.skip_cache:
            seed(harnesses["omcm with MCP"])
            cache_report(harnesses["omcm with MCP"], "omcm installed (hooks and MCP), memory and notepad seeded")
            cache_report(harnesses["no hooks"], "no hooks (the client's own behaviour)")
    finally:
        for harness in harnesses.values():
            harness.close()


if __name__ == "__main__":
    main()
