"""What an operator command may need, each part made on first use and once per process.

Loading plugins imports every installed distribution's entry point, so only the
commands that read plugins (``plugins``, ``doctor``, ``install`` and the
plugins' own commands) touch :attr:`Invocation.manager`.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from omcm_core.paths import omcm_home

if TYPE_CHECKING:
    from omcm_core._runtime.manager import Manager
    from omcm_core.config import Config
    from omcm_core.context import Context


class Invocation:
    """One run of ``omcm COMMAND``: its environment and what is derived from it, lazily."""

    def __init__(self, env: dict[str, str], cwd: str | None = None) -> None:
        self.env = env
        self.cwd = os.getcwd() if cwd is None else cwd

    @cached_property
    def home(self) -> Path:
        return omcm_home(self.env)

    @cached_property
    def project(self) -> Path | None:
        from omcm_core._runtime.dispatch import resolve_project_dir

        return resolve_project_dir(self.env, self.cwd)

    @cached_property
    def manager(self) -> Manager:
        from omcm_core._runtime.manager import Manager

        return Manager.from_environment(self.env)

    @cached_property
    def config(self) -> Config:
        from omcm_core.config import Config

        return Config.load(self.home, self.project, self.env)

    def context(self, plugin: str) -> Context:
        from omcm_core.context import Context

        return Context(plugin, self.home, self.project, self.config, self.env)
