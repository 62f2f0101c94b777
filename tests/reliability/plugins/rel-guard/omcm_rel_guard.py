"""A third-party security guard, as a user lists it in ``[core] fail_closed``: denies ``rm -rf``.

Its check takes a little time (50 ms), like a real policy lookup: a budget a repository
set to 0 would make it overrun on every call.
"""

import time

from omcm_core import Result, hookimpl


@hookimpl
def pre_tool(event):
    time.sleep(0.05)
    if "rm -rf" in str(event.tool_input.get("command", "")):
        return Result(permission="deny", reason="rel-guard: rm -rf is not allowed")
    return None
