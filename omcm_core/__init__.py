"""omcm: one dispatcher for every Claude Code hook, extended by pluggy plugins.

Plugin authors need two names from here::

    from omcm_core import hookimpl, Result

Everything is imported lazily: this package is on the path of every hook call,
and the thin ``omcm hook`` client must not pay for pluggy, attrs or cattrs.
"""

__version__ = "0.1.0"

_LAZY = {
    "hookimpl": "omcm_core.hookspecs",
    "hookspec": "omcm_core.hookspecs",
    "Result": "omcm_core.records",
    "Command": "omcm_core.records",
    "Event": "omcm_core.records",
    "PreToolEvent": "omcm_core.records",
    "PostToolEvent": "omcm_core.records",
    "SessionStartEvent": "omcm_core.records",
    "SessionEndEvent": "omcm_core.records",
    "UserPromptEvent": "omcm_core.records",
    "StopEvent": "omcm_core.records",
    "PreCompactEvent": "omcm_core.records",
    "Context": "omcm_core.context",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'omcm_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
