"""The caller's local time, for ``YYYY-MM-DD HH:MM`` stamps.

Under the warm dispatcher this process serves many callers, so its own ``TZ``
may not be the caller's: the zone comes from the caller's ``TZ`` (an IANA name
or a zoneinfo file path, with or without a leading colon), else from the
system's ``/etc/localtime``. A ``TZ`` that cannot be read falls back to the
system's zone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone, tzinfo


def zone(env: Mapping[str, str]) -> tzinfo | None:
    """The caller's zone; None means "this process's local zone" (the same thing)."""
    name = env.get("TZ")
    if name == os.environ.get("TZ"):
        return None
    try:
        import zoneinfo

        if not name:
            with open("/etc/localtime", "rb") as fh:
                return zoneinfo.ZoneInfo.from_file(fh)
        name = name[1:] if name.startswith(":") else name
        if os.path.isabs(name):
            with open(name, "rb") as fh:
                return zoneinfo.ZoneInfo.from_file(fh)
        return zoneinfo.ZoneInfo(name)
    except (OSError, ValueError, KeyError, ImportError):  # ZoneInfoNotFoundError is a KeyError
        return None


def now(env: Mapping[str, str]) -> datetime:
    """The caller's wall-clock time, naive, to the minute's precision and beyond."""
    utc = datetime.now(timezone.utc)
    tz = zone(env)
    return (utc.astimezone(tz) if tz is not None else utc.astimezone()).replace(tzinfo=None)
