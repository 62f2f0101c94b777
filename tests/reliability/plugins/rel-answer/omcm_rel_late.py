"""A second well-behaved plugin whose name sorts after every bad test plugin.

Isolation must hold whichever side of a failing plugin a good one is called on.
"""

from omcm_core import Result, hookimpl


@hookimpl
def pre_tool(event):
    return Result(
        permission="ask", reason=f"rel-zz-late asks about {event.tool_name}", updated_input={"command": "ls -la"}
    )


@hookimpl
def post_tool(event):
    return Result(additional_context="rel-zz-late after the tool", system_message="rel-zz-late note")


@hookimpl
def session_start(event):
    return Result(additional_context="rel-zz-late at start")


@hookimpl
def user_prompt_submit(event):
    return Result(system_message="rel-zz-late saw the prompt")


@hookimpl
def stop(event):
    if event.stop_hook_active:
        return None
    return Result(block=True, reason="rel-zz-late wants one more check")
