"""Turn what each plugin answered into sentences a person reads, and tally it for the summary table."""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter, defaultdict
from pathlib import Path

# What a plugin's answer means, in words, for the answers this demo's session provokes.
# Anything else falls back to a generic phrase built from the answer's kind.
LABELS = {
    ("memory-rotation", "SessionStart", "context"): "loaded the project's memory into the session",
    ("tool-counter", "PreToolUse", "context"): "suggested a better way to use the tools",
    ("pre-tool-guide", "PreToolUse", "context"): "warned about an error it had seen before",
    ("bash-guard", "PreToolUse", "deny"): "denied a dangerous command",
    ("persistent-mode", "UserPromptSubmit", "context"): "started a ralph loop",
    ("persistent-mode", "Stop", "block"): "kept Claude working until the task was verified",
    ("persistent-mode", "Stop", "context"): "kept Claude working until the task was verified",
    ("notepad", "PostToolUse", "message"): "saved a subagent's priority note to the notepad",
    ("notepad", "Stop", "other"): "reminded Claude of the priority note while it kept working",
}
MARKER = re.compile(r"^(#.*|\[[^\]]+\])$")
KIND_WORDS = {
    "deny": "denied a tool call",
    "ask": "asked the user before a tool call",
    "block": "blocked",
    "context": "added context",
    "message": "showed the user a message",
    "failed": "failed (isolated; the session went on)",
}


def context_of(answer: dict) -> str:
    """What a plugin put in front of Claude: its context, then the tail no budget cuts (a request, a mode's text)."""
    return "\n".join(t for t in (answer.get("additional_context"), answer.get("context_tail")) if t)


def kind_of(answer: dict) -> str:
    if answer.get("permission") in ("deny", "ask"):
        return answer["permission"]
    if answer.get("block"):
        return "block"
    if context_of(answer):
        return "context"
    if answer.get("system_message"):
        return "message"
    return "other"


def label(plugin: str, event: str, kind: str) -> str:
    return LABELS.get((plugin, event, kind)) or f"{KIND_WORDS.get(kind, 'answered')} on {event}"


def first_lines(text: str, count: int = 4, width: int = 110) -> list[str]:
    # Markdown headings and whole-line markers ("[persistent-mode: ralph loop]") are for Claude, not for people.
    lines = [line.strip() for line in text.splitlines() if line.strip() and not MARKER.match(line.strip())]
    wrapped = [part for line in lines for part in textwrap.wrap(line, width)]
    if len(wrapped) > count:
        return wrapped[: count - 1] + [f"(+{len(wrapped) - count + 1} more lines)"]
    return wrapped


def what(payload: dict, project: Path) -> str:
    """The tool call or event in a few words, with paths relative to the project."""
    event = payload["hook_event_name"]
    tool_input = payload.get("tool_input") or {}
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        detail = (
            tool_input.get("command")
            or tool_input.get("file_path")
            or tool_input.get("pattern")
            or tool_input.get("description")
            or ""
        )
        detail = str(detail).replace(f"{project}/", "")
        verb = {"PreToolUse": "wants to run", "PostToolUse": "ran", "PostToolUseFailure": "failed:"}[event]
        return f"Claude {verb} {payload.get('tool_name')} {detail}".rstrip()
    if event == "UserPromptSubmit":
        return f"The user types: {payload.get('prompt')!r}"
    if event == "Stop":
        return f"Claude wants to stop, saying: {textwrap.shorten(payload.get('last_assistant_message') or '', 80)!r}"
    return {"SessionStart": "A session starts", "SessionEnd": "The session ends"}.get(event, event)


def claude_json(stdout: str) -> list[str]:
    """The JSON Claude Code received, pretty-printed with long strings cut so it stays on screen."""

    def cut(value):
        if isinstance(value, str) and len(value) > 90:
            return value[:87] + "..."
        if isinstance(value, dict):
            return {k: cut(v) for k, v in value.items()}
        return value

    return json.dumps(cut(json.loads(stdout)), indent=2, ensure_ascii=False).splitlines()


class Story:
    """Prints the session step by step: quiet steps are gathered into one line, answers are told."""

    def __init__(self, project: Path):
        self.project = project
        self.quiet: list[str] = []
        self.quiet_id = None  # the tool_use_id of the last quiet call, so its answered PostToolUse replaces it
        self.tally: dict[str, Counter] = defaultdict(Counter)

    def step(self, payload: dict, traces: list[dict], stdout: str) -> None:
        event = payload["hook_event_name"]
        spoke = [t for t in traces if "result" in t or "failed" in t]
        if event in ("Stop", "SubagentStop") and not stdout:
            # A reason without a block only rides along with someone else's continuation: nobody continued, so it is dropped.
            spoke = [t for t in spoke if kind_of(t.get("result", {})) != "other"]
        if not spoke and event not in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
            # PostToolUse is quiet by design (the observer records it): name only the tool calls.
            if event == "PreToolUse":
                self.quiet.append(what(payload, self.project).replace("Claude wants to run ", ""))
                self.quiet_id = payload.get("tool_use_id")
            elif event == "PostToolUseFailure" and self.quiet:
                self.quiet[-1] += " (failed)"
            return
        if self.quiet and payload.get("tool_use_id") == self.quiet_id:
            self.quiet.pop()  # told below as "Claude ran ..."
        self.flush()
        print(f"\n▶ {what(payload, self.project)}")
        for trace in spoke:
            self._tell(event, trace)
        if event == "Stop" and not stdout:
            print("    → no plugin objects: Claude Code lets Claude stop")
        decisive = (
            ("deny", "ask", "block", "context") if event in ("Stop", "SubagentStop") else ("deny", "ask", "block")
        )
        if stdout and any(kind_of(t.get("result", {})) in decisive for t in spoke):
            print("    Claude Code receives:")
            print("\n".join("      " + line for line in claude_json(stdout)))

    def _tell(self, event: str, trace: dict) -> None:
        plugin = trace["plugin"]
        if "failed" in trace:
            self.tally[plugin][label(plugin, event, "failed")] += 1
            print(f"    {plugin} failed ({trace['failed']}); the others answered anyway")
            return
        answer = trace["result"]
        kind = kind_of(answer)
        self.tally[plugin][label(plugin, event, kind)] += 1
        text = answer.get("reason") or context_of(answer) or answer.get("system_message") or ""
        verbs = {
            "deny": "denies it",
            "ask": "asks the user",
            "message": "tells the user",
            "other": "adds to the continuation",
            "block": "blocks the stop" if event in ("Stop", "SubagentStop") else "blocks it",
        }
        if event in ("Stop", "SubagentStop"):
            # Stop context (client 2.1.163+) keeps Claude going as non-error feedback, where a block shows an error.
            verbs["context"] = "keeps Claude going (context, not an error)"
        verb = verbs.get(kind, "tells Claude")
        lead = f"    {plugin} {verb}: "
        lines = first_lines(text.replace(f"{self.project}/", ""), width=max(60, 120 - len(lead)))
        print(lead + (lines[0] if lines else ""))
        for line in lines[1:]:
            print(" " * len(lead) + line)

    def flush(self) -> None:
        if self.quiet:
            names = ", ".join(self.quiet)
            print(f"\n  · {len(self.quiet)} tool call(s) with nothing to add: {textwrap.shorten(names, 140)}")
            self.quiet = []

    def table(self, extra: dict[str, list[tuple[str, int]]]) -> None:
        rows = [(plugin, doing, n) for plugin, counts in sorted(self.tally.items()) for doing, n in counts.items()]
        rows += [(plugin, doing, n) for plugin, items in extra.items() for doing, n in items]
        rows.sort(key=lambda row: row[0])
        width = max(len(row[0]) for row in rows)
        doing_width = max(len(row[1]) for row in rows)
        print(f"\n{'plugin':<{width}} | {'what it did':<{doing_width}} | times")
        print(f"{'-' * width}-+-{'-' * doing_width}-+------")
        for plugin, doing, n in rows:
            print(f"{plugin:<{width}} | {doing:<{doing_width}} | {n}")


def digest(said: Counter, per_plugin: int = 4) -> list[str]:
    """The distinct things plugins said across many calls, most frequent first, numbers folded."""
    by_plugin: dict[str, Counter] = defaultdict(Counter)
    example: dict[tuple[str, str], str] = {}
    for (plugin, text), n in said.items():
        text = " ⏎ ".join(line.strip() for line in text.splitlines() if line.strip() and not MARKER.match(line.strip()))
        key = re.sub(r"\d+", "N", text)
        by_plugin[plugin][key] += n
        example.setdefault((plugin, key), text)
    lines = []
    for plugin, counts in sorted(by_plugin.items()):
        lines.append(f"  {plugin} ({sum(counts.values())} answer(s), {len(counts)} distinct):")
        for key, n in counts.most_common(per_plugin):
            lines.append(f"    {n:>4}×  {textwrap.shorten(example[(plugin, key)], 120, placeholder=' …')}")
        if len(counts) > per_plugin:
            lines.append(f"          … and {len(counts) - per_plugin} other messages")
    return lines
