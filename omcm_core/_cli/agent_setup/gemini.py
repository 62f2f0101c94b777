"""``omcm install --agent gemini``: omcm's hooks (and ``omcm mcp``) in gemini's own configuration."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from omcm_core._cli.doctor.records import Check, Probe, warning
from omcm_core._cli.invocation import Invocation


def install(args: argparse.Namespace, inv: Invocation, hooks: set[str]) -> int:
    raise NotImplementedError("omcm install --agent gemini")


def uninstall(args: argparse.Namespace, inv: Invocation) -> int:
    raise NotImplementedError("omcm uninstall --agent gemini")


def installed(probe: Probe) -> bool:
    """omcm is registered with gemini (its section then shows in a plain `omcm doctor`)."""
    return False


def doctor(probe: Probe) -> Iterable[Check]:
    yield warning("gemini.unbuilt", "omcm install --agent gemini is not built yet")
