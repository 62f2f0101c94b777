"""Reports what a call sees of its process state, and makes files that depend on it.

PostToolUse: creates ``<project>/probe-<local time of REL_PROBE_EPOCH>/<REL_PROBE_NAME>``
with the default modes (umask) and answers, as additional context, the local time,
``ctx.env``'s REL_PROBE_NAME and OMCM_LOG_LEVEL, ``ctx.cwd`` and ``os.getcwd()``.
PreToolUse with ``REL_PROBE_GIL_S``: holds the GIL that long (a C call through
``ctypes.PyDLL``, like a pathological regex), then writes ``REL_PROBE_MARK``.
"""

import json
import os
import time

from omcm_core import Result, hookimpl

VERSION = "v1"


@hookimpl
def post_tool(event, ctx):
    stamp = time.strftime("%Y%m%d-%H%M%Z", time.localtime(int(ctx.env.get("REL_PROBE_EPOCH", "0"))))
    folder = os.path.join(str(ctx.project_dir), "probe-" + stamp)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ctx.env.get("REL_PROBE_NAME", "unnamed")), "w") as f:
        f.write(VERSION)
    seen = {
        "stamp": stamp,
        "name": ctx.env.get("REL_PROBE_NAME"),
        "log_level": ctx.env.get("OMCM_LOG_LEVEL"),
        "os_log_level": os.environ.get("OMCM_LOG_LEVEL"),
        "cwd": ctx.cwd,
        "os_cwd": os.getcwd(),
        "secret_seen": "AWS_SECRET_ACCESS_KEY" in ctx.env,
        "passed": [ctx.env.get("PROBE_PASSED_TOKEN"), os.environ.get("PROBE_PASSED_TOKEN")],
        "version": VERSION,
    }
    return Result(additional_context="rel-probe " + json.dumps(seen, sort_keys=True))


@hookimpl
def pre_tool(event, ctx):
    hold = float(ctx.env.get("REL_PROBE_GIL_S", "0"))
    if hold:
        import ctypes

        ctypes.PyDLL(None).sleep(int(hold))  # PyDLL keeps the GIL for the whole C call
        with open(ctx.env["REL_PROBE_MARK"], "w") as f:
            f.write("done")
    return None
