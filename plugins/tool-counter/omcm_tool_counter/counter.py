"""The counting rule, free of I/O: one tool call in, new state and whether to suggest out.

A Read extends the Read run and ends the Bash run; a Bash extends the Bash run
and ends the Read run (by canonical kind: Qwen's ``read_file`` is a Read, its
``run_shell_command`` a Bash); any other tool (Task and Agent included) ends both.
A suggestion is due exactly when a run reaches its threshold, not after.
"""

from __future__ import annotations

from typing import Any

from attrs import evolve, frozen

READ, BASH = "Read", "Bash"
#: Canonical tool kind (``event.tool_kind``) -> the run it extends, whatever the agent calls its tool.
_RUNS = {"read": READ, "shell": BASH}


def label(event: Any) -> str:
    """The run ``event``'s tool belongs to: Read for any agent's read tool, Bash for any shell; else its raw name."""
    from omcm_core.agents.tool_kinds import run_kind  # Codex's `cat FILE` is its read

    return _RUNS.get(run_kind(event), event.tool_name)


@frozen
class Counters:
    """The state file: ``read``, ``bash``, ``lastTool``, ``lastUpdated`` (camelCase, as earlier tool-counters wrote it)."""

    read: int = 0
    bash: int = 0
    last_tool: str = ""
    last_updated: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"read": self.read, "bash": self.bash, "lastTool": self.last_tool, "lastUpdated": self.last_updated}

    @classmethod
    def from_json(cls, data: Any) -> Counters:
        """Raises ValueError when ``data`` is not a state written by this plugin."""
        if not isinstance(data, dict):
            raise ValueError("state is not a JSON object")
        read, bash = data.get("read", 0), data.get("bash", 0)
        last_tool, last_updated = data.get("lastTool", ""), data.get("lastUpdated", "")
        for name, value in (("read", read), ("bash", bash)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        for name, value in (("lastTool", last_tool), ("lastUpdated", last_updated)):
            if not isinstance(value, str):
                raise ValueError(f"{name} must be a string, got {value!r}")
        return cls(read=read, bash=bash, last_tool=last_tool, last_updated=last_updated)


@frozen
class Step:
    counters: Counters
    #: "Read" or "Bash" when this call made its run reach the threshold, else None.
    suggest: str | None = None
    count: int = 0


def step(counters: Counters, tool_name: str, now: str, read_threshold: int, bash_threshold: int) -> Step:
    """Count one tool call."""
    if tool_name == READ:
        new = evolve(counters, read=counters.read + 1, bash=0, last_tool=tool_name, last_updated=now)
        return Step(new, READ if new.read == read_threshold else None, new.read)
    if tool_name == BASH:
        new = evolve(counters, read=0, bash=counters.bash + 1, last_tool=tool_name, last_updated=now)
        return Step(new, BASH if new.bash == bash_threshold else None, new.bash)
    return Step(evolve(counters, read=0, bash=0, last_tool=tool_name, last_updated=now), None, 0)
