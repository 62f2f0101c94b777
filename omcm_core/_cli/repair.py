"""An upgrade repairs itself: a stale native client or registration is redone in the background.

Whatever replaced omcm's files (pip, pipx, uv, ``omcm plugins install``), the
warm dispatcher that the next hook call starts runs the new code, and asks
:func:`start` whether what ``omcm install`` registered still fits it: the
native client built from this source for this installation, and every
registered command naming this installation's client. If not, a detached
process registers omcm again where it was (``omcm install --settings``, which
rebuilds the native client) and removes binaries nothing names any more. No
hook waits for it: until it is done, calls are answered as before (the native
client hands what it cannot do to the Python one, which always answers).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from omcm_core._cli import native_client

MARK = "repair.json"
#: A repair started less than this long ago is not started again (a failing build must not loop).
QUIET_S = 600


def _client_paths(command: str) -> list[str]:
    """The client files a registered command runs: the native binary, or fast_hook.py."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [w for w in words if w.endswith("fast_hook.py") or "/omcm-hook-" in w]


def stale_settings(home: Path) -> tuple[str | None, list[Path]]:
    """(why, the settings files to register again) when the registration no longer fits this installation.

    Only files whose commands name this installation's client, or a client that is
    gone: another omcm installation sharing OMCM_HOME keeps its own registrations.
    """
    binary = native_client.binary_path(home)
    python = str(Path(native_client.__file__).resolve().parent.parent / "fast_hook.py")
    state = native_client.status(home)
    rebuild = (
        state.get("client") == "native"
        and state.get("path") == str(binary)
        and (native_client.outdated(home) or not binary.is_file())
    )
    why, found = None, []
    for manifest in sorted((home / "installs").glob("*.json")):
        try:
            data = json.loads(manifest.read_text())
            paths = [p for a in data["added"] for p in _client_paths(a["command"])]
            settings = Path(data["settings"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        gone = [p for p in paths if not os.path.exists(p)]
        ours = any(p in (str(binary), python) for p in paths)
        if gone:
            why = f"a registered client is gone ({gone[0]}): omcm was upgraded or moved"
        elif ours and rebuild:
            why = "the native client was built from another source or for another installation"
        else:
            continue
        if settings.exists():
            found.append(settings)
    return why, found


def start(home: Path, env: Mapping[str, str]) -> str | None:
    """Start the repair in the background if :func:`needed`; why, or None. Never raises."""
    try:
        why, files = stale_settings(home)
        if not files:
            return None
        mark = home / "bin" / MARK
        try:
            if time.time() - json.loads(mark.read_text())["at"] < QUIET_S:
                return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        from omcm_core.background import spawn_detached
        from omcm_core.files import atomic_write_json
        from omcm_core.paths import ensure_private_dir

        atomic_write_json(ensure_private_dir(home / "bin") / MARK, {"at": time.time(), "why": why})
        spawn_detached([sys.executable, "-m", "omcm_core._cli.repair"], env=dict(env))
        return why
    except Exception:  # the dispatcher's start must never fail for this
        return None


def main() -> int:
    """The detached repair: register again where the registration went stale, then drop binaries nothing names."""
    import subprocess

    from omcm_core import log
    from omcm_core._cli.invocation import Invocation

    inv = Invocation(dict(os.environ))
    log.configure(inv.home)
    logger = log.get_logger(component="repair")
    why, files = stale_settings(inv.home)
    logger.info("repair_started", why=why, settings=[str(f) for f in files])
    worst = 0
    for path in files:
        from omcm_core._cli.settings_file import reinstall_argv  # another agent's file keeps its --agent

        argv = [sys.executable, "-m", "omcm_core", *reinstall_argv(inv.home, path)]
        done = subprocess.run(argv, env=inv.env, capture_output=True, text=True, timeout=600)
        worst = max(worst, done.returncode)
    removed = native_client.prune(inv.home)
    logger.info("repair_done", exit_code=worst, removed=[str(p) for p in removed], still=stale_settings(inv.home)[0])
    return worst


if __name__ == "__main__":
    sys.exit(main())
