"""``omcm install|uninstall|doctor --agent NAME``: omcm registered with another coding agent.

One module per agent (``codex``, ``gemini``, ``qwen``), each with the same three functions, so
``_cli/settings.py`` and doctor know nothing about any agent's files (docs/agents.md, "Installing
per agent")::

    install(args, inv, hooks) -> int     # hooks: the hookspec names enabled plugins implement
    uninstall(args, inv) -> int          # removes exactly what install added
    installed(probe) -> bool             # registered with that agent: doctor shows its section
    doctor(probe) -> iterable of Check   # the agent's doctor section

``claude`` (the default) is not here: it is ``_cli/settings.py`` itself.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Every agent ``--agent`` takes; the first is the default.
AGENTS = ("claude", "codex", "gemini", "qwen")
#: The doctor section title per agent module.
TITLES = {"codex": "Codex CLI", "gemini": "Gemini CLI", "qwen": "Qwen Code"}


def setup_for(agent: str) -> ModuleType:
    """The module that installs omcm for ``agent`` (one of :data:`AGENTS` but ``claude``)."""
    if agent not in TITLES:
        raise ValueError(f"no agent setup for {agent!r}")
    return importlib.import_module(f"omcm_core._cli.agent_setup.{agent}")
