"""tool-counter: notice runs of consecutive Read or Bash calls and suggest a better tool.

After 5 Reads in a row Claude is told that searching (grep or find in one Bash call) is faster;
after 3 Bash calls in a row, that commands can be combined. Once per run,
exactly when the run reaches its threshold; never blocks.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

import attrs

from omcm_core import Result, hookimpl
from omcm_core.config import Project

PLUGIN = "tool-counter"


@attrs.frozen
class ToolCounterConfig:
    """``[tool-counter]``: the thresholds and the message are a project's to choose; cleanup is the user's."""

    #: Consecutive Read calls that trigger the Read suggestion.
    read_threshold: int = attrs.field(default=5, validator=attrs.validators.ge(1), metadata=Project.free)
    #: Consecutive Bash calls that trigger the Bash suggestion.
    bash_threshold: int = attrs.field(default=3, validator=attrs.validators.ge(1), metadata=Project.free)
    #: Also show the suggestion to the user (systemMessage), not only to Claude.
    show_user: bool = attrs.field(default=False, metadata=Project.free)
    #: Counter files of sessions idle this long are removed at the next session start.
    max_age_days: float = attrs.field(default=7.0, validator=attrs.validators.gt(0))


@hookimpl
def config_schema():
    return ToolCounterConfig


@hookimpl
def pre_tool(event, ctx):
    from omcm_tool_counter import counter, messages, state

    config = ctx.config(ToolCounterConfig)
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    folder = ctx.session_dir(event.session_id)

    def change(counters):
        return counter.step(counters, counter.label(event), now, config.read_threshold, config.bash_threshold)

    result = state.update(folder, change, ctx.log)
    if result.suggest is None:
        return None
    text = messages.suggestion(result.suggest, result.count, ctx.language)
    ctx.log.info("suggested", tool=result.suggest, count=result.count, session_id=event.session_id)
    return Result(additional_context=text, system_message=text if config.show_user else None)


@hookimpl
def session_start(event, ctx):
    from omcm_tool_counter import state

    config = ctx.config(ToolCounterConfig)
    removed = state.age_out(ctx.home / "sessions", config.max_age_days, time.time())
    if removed:
        ctx.log.info("aged_out", sessions=removed)


@hookimpl
def session_end(event, ctx):
    from omcm_tool_counter import state

    if event.session_id:
        state.remove(ctx.session_dir(event.session_id, create=False))
