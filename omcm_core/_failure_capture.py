"""How ``omcm_core.testing`` sees a plugin fail, where the core would isolate it.

The core keeps only a one-line description of a plugin's failure and answers
without the plugin; a test of that plugin wants the exception itself. Kept out
of ``omcm_core.testing`` so that module stays the list of what authors use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class PluginFailed(AssertionError):
    """A plugin under test failed and its own exception is not at hand to re-raise.

    ``omcm_dispatch``: it overran its budget or returned something not a Result
    (a plugin that raises has its own exception re-raised instead).
    ``run_hook``: it raised or returned garbage in the subprocess; the message is
    the error the core logged.
    """


def raise_first(problem: tuple[str, str, Any]) -> None:
    name, hook, error = problem
    if isinstance(error, BaseException):
        if hasattr(error, "add_note"):  # Python 3.11+: say which plugin, under the traceback
            error.add_note(
                f"raised by omcm plugin {name!r} in its {hook} hook (omcm_dispatch(..., strict=False) isolates it)"
            )
        raise error
    raise PluginFailed(f"omcm plugin {name!r} failed in its {hook} hook: {error}")


def recording_manager() -> Any:
    """A core Manager that also keeps what each failing plugin raised, for strict tests.

    The core keeps only a one-line description of a failure; the wrapper keeps the
    exception object (traceback included) and re-raises it so the core still
    handles the failure exactly as in production.
    """
    from omcm_core._runtime.manager import Manager

    class RecordingManager(Manager):
        def __init__(self) -> None:
            super().__init__()
            self.problems: list[tuple[str, str, Any]] = []

        def call(self, hook: str, chosen: Any, *args: Any, **kwargs: Any) -> Any:
            wrapped = [(name, self._recording(name, hook, function), argnames) for name, function, argnames in chosen]
            report = super().call(hook, wrapped, *args, **kwargs)
            raised = {name for name, _hook, _error in self.problems}
            for failure in report.failures:
                if failure.plugin not in raised:
                    self.problems.append((failure.plugin, hook, f"{failure.kind}: {failure.detail}"))
            return report

        def _recording(self, name: str, hook: str, function: Any) -> Any:
            def call(**kwargs: Any) -> Any:
                try:
                    return function(**kwargs)
                except BaseException as exc:
                    self.problems.append((name, hook, exc))
                    raise

            return call

    return RecordingManager()


def size_of(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def logged_failures(log: Path, start: int) -> list[dict]:
    """``plugin_failed`` lines (raised or garbage) written to ``log`` after byte ``start``."""
    try:
        with open(log, "rb") as handle:
            handle.seek(start if start <= log.stat().st_size else 0)  # rotated or replaced: read it all
            lines = handle.read().splitlines()
    except OSError:
        return []
    failures = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("event") == "plugin_failed" and entry.get("kind") != "timeout":
            failures.append(entry)
    return failures
