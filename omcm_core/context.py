"""What a plugin gets besides the event: store, config, paths, language, logger."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from omcm_core.config import Config, CoreConfig, resolve_language
from omcm_core.log import Logger, get_logger
from omcm_core.paths import ensure_private_dir, session_dir
from omcm_core.store import Store

T = TypeVar("T")


def _getcwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # the folder was deleted under us
        return "/"


class Context:
    """One per plugin per dispatch. Everything is created on first use.

    :ivar plugin: the plugin's name (its entry-point name).
    :ivar home: ``OMCM_HOME``; user-level state lives here, owner-only.
    :ivar project_dir: ``CLAUDE_PROJECT_DIR``, else the payload's ``cwd``, else None.
    :ivar env: the hook call's environment (read-only): the variables a call may depend
        on (OMCM_*, CLAUDE_*, locale, TZ, HOME, PATH, XDG_*...), the same in process and
        under the warm dispatcher. Read this, not ``os.environ``.
    :ivar cwd: the hook call's working directory. Read this, not ``os.getcwd()``.
    :ivar log: a logger bound to ``plugin=<name>``; lines go to OMCM_HOME/logs.
    """

    def __init__(
        self,
        plugin: str,
        home: Path,
        project_dir: Path | None,
        config: Config,
        env: Mapping[str, str] | None = None,
        store: Store | None = None,
        cwd: str | None = None,
    ) -> None:
        self.plugin = plugin
        self.home = home
        self.project_dir = project_dir
        self.env: Mapping[str, str] = MappingProxyType(dict(env) if env is not None else {})
        # The warm dispatcher enters the caller's folder for the call (omcm_core._runtime.callstate).
        self.cwd = cwd if cwd is not None else _getcwd()
        self._config = config
        self._store = store
        self._owns_store = store is None  # a store handed in belongs to the dispatcher
        self.log: Logger = get_logger(plugin=plugin)

    @property
    def store(self) -> Store:
        """The shared SQLite store (``OMCM_HOME/omcm.db``); connects on first use."""
        if self._store is None:
            self._store = Store(self.home)
        return self._store

    def config(self, schema: type[T]) -> T:
        """This plugin's config section (``[<plugin name>]``) as a ``schema`` instance."""
        return self._config.section(self.plugin, schema)

    @property
    def core_config(self) -> CoreConfig:
        return self._config.section("core", CoreConfig)

    @property
    def language(self) -> str:
        """ "en" or "ko", shared by every plugin: ``[core] language``, else LANG."""
        return resolve_language(self.core_config.language, self.env)

    def session_dir(self, session_id: str | None, create: bool = True) -> Path:
        """``OMCM_HOME/sessions/<id>`` for an untrusted id; never outside OMCM_HOME."""
        path = session_dir(self.home, session_id)
        if create:
            ensure_private_dir(path)
        return path

    def data_dir(self, create: bool = True) -> Path:
        """``OMCM_HOME/plugins/<plugin>``: a private folder for this plugin's files."""
        path = self.home / "plugins" / self.plugin
        if create:
            ensure_private_dir(path)
        return path

    def unreported_tool_calls(self, event, settled: bool = False) -> list:
        """Tool calls in this event's transcripts that no hook reported, not yet handed to this plugin.

        Claude Code fires no hook for errors it finds while checking a tool's
        input ("File has not been read yet"); the transcript has them. Each call
        is handed to each plugin once, in transcript order, input and result
        masked (:class:`omcm_core.transcript_tail.ToolCall`; ``call.as_event()``
        gives the PostToolUse/PostToolUseFailure event Claude Code would have
        sent). Cheap when nothing was appended: one ``fstat`` per transcript.
        ``settled`` (implied at Stop, SubagentStop and SessionEnd) also hands
        out results younger than two seconds and reads the subagents' files.
        """
        import os

        from omcm_core import transcript_tail
        from omcm_core.transcripts import agent_without_call_ids

        if agent_without_call_ids(event):
            return []  # every reported call would be handed out again as unreported: recorded twice
        name = getattr(event, "hook_event_name", "")
        settled = settled or name in ("Stop", "SubagentStop", "SessionEnd")
        paths = [p for p in transcript_tail.transcripts_of(event, settled) if os.path.isfile(p)]
        if not paths:
            return []  # no transcript here (an old client, a test): nothing to read, nothing to note
        if name in ("PostToolUse", "PostToolUseFailure"):
            transcript_tail.note_reported(self.store, getattr(event, "tool_use_id", None))
        return transcript_tail.unreported_calls(self.store, self.plugin, paths, settled)

    def close(self) -> None:
        if self._store is not None and self._owns_store:
            self._store.close()
