"""The hook runs Claude Code times in its debug log (``--debug-file``).

It writes one line per command hook, e.g.::

    2026-11-23T15:19:51.266Z [DEBUG] Hooks: PreToolUse:Bash [/venv/bin/python -S .../fast_hook.py PreToolUse] finished with status 0 (55ms)
    2026-11-23T15:19:51.715Z [DEBUG] SessionEnd:other [/venv/bin/python -S .../fast_hook.py SessionEnd] completed with status 0

The duration is the client's own measure (spawn to exit), so it is what a user
waits for. SessionEnd hooks are logged without one (``ms`` is None).
"""

from __future__ import annotations

import re

import attrs

_LINE = re.compile(
    r"^(?P<at>\S+) \[\w+\] (?:Hooks: )?(?P<name>[A-Za-z]+(?::[^\s\[]*)?) \[(?P<command>.*)\] "
    r"(?:finished|completed) with status (?P<status>-?\d+)(?: \((?P<ms>\d+(?:\.\d+)?)ms\))?\s*$"
)


@attrs.frozen
class HookTiming:
    """One hook run: ``name`` as the client shows it (``PreToolUse:Bash``), its command, exit status, duration."""

    at: str
    name: str
    command: str
    status: int
    ms: float | None

    @property
    def event(self) -> str:
        return self.name.split(":", 1)[0]


def hook_timings(debug_text: str) -> list[HookTiming]:
    """Every timed hook run in a debug log, in order."""
    found = []
    for line in debug_text.splitlines():
        match = _LINE.match(line)
        if match:
            ms = match["ms"]
            found.append(
                HookTiming(
                    match["at"],
                    match["name"],
                    match["command"],
                    int(match["status"]),
                    float(ms) if ms is not None else None,
                )
            )
    return found
