"""Doctor's report for people (sections, marks, one fix per problem) and for machines (``--json``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

MARKS = {"ok": "✓", "info": "•", "warning": "!", "error": "✗"}
ASCII_MARKS = {"ok": "+", "info": "-", "warning": "!", "error": "x"}
COLOURS = {"ok": "32", "info": "2", "warning": "33", "error": "31"}


def colour_wanted(stream: TextIO, env: Mapping[str, str]) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org) or TERM=dumb."""
    if "NO_COLOR" in env or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def unicode_ok(stream: TextIO) -> bool:
    try:
        "".join(MARKS.values()).encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def text(sections: list[dict[str, Any]], stream: TextIO | None = None, env: Mapping[str, str] | None = None) -> str:
    stream = stream or sys.stdout
    colour = colour_wanted(stream, env if env is not None else {})
    marks = MARKS if unicode_ok(stream) else ASCII_MARKS

    def paint(code: str, words: str) -> str:
        return f"\033[{code}m{words}\033[0m" if colour else words

    lines = []
    for section in sections:
        lines.append(paint("1", section["name"]))
        for check in section["checks"]:
            mark = paint(COLOURS[check.level], marks[check.level])
            lines.append(f"  {mark} {check.message}")
            lines += [f"      {detail}" for detail in check.details]
            if check.fix and not check.ok:
                lines.append(f"      {paint('1', 'fix:')} {check.fix}")
        lines.append("")
    lines.append(summary(sections))
    return _safe("\n".join(lines), stream)


def summary(sections: list[dict[str, Any]]) -> str:
    levels = [c.level for s in sections for c in s["checks"]]
    problems, warnings = levels.count("error"), levels.count("warning")
    if not problems and not warnings:
        return "No problems found."
    said = [f"{problems} problem{'s' * (problems != 1)}"] if problems else []
    said += [f"{warnings} warning{'s' * (warnings != 1)}"] if warnings else []
    return " and ".join(said) + " found."


def as_json(sections: list[dict[str, Any]]) -> str:
    from omcm_core import __version__

    checks = [c for s in sections for c in s["checks"]]
    doc = {
        "version": __version__,
        "ok": all(c.level != "error" for c in checks),
        "problems": [c.message for c in checks if c.level == "error"],
        "warnings": [c.message for c in checks if c.level == "warning"],
        "sections": [{"name": s["name"], "checks": [c.as_json() for c in s["checks"]]} for s in sections],
    }
    return json.dumps(doc, indent=2, default=str)  # ASCII escapes: safe on any stdout


def _safe(words: str, stream: TextIO) -> str:
    """Characters the terminal cannot show (a path, a plugin's message) become escapes, not a crash."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return words.encode(encoding, "backslashreplace").decode(encoding)


JSON_HELP = """\
--json prints one JSON object:
  version   omcm's version
  ok        false when any check failed (doctor then exits 1)
  problems  the messages of the failed checks
  warnings  the messages of the warnings
  sections  [{"name": "Installation", "checks": [CHECK, ...]}, ...]
CHECK is {"id": "home.mode", "ok": true, "level": "ok"|"info"|"warning"|"error",
          "message": "...", "fix": "the one command that fixes it" or null,
          "details": ["key: value", ...] (optional), "data": {facts} (optional)}
"""
