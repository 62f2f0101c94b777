"""Overruns its budget: sleeps ``REL_HANG_S`` seconds (default 30) in every hook."""

import time

from omcm_core import Result, hookimpl


def _hang(ctx):
    time.sleep(float(ctx.env.get("REL_HANG_S", "30")))
    return Result(additional_context="rel-hang answered too late", permission="deny")


@hookimpl
def pre_tool(ctx):
    return _hang(ctx)


@hookimpl
def post_tool(ctx):
    return _hang(ctx)


@hookimpl
def session_start(ctx):
    return _hang(ctx)


@hookimpl
def user_prompt_submit(ctx):
    return _hang(ctx)
