"""Raises in every hook (the core must isolate it and count it for the breaker)."""

from omcm_core import hookimpl


def _fail(event):
    raise RuntimeError(f"rel-raise: deliberate failure on {event.hook_event_name}")


@hookimpl
def pre_tool(event):
    _fail(event)


@hookimpl
def post_tool(event):
    _fail(event)


@hookimpl
def session_start(event):
    _fail(event)


@hookimpl
def user_prompt_submit(event):
    _fail(event)


@hookimpl
def stop(event):
    raise SystemExit(3)  # even SystemExit must not end the dispatcher
