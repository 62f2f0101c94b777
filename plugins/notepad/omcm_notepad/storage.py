"""Every file access of the notepad plugin: confined to the project, never through a symlink.

The project folder is untrusted: a cloned repository can ship ``.omc`` or
``.omc/notepad.md`` as a symlink to ``~/.ssh/id_ed25519`` (read: its text would
be injected into Claude's context) or to ``~/.bashrc`` (write: replaced by
notes). The helpers of ``omcm_core.confined`` walk the project with
``O_NOFOLLOW``: ``.omc`` must be a real folder, ``notepad.md`` a regular file
with one link (a hard link may be another name for a file outside) and at most
``MAX_READ`` bytes, ``.notepad.lock`` no symlink. Anything else raises
``UnsafePathError`` (an ``OSError``; logged by the core as
``unsafe_path_refused``) and the plugin acts as if there were no notepad.

Writes are atomic (a temporary file renamed over ``notepad.md``) under an
exclusive lock on ``.omc/.notepad.lock``, so parallel hooks never lose an entry.
New files get mode 0666 minus the process umask (the caller's umask, or the warm
dispatcher's, which inherits the umask of the client that started it); a
rewritten notepad keeps the mode it had.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from omcm_core.confined import lock_confined, read_confined_bytes, write_confined_atomic

FOLDER = ".omc"
FILENAME = "notepad.md"
LOCK = f"{FOLDER}/.notepad.lock"
#: Refuse to read a notepad bigger than this (the cap is 8 KB; this is only a guard).
MAX_READ = 1 << 20


def relative_path() -> str:
    return f"{FOLDER}/{FILENAME}"


def read(project: Path) -> bytes | None:
    """The notepad's bytes, or None when there is none. Raises ``UnsafePathError``."""
    try:
        return read_confined_bytes(project, relative_path(), max_bytes=MAX_READ, single_link=True)
    except FileNotFoundError:
        return None


def update(project: Path, change, timeout: float, create: bool = True) -> object:
    """Read, ``change(bytes_or_None) -> (new_bytes_or_None, answer)``, write; returns answer.

    The whole cycle runs under the lock; ``new_bytes`` None means "leave it".
    Without ``create`` a project with no ``.omc`` is left as it is (no lock file).
    Raises ``UnsafePathError`` or ``TimeoutError``.
    """
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(lock_confined(project, LOCK, timeout, create_dirs=create))
        except FileNotFoundError:
            if create:  # the project folder itself is gone: say so, do not pretend it was saved
                raise
            return change(None)[1]  # no .omc and not asked to make one
        data = read(project)
        new, answer = change(data)
        if new is not None and new != data:
            write_confined_atomic(project, relative_path(), new, keep_mode=True)
    return answer
