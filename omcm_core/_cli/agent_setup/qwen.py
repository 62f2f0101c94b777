"""``omcm install --agent qwen``: omcm's hooks (and ``omcm mcp``) in qwen's own configuration."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from omcm_core._cli.doctor.records import Check, Probe, warning
from omcm_core._cli.invocation import Invocation


def install(args: argparse.Namespace, inv: Invocation, hooks: set[str]) -> int:
    raise NotImplementedError("omcm install --agent qwen")


def uninstall(args: argparse.Namespace, inv: Invocation) -> int:
    raise NotImplementedError("omcm uninstall --agent qwen")


def installed(probe: Probe) -> bool:
    """omcm is registered with qwen (its section then shows in a plain `omcm doctor`)."""
    return False


def doctor(probe: Probe) -> Iterable[Check]:
    yield warning("qwen.unbuilt", "omcm install --agent qwen is not built yet")
