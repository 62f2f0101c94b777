"""A careless plugin: logs the whole tool call, then fails with the command in the message.

Whatever secrets the call carried must still never reach a file under
OMCM_HOME: the core masks log lines and the failure text it keeps.
"""

from omcm_core import hookimpl


@hookimpl
def post_tool(event, ctx):
    ctx.log.info("rel_leaky_saw", tool_input=event.tool_input, tool_response=event.tool_response, extra=event.extra)
    raise RuntimeError(f"rel-leaky could not handle {event.tool_input.get('command')!r}")
