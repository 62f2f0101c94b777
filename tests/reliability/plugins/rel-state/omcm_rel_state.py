"""Replaces ``<data_dir>/state.bin`` atomically with ``REL_STATE_BYTES`` bytes of ``REL_STATE_FILL``."""

from omcm_core import hookimpl


@hookimpl
def post_tool(event, ctx):
    from omcm_core.files import atomic_write_bytes

    size = int(ctx.env.get("REL_STATE_BYTES", "1000"))
    fill = ctx.env.get("REL_STATE_FILL", "a").encode()[:1]
    atomic_write_bytes(ctx.data_dir() / "state.bin", fill * size)
    ctx.log.info("rel_state_written", bytes=size)
    return None
