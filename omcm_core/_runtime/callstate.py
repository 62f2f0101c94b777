"""Give one call, inside the warm dispatcher, the caller's process state; take it back after.

In process, a plugin runs with the hook's own umask, time zone, working
directory and environment. The dispatcher is one long-lived process serving
many callers, so for each call it takes them from the request: the umask
(files a plugin creates get the caller's modes), the environment subset
(``omcm_core._runtime.wire.call_env``: OMCM_LOG_LEVEL, TZ, LANG... as the caller
has them, absent when the caller has none), ``time.tzset()`` when TZ differs,
and the working directory. Calls run one at a time, so this is safe; only a
plugin thread that overran its budget may still run meanwhile, and the
dispatcher retires after such a call.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, MutableMapping

from omcm_core._runtime import wire

_PREFIXES = tuple(p.decode() for p in wire.ENV_PREFIXES)
_NAMES = frozenset(n.decode() for n in wire.ENV_NAMES)


def _is_call_variable(name: str, extra: frozenset) -> bool:
    return name in _NAMES or name in extra or name.startswith(_PREFIXES) or any(name.startswith(p) for p in extra if p)


def forget_passed(environ: MutableMapping[str, str]) -> list[str]:
    """Remove what the starting caller passed with ``OMCM_PASS_ENV`` from the dispatcher's own environment.

    The dispatcher is spawned with its first caller's environment subset; a
    variable that caller chose to pass would otherwise stay for every later
    call, of every session. Each call brings its own (:func:`applied`).
    """
    extra = frozenset(n.strip().rstrip("*") for n in environ.get("OMCM_PASS_ENV", "").split(",") if n.strip())
    names = [k for k in environ if k not in _NAMES and not k.startswith(_PREFIXES) and _is_call_variable(k, extra)]
    for name in names:
        del environ[name]
    environ.pop("OMCM_PASS_ENV", None)
    return names


@contextlib.contextmanager
def applied(umask: int, cwd: str, env: Mapping[str, str]) -> Iterator[None]:
    """The process-wide state of one call: umask, environment, TZ, working directory."""
    extra = frozenset(n.strip().rstrip("*") for n in env.get("OMCM_PASS_ENV", "").split(",") if n.strip())
    saved = {k: v for k, v in os.environ.items() if _is_call_variable(k, extra) or k in env}
    tz = os.environ.get("TZ")
    for name in saved:
        if name not in env:
            del os.environ[name]
    for name, value in env.items():
        if saved.get(name) != value:
            os.environ[name] = value
    old_umask = os.umask(umask)
    if env.get("TZ") != tz:
        time.tzset()
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")  # gone or unreadable: plugins get a harmless folder rather than the last caller's
    try:
        yield
    finally:
        os.chdir("/")
        os.umask(old_umask)
        for name in env:
            if name not in saved:
                os.environ.pop(name, None)
        for name, value in saved.items():
            if os.environ.get(name) != value:
                os.environ[name] = value
        if os.environ.get("TZ") != env.get("TZ"):
            time.tzset()
