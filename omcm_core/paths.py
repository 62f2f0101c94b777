"""Where omcm keeps things: OMCM_HOME (owner-only) and the project directory."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_COMPONENT = 100


def omcm_home(env: Mapping[str, str] | None = None) -> Path:
    """``OMCM_HOME``, else ``~/.omcm``."""
    env = os.environ if env is None else env
    value = env.get("OMCM_HOME")
    if value:
        return Path(value).expanduser()
    return Path.home() / ".omcm"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents, each readable by the owner alone."""
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:  # a concurrent dispatcher made it first
            pass
    try:
        if os.name == "posix" and (path.stat().st_mode & 0o077):
            path.chmod(0o700)
    except OSError:
        pass
    return path


def safe_component(name: str) -> str:
    """A single, harmless path component for an untrusted id such as ``session_id``.

    Ids made only of letters, digits, dot, dash and underscore (every real
    Claude Code session id) are kept as they are; anything else (``../``, ``/``,
    NUL, very long ids) is replaced and suffixed with a hash of the original so
    that two different ids never share a directory.
    """
    clean = _SAFE.sub("_", name)[:_MAX_COMPONENT]
    if clean == name and clean not in ("", ".", ".."):
        return clean
    from omcm_core._runtime.digest import sha256  # not hashlib: it loads OpenSSL, on every hook's path

    digest = sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{clean.strip('.') or 'id'}-{digest}"


def session_dir(home: Path, session_id: str | None) -> Path:
    """``OMCM_HOME/sessions/<safe id>``; without a session id, OMCM_HOME itself."""
    if not session_id:
        return home
    return home / "sessions" / safe_component(session_id)


def write_private_json(path: Path, data: object) -> bool:
    """Replace the cache file ``path`` with ``data`` atomically, owner-only, never through a link.

    For caches only (no fsync): a failure returns False and means the next run
    rebuilds what it would have read.
    """
    import json

    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        ensure_private_dir(path.parent)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(tmp, flags, 0o600), "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def project_dir(env: Mapping[str, str], cwd: str | None) -> Path | None:
    """CLAUDE_PROJECT_DIR, else cwd, only if it is an existing absolute directory here.

    A Windows path replayed on Linux (``C:\\Users\\...``) is relative here and
    would make plugins write below the dispatcher's own working directory. Here,
    not with the payload's records, so that ``omcm search``'s route finds the
    project without importing them.
    """
    for candidate in (env.get("CLAUDE_PROJECT_DIR"), cwd):
        if not candidate or "\x00" in candidate:
            continue
        path = Path(candidate)
        if path.is_absolute() and path.is_dir():
            return path
    return None
