"""omcm: one dispatcher for every Claude Code hook, extended by pluggy plugins.

The public API is what ``__all__`` lists, each name documented in
``docs/writing-plugins.md`` (a test keeps it so):

- ``hookimpl``: marks your hook functions (the hooks: ``omcm_core.hookspecs``);
- ``Result``, ``Command`` and ``McpTool``: what hooks return;
- ``Event``, ``PreToolEvent``, ``PostToolEvent``, ``SessionStartEvent``,
  ``SessionEndEvent``, ``UserPromptEvent``, ``StopEvent``, ``PreCompactEvent``:
  the frozen records hooks receive;
- ``Context``: the ``ctx`` argument;
- ``EVENTS`` and ``EventSpec``: the table of Claude Code events omcm answers;
- the helper modules ``hookspecs``, ``store``, ``config``, ``files``,
  ``confined``, ``redact``, ``transcripts``, ``background``, ``local_socket``, ``after_answer``,
  ``team``, ``quoting`` and ``testing``.

``omcm_core._runtime`` (the dispatcher) and ``omcm_core._cli`` (the ``omcm``
command) are private and change without notice.

Everything is imported lazily: this package is on the path of every hook call,
and the thin ``omcm hook`` client must not pay for pluggy, attrs or cattrs.
"""

__version__ = "0.1.0"

_LAZY = {
    "hookimpl": "omcm_core.hookspecs",
    "Result": "omcm_core.records",
    "Command": "omcm_core.records",
    "McpTool": "omcm_core.records",
    "Event": "omcm_core.records",
    "PreToolEvent": "omcm_core.records",
    "PostToolEvent": "omcm_core.records",
    "SessionStartEvent": "omcm_core.records",
    "SessionEndEvent": "omcm_core.records",
    "UserPromptEvent": "omcm_core.records",
    "StopEvent": "omcm_core.records",
    "PreCompactEvent": "omcm_core.records",
    "Context": "omcm_core.context",
    "EVENTS": "omcm_core.events",
    "EventSpec": "omcm_core.events",
}
#: Modules a plugin author uses by name (``from omcm_core import store``).
MODULES = (
    "hookspecs",
    "store",
    "config",
    "files",
    "confined",
    "redact",
    "transcripts",
    "background",
    "local_socket",
    "after_answer",
    "team",
    "quoting",
    "testing",
)

__all__ = ["__version__", *_LAZY, *MODULES]


def __getattr__(name: str):
    import importlib

    if name in MODULES:
        return importlib.import_module(f"omcm_core.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'omcm_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
