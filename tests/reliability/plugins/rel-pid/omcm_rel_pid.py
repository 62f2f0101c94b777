"""Answers with the id of the process it runs in.

Only the process that ran the plugins can know it: a hook answered by the warm
dispatcher carries the daemon's pid, one answered in process the hook's own.
"""

import os

from omcm_core import Result, hookimpl


@hookimpl
def pre_tool(event):
    return Result(additional_context=f"rel-pid {os.getpid()}")
