"""What is wrong with a plugin's hook functions, said so that the author knows what to change.

Pure functions over pluggy's view of a plugin: :func:`misspelt` (a hook name no
hookspec has), :func:`defaulted` (an argument with a default value, which pluggy
never passes) and :func:`signature_error` (pluggy's own refusal of an argument
the hookspec lacks), each giving the one-line ``why`` and the ``fix`` that
``omcm plugins`` and ``omcm doctor`` show.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from attrs import frozen


@frozen
class Mistake:
    """Why a plugin is refused, and the change that fixes it."""

    why: str
    fix: str


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name``, when one is close enough to be a typo."""
    import difflib  # only on a mistake: off the hook path

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def one_line(text: str) -> str:
    """``text`` on one line: a multi-line message (pluggy's, a traceback's) would break a table's layout."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def where(function: Any) -> str:
    """``file:line`` of a hook function's definition ("" when Python cannot tell)."""
    import inspect

    try:
        code = inspect.unwrap(function).__code__
    except (AttributeError, ValueError):
        return ""
    return f"{code.co_filename}:{code.co_firstlineno}"


def misspelt(plugin: str, found: Sequence[tuple[str, Any]], hooks: Iterable[str]) -> Mistake:
    """A plugin implementing ``(name, function)`` pairs no hookspec has (``hooks`` are the ones there are)."""
    hooks = list(hooks)
    changes = []
    for name, function in found:
        close = did_you_mean(name, hooks)
        at = where(function)
        change = (
            f"rename {name} → {close}"
            if close
            else f"rename or remove {name} (no hook is called that; docs/hooks.md lists them)"
        )
        changes.append(change + (f" ({at})" if at else ""))
    names = ", ".join(name for name, _ in found)
    return Mistake(f"invalid plugin: unknown hook(s) {names}", "; ".join(changes))


def defaulted(plugin: str, impls: Iterable[tuple[str, Any, Sequence[str]]]) -> Mistake | None:
    """The first ``(hook, function, kwargnames)`` whose argument has a default value, as a refusal.

    pluggy passes only arguments without a default: ``def pre_tool(event, ctx=None)`` would
    always get ``ctx=None`` and fail at run time, far from the mistake.
    """
    for hook, function, kwargnames in impls:
        if kwargnames:
            arg = kwargnames[0]
            at = where(function)
            return Mistake(
                f"invalid plugin: hook {hook}'s argument {arg!r} has a default value; omcm never passes it",
                f"remove the default of {arg} in {hook}" + (f" ({at})" if at else ""),
            )
    return None


_PLUGGY_ARGS = re.compile(r"for hook '(?P<hook>\w+)'.*Argument\(s\) \{(?P<args>[^}]*)\} are declared", re.S)


def signature_error(message: str, spec_args: Mapping[str, Sequence[str]]) -> Mistake:
    """pluggy's refusal of a hook's arguments (``message``) as a one-line why and the argument to change."""
    found = _PLUGGY_ARGS.search(message)
    if not found:
        return Mistake(f"invalid plugin: {one_line(message)}", "")
    hook = found["hook"]
    args = [a.strip().strip("'\"") for a in found["args"].split(",") if a.strip()]
    allowed = list(spec_args.get(hook, ()))
    changes = []
    for arg in args:
        close = did_you_mean(arg, allowed)
        changes.append(f"rename {arg} → {close}" if close else f"remove {arg}")
    why = f"invalid plugin: hook {hook} takes {', '.join(args)}, which its hookspec does not give"
    return Mistake(why, f"{'; '.join(changes)} in {hook} (it may take: {', '.join(allowed) or 'nothing'})")


def _inside(filename: str, source: str) -> bool:
    import os

    if not source or not filename:
        return False
    source = os.path.realpath(source)
    filename = os.path.realpath(filename)
    return filename == source or filename.startswith(source.rstrip(os.sep) + os.sep)


def _installed(source: str) -> bool:
    """Whether the plugin's code is a copy an installer put in site-packages (not the author's own files)."""
    parts = source.replace("\\", "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts


def failing_line(exc: BaseException, source: str) -> str:
    """``path:line: code`` of the plugin's own line ``exc`` came from ("" when none is the plugin's).

    The innermost frame inside ``source`` (the plugin's file or package folder) wins; a
    SyntaxError names its line itself. Any frame of omcm or of importlib is not the author's.
    For a plugin installed into site-packages there is none: the author's files are
    elsewhere, and a reinstall is what fixes a broken copy.
    """
    import linecache
    import traceback

    if _installed(source):
        return ""  # a copy pip made (a half-finished upgrade, a missing dependency): reinstalling fixes it
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno and _inside(exc.filename, source):
        code = (exc.text or linecache.getline(exc.filename, exc.lineno)).strip()
        return f"fix {exc.filename}:{exc.lineno}" + (f": {code}" if code else "")
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _inside(f.filename, source)]
    if not frames:
        return ""
    frame = frames[-1]
    code = (frame.line or "").strip()
    return f"fix {frame.filename}:{frame.lineno}" + (f": {code}" if code else "")
