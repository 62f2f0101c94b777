"""Writes to stdout every way a careless plugin can: print, fd 1, a child process.

Also at import time. Claude Code reads stdout as the protocol channel, so the
core must route all of it to stderr.
"""

import os
import subprocess

from omcm_core import hookimpl

print("rel-print: printed at import time")


def _noise(event):
    print(f"rel-print: print() during {event.hook_event_name}")
    print("{not json")
    os.write(1, b"rel-print: raw write to fd 1\n")
    subprocess.run(["echo", "rel-print: child process output"], check=False)


@hookimpl
def pre_tool(event):
    _noise(event)


@hookimpl
def post_tool(event):
    _noise(event)


@hookimpl
def session_start(event):
    _noise(event)


@hookimpl
def user_prompt_submit(event):
    _noise(event)


@hookimpl
def stop(event):
    _noise(event)
