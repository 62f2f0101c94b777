"""``[notepad]``: the plugin's config section."""

from __future__ import annotations

import attrs
from attrs import field
from attrs.validators import ge, gt

from omcm_core.config import Project


def _names(value) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


@attrs.frozen(kw_only=True)
class NotepadConfig:
    """``[notepad]`` in OMCM_HOME/config.toml or <project>/.claude/omcm.toml.

    Tool output is attacker-controlled: a project may read tags from fewer places and inject less,
    never more; what the notepad keeps (its size, its days) is the user's, so nothing stored is lost.
    """

    #: Tools whose answers are searched for <remember> tags (Agent, formerly Task).
    tools: tuple = field(default=("Agent", "Task"), converter=_names)
    #: Also read tags from SubagentStop's last_assistant_message (the only way a background agent's answer comes).
    subagent_stop: bool = field(default=True, metadata=Project.off)
    #: Characters kept of the Priority Context (when stored and when injected).
    priority_max_chars: int = field(default=500, validator=ge(1), metadata=Project.lower)
    #: Working Memory entries older than this are pruned.
    working_memory_days: float = field(default=7.0, validator=gt(0))
    #: The notepad's size cap in bytes; the oldest Working Memory entries go first.
    max_bytes: int = field(default=8192, validator=ge(512))
    #: How many recent Working Memory entries SessionStart injects besides the priority context.
    inject_entries: int = field(default=0, validator=ge(0), metadata=Project.lower)
    #: Give the priority context to every subagent the Agent tool starts (SubagentStart; subagents get no SessionStart).
    subagent_context: bool = field(default=True, metadata=Project.off)
    #: Add the priority context to a continuation when another plugin blocks Stop.
    continuation: bool = field(default=True, metadata=Project.off)
    #: Tell the user (systemMessage) when a tag was saved.
    notify: bool = field(default=True, metadata=Project.free)
