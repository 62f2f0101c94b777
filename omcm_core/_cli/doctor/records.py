"""What a doctor check returns, and what every check may look at."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from omcm_core._runtime.manager import Manager
    from omcm_core.config import Config
    from omcm_core.store import Store

#: "ok" passed, "warning" deserves a look, "error" is broken (doctor exits 1), "info" is a plain fact.
LEVELS = ("ok", "info", "warning", "error")


@attrs.frozen(kw_only=True)
class Check:
    """One line of ``omcm doctor``: a finding, and the one command that fixes it."""

    #: A stable name for machines ("home.mode", "breaker.tool-counter").
    id: str
    message: str
    level: str = attrs.field(default="ok", validator=attrs.validators.in_(LEVELS))
    #: The one command (or edit) that fixes it; None when there is nothing to do.
    fix: str | None = None
    #: Extra lines shown under the message ("key: value").
    details: tuple[str, ...] = ()
    #: Facts for ``--json`` (JSON-friendly values only).
    data: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.level in ("ok", "info")

    def as_json(self) -> dict[str, Any]:
        out = {"id": self.id, "ok": self.ok, "level": self.level, "message": self.message, "fix": self.fix}
        if self.details:
            out["details"] = list(self.details)
        if self.data is not None:
            out["data"] = dict(self.data)
        return out


def ok(id: str, message: str, **kw: Any) -> Check:
    return Check(id=id, message=message, level="ok", **kw)


def info(id: str, message: str, **kw: Any) -> Check:
    return Check(id=id, message=message, level="info", **kw)


def warning(id: str, message: str, fix: str | None = None, **kw: Any) -> Check:
    return Check(id=id, message=message, level="warning", fix=fix, **kw)


def error(id: str, message: str, fix: str | None = None, **kw: Any) -> Check:
    return Check(id=id, message=message, level="error", fix=fix, **kw)


def as_check(item: Check | Mapping[str, Any], default_id: str) -> Check:
    """A :class:`Check` from a check function's answer; a plain mapping with the JSON keys works too.

    So a section written elsewhere (``{"message": ..., "level": "error", "fix": ...}``) needs no import.
    """
    if isinstance(item, Check):
        return item
    level = item.get("level") or ("ok" if item.get("ok", True) else "error")
    return Check(
        id=str(item.get("id") or default_id),
        message=str(item.get("message", "")),
        level=level if level in LEVELS else "error",
        fix=item.get("fix"),
        details=tuple(str(d) for d in item.get("details", ())),
        data=item.get("data"),
    )


class Probe:
    """What the checks share: paths, the environment, and parts made once, on first use."""

    def __init__(
        self,
        home: Path,
        project: Path | None,
        env: Mapping[str, str],
        manager: Manager | None = None,
        config: Config | None = None,
        fix: bool = False,
    ) -> None:
        self.home, self.project, self.env, self.fix = home, project, env, fix
        self._manager, self._config = manager, config
        #: Set by the Installation checks: whether opening the store (which makes OMCM_HOME
        #: private, and creates it) would change something the user has not agreed to.
        self.store_blocked: str | None = None

    @cached_property
    def manager(self) -> Manager:
        from omcm_core._runtime.manager import Manager

        return self._manager or Manager.from_environment(self.env)

    @cached_property
    def config(self) -> Config:
        from omcm_core.config import Config

        return self._config or Config.load(self.home, self.project, self.env)

    @cached_property
    def store(self) -> Store:
        from omcm_core.store import Store

        return Store(self.home)

    def tilde(self, path: Path | str) -> str:
        """``path`` with the user's home shown as ``~`` (shorter, and what people type)."""
        text, user_home = str(path), self.env.get("HOME") or str(Path.home())
        if user_home not in ("", "/") and (text == user_home or text.startswith(user_home + "/")):
            return "~" + text[len(user_home) :]
        return text
