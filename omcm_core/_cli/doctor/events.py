"""Does the installed Claude Code send hook events omcm does not know?

A newer client than this omcm may add events: they reach plugins only through
the generic ``any_event`` hook, and ``omcm install`` does not register them.
The client's binary holds its list of event names as one JSON array (in
2.1.330 and 2.1.332 it starts ``["PreToolUse","PostToolUse",``); reading it is
the only way to learn the list without running a session.
"""

from __future__ import annotations

import json
import mmap
import shutil
from collections.abc import Iterator
from pathlib import Path

from omcm_core._cli.doctor.records import Check, Probe, info, ok, warning

#: How the client's own event list starts in its binary.
MARKER = b'["PreToolUse","PostToolUse",'
#: Bound on the list's length: 34 names take about 600 bytes.
MAX_LIST_BYTES = 8192


def client_events(binary: Path) -> list[str] | None:
    """The hook event names compiled into the Claude Code ``binary``, or None when not found."""
    try:
        with binary.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            start = data.find(MARKER)
            if start < 0:
                return None
            end = data.find(b"]", start, start + MAX_LIST_BYTES)
            if end < 0:
                return None
            names = json.loads(data[start : end + 1].decode("ascii"))
    except (OSError, ValueError):
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) and n.isalnum() for n in names):
        return None
    return names


def _binary(probe: Probe) -> Path | None:
    found = shutil.which("claude", path=probe.env.get("PATH"))
    if found is None:
        return None
    path = Path(found).resolve()
    # npm's launcher may stand beside the platform package that holds the real binary.
    candidates = [path, *sorted(path.parent.parent.parent.glob("claude-code-*/claude"))]
    return next((c for c in candidates if c.is_file() and c.stat().st_size > 1_000_000), None)


def hook_events(probe: Probe) -> Iterator[Check]:
    """One line: the client's events omcm does not know, if any."""
    from omcm_core.events import EVENTS

    binary = _binary(probe)
    names = client_events(binary) if binary is not None else None
    if names is None:
        yield info("events.client", "the installed Claude Code's list of hook events could not be read")
        return
    unknown = [name for name in names if name not in EVENTS]
    data = {"binary": str(binary), "client_events": names, "unknown": unknown}
    if not unknown:
        yield ok("events.client", f"omcm knows all {len(names)} hook events of the installed Claude Code", data=data)
        return
    yield warning(
        "events.unknown",
        f"the installed Claude Code has hook events omcm does not know: {', '.join(unknown)}; "
        "plugins get them only through the any_event hook, and omcm install does not register them",
        fix="upgrade omcm the way you installed it (pipx upgrade, uv tool upgrade, or `claude plugin update omcm`)",
        data=data,
    )
