"""``[notepad]``: the plugin's config section."""

from __future__ import annotations

import attrs
from attrs import field
from attrs.validators import ge, gt


def _names(value) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


@attrs.frozen(kw_only=True)
class NotepadConfig:
    """``[notepad]`` in OMCM_HOME/config.toml or <project>/.claude/omcm.toml."""

    #: Tools whose answers are searched for <remember> tags (Agent, formerly Task).
    tools: tuple = field(default=("Agent", "Task"), converter=_names)
    #: Also read tags from SubagentStop's last_assistant_message (the only way a background agent's answer comes).
    subagent_stop: bool = True
    #: Characters kept of the Priority Context (when stored and when injected).
    priority_max_chars: int = field(default=500, validator=ge(1))
    #: Working Memory entries older than this are pruned.
    working_memory_days: float = field(default=7.0, validator=gt(0))
    #: The notepad's size cap in bytes; the oldest Working Memory entries go first.
    max_bytes: int = field(default=8192, validator=ge(512))
    #: How many recent Working Memory entries SessionStart injects besides the priority context.
    inject_entries: int = field(default=0, validator=ge(0))
    #: Give the priority context to every subagent the Agent tool starts (SubagentStart; subagents get no SessionStart).
    subagent_context: bool = True
    #: Add the priority context to a continuation when another plugin blocks Stop.
    continuation: bool = True
    #: Tell the user (systemMessage) when a tag was saved.
    notify: bool = True
