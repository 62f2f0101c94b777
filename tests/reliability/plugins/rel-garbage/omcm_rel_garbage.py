"""Returns something that is not a usable Result; the kind comes from ``REL_GARBAGE``.

- ``dict``: a plain dict shaped like Claude Code's answer
- ``string``: a string
- ``list-input``: a Result whose updated_input is a list
- ``object-input``: a Result whose updated_input holds a non-JSON object
- ``nan-input``: a Result whose updated_input holds NaN (not valid JSON)
- ``block-string``: a Result whose block is a string
"""

from omcm_core import Result, hookimpl


def _garbage(ctx):
    kind = ctx.env.get("REL_GARBAGE", "dict")
    if kind == "dict":
        return {"hookSpecificOutput": {"permissionDecision": "deny"}, "decision": "block"}
    if kind == "string":
        return "deny"
    if kind == "list-input":
        return Result(updated_input=["not", "a", "mapping"])
    if kind == "object-input":
        return Result(updated_input={"command": object()})
    if kind == "nan-input":
        return Result(updated_input={"timeout": float("nan")})
    if kind == "block-string":
        return Result(block="yes please", halt="no")
    raise ValueError(f"unknown REL_GARBAGE {kind!r}")


@hookimpl
def pre_tool(ctx):
    return _garbage(ctx)


@hookimpl
def post_tool(ctx):
    return _garbage(ctx)


@hookimpl
def session_start(ctx):
    return _garbage(ctx)


@hookimpl
def user_prompt_submit(ctx):
    return _garbage(ctx)
