"""``omcm install --agent codex``: omcm's hooks (and ``omcm mcp``) in codex's own configuration."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from omcm_core._cli.doctor.records import Check, Probe, warning
from omcm_core._cli.invocation import Invocation


def install(args: argparse.Namespace, inv: Invocation, hooks: set[str]) -> int:
    raise NotImplementedError("omcm install --agent codex")


def uninstall(args: argparse.Namespace, inv: Invocation) -> int:
    raise NotImplementedError("omcm uninstall --agent codex")


def installed(probe: Probe) -> bool:
    """omcm is registered with codex (its section then shows in a plain `omcm doctor`)."""
    return False


def doctor(probe: Probe) -> Iterable[Check]:
    yield warning("codex.unbuilt", "omcm install --agent codex is not built yet")
