"""Claude Code: omcm's native protocol, so the identity (byte-identical to omcm without an agent layer)."""

from __future__ import annotations

from omcm_core.agents.base import Agent

AGENT = Agent(name="claude", events={})
