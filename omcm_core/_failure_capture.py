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


class ContextCut(PluginFailed):
    """The context budget cut a plugin's ``additional_context`` (production keeps the head and logs a warning)."""


def raise_context_cut(cut: dict) -> None:
    __tracebackhide__ = True
    raise ContextCut(
        f"omcm plugin {cut['plugin']!r} gave {cut['asked']:,} characters of additional_context on {cut['hook_event']}; "
        f"{cut['setting']} kept {cut['kept']:,} of them. Give less (Claude Code shows at most 10,000 per hook), "
        "or dispatch with strict=False to test what is kept"
    )


def raise_first(problem: tuple[str, str, Any]) -> None:
    __tracebackhide__ = True  # pytest shows the plugin's frames, not this module's
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
                    value, line = returned_from(function, kwargs)
                except BaseException as exc:
                    self.problems.append((name, hook, exc))
                    raise
                if line and value is not None and _checked_problem(value):
                    self.problems.append((name, hook, f"{_checked_problem(value)}, at {line}"))
                return value

            return call

    return RecordingManager()


def _checked_problem(value: Any) -> str | None:
    from omcm_core._runtime.manager import _checked

    status, detail = _checked("ok", value)
    return detail if status == "garbage" else None


def returned_from(function: Any, kwargs: dict) -> tuple[Any, str]:
    """Call ``function``; its value and ``file:line: code`` of the ``return`` that gave it.

    A Result the core cannot render fails far from the plugin (in the merge); the
    author needs the line that returned it. A profile function sees the frame of
    ``function`` return (test-only: it slows the call).
    """
    import linecache
    import sys

    code = getattr(function, "__code__", None)
    seen: list[tuple[str, int]] = []

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "return" and code is not None and frame.f_code is code:
            seen.append((code.co_filename, frame.f_lineno))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        value = function(**kwargs)
    finally:
        sys.setprofile(previous)
    if not seen:
        return value, ""
    filename, lineno = seen[-1]
    return value, f"{filename}:{lineno}: {linecache.getline(filename, lineno).strip()}"


def size_of(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def logged_failures(log: Path, start: int) -> list[dict]:
    """``plugin_failed`` (raised or garbage) and ``context_cut`` lines written to ``log`` after byte ``start``."""
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
        if not isinstance(entry, dict):
            continue
        if entry.get("event") == "context_cut" or (
            entry.get("event") == "plugin_failed" and entry.get("kind") != "timeout"
        ):
            failures.append(entry)
    return failures
