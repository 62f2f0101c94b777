"""The sections of ``omcm doctor``, in the order shown: a title and a function of the :class:`Probe`.

A section is one function ``probe -> iterable of Check`` (or of mappings with the
``--json`` keys: ``message``, ``level``, ``fix``...) plus one line here. A section
that raises is shown as one failed check; the others still run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from omcm_core._cli.doctor.configuration import configuration
from omcm_core._cli.doctor.events import hook_events
from omcm_core._cli.doctor.installation import installation
from omcm_core._cli.doctor.mcp_server import mcp_server
from omcm_core._cli.doctor.plugins import plugins
from omcm_core._cli.doctor.records import Check, Probe, as_check, error
from omcm_core._cli.doctor.registration import registration
from omcm_core._cli.doctor.runtime import daemon, errors
from omcm_core._cli.doctor.store import store
from omcm_core._cli.doctor.team import team_store
from omcm_core._cli.doctor.workers import workers

SectionFunction = Callable[[Probe], Iterable["Check | Mapping[str, Any]"]]

# Installation runs first: it decides whether the store may be opened (see Probe.store_blocked).
SECTIONS: list[tuple[str, SectionFunction]] = [
    ("Installation", installation),
    ("Registration in Claude Code settings", registration),
    ("Hook events of the installed Claude Code", hook_events),
    ("MCP server", mcp_server),
    ("Configuration", configuration),
    ("Store", store),
    ("Plugins", plugins),
    ("Daemon", daemon),
    ("Background workers", workers),
    ("Team store", team_store),
    ("Recent errors", errors),
]


def agent_sections(probe: Probe, agent: str) -> list[tuple[str, SectionFunction]]:
    """A section per other coding agent omcm is registered with; ``agent``: that one's, registered or not."""
    from omcm_core._cli.agent_setup import TITLES, setup_for

    return [
        (title, setup_for(name).doctor)
        for name, title in TITLES.items()
        if name == agent or (agent == "claude" and setup_for(name).installed(probe))
    ]


def run_sections(
    probe: Probe, sections: list[tuple[str, SectionFunction]] | None = None, agent: str = "claude"
) -> list[dict[str, Any]]:
    """Every section's checks, as ``[{"name": title, "checks": [Check, ...]}]``."""
    out = []
    if sections is None:
        sections = [*SECTIONS[:-1], *agent_sections(probe, agent), SECTIONS[-1]]  # recent errors stay last
    for title, function in sections:
        slug = title.split()[0].lower()
        checks: list[Check] = []
        try:
            for n, item in enumerate(function(probe)):
                checks.append(as_check(item, f"{slug}.{n}"))
        except Exception as exc:  # one broken check must not hide the others
            checks.append(error(f"{slug}.crashed", f"this check failed: {type(exc).__name__}: {exc}"))
        out.append({"name": title, "checks": checks})
    return out
