"""Loading and saving the plugin's records, with every failure turned into a log line.

Nothing here raises for bad or hostile files: a symlinked ``.omc``, a FIFO, a
hard-linked or oversized state file is refused (``project_file_refused``), a
corrupt record is logged and treated as absent.
"""

from __future__ import annotations

from pathlib import Path

from omcm_core.confined import UnsafePathError
from omcm_persistent_mode import fsaccess, prd, state
from omcm_persistent_mode.state import RalphState, SessionState


def load_session(folder: Path, log) -> SessionState:
    try:
        data = fsaccess.read_home_json(folder, state.SESSION_FILE)
        return SessionState() if data is None else state.from_json(SessionState, data)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        log.error("session_state_unreadable", path=str(folder / state.SESSION_FILE), error=str(exc)[:200])
        return SessionState()


def save_session(folder: Path, session: SessionState) -> None:
    fsaccess.write_home_json(folder, state.SESSION_FILE, state.to_json(session))


def load_ralph(project: Path | None, session_id: str | None, log) -> RalphState | None:
    if project is None or not session_id:
        return None
    parts = state.ralph_parts(session_id)
    try:
        data = fsaccess.read_json(project, parts)
        return None if data is None else state.from_json(RalphState, data)
    except UnsafePathError as exc:
        log.warning("project_file_refused", why=str(exc))
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        log.error("ralph_state_unreadable", path=str(project.joinpath(*parts)), error=str(exc)[:200])
    return None


def save_ralph(project: Path | None, ralph: RalphState, log) -> bool:
    """True when written; False (logged) when the project refuses it."""
    if project is None:
        return False
    try:
        fsaccess.write_json(project, state.ralph_parts(ralph.session_id), state.to_json(ralph))
        return True
    except UnsafePathError as exc:
        log.warning("project_file_refused", why=str(exc))
    except OSError as exc:
        log.error("ralph_state_unwritable", project=str(project), error=str(exc)[:200])
    return False


def load_stories(project: Path | None, log) -> list:
    if project is None:
        return []
    try:
        return prd.stories(fsaccess.read_json(project, prd.PARTS))
    except UnsafePathError as exc:
        log.warning("project_file_refused", why=str(exc))
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        log.error("prd_unreadable", path=str(project.joinpath(*prd.PARTS)), error=str(exc)[:200])
    return []


def all_ralph(project: Path, log) -> list:
    """Every ralph state in the project, newest first (for ``omcm ralph``)."""
    found = []
    try:
        names = fsaccess.list_names(project, state.RALPH_DIR)
    except UnsafePathError as exc:
        log.warning("project_file_refused", why=str(exc))
        return []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            found.append(state.from_json(RalphState, fsaccess.read_json(project, (*state.RALPH_DIR, name))))
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            log.warning("ralph_state_skipped", name=name, error=str(exc)[:200])
    return sorted(found, key=lambda r: r.updated_at, reverse=True)


def load_prd_data(project: Path | None, log):
    """The parsed prd.json (None when missing, refused or unreadable)."""
    if project is None:
        return None
    try:
        return fsaccess.read_json(project, prd.PARTS)
    except UnsafePathError as exc:
        log.warning("project_file_refused", why=str(exc))
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        log.error("prd_unreadable", path=str(project.joinpath(*prd.PARTS)), error=str(exc)[:200])
    return None


def save_prd(project: Path | None, data, log) -> bool:
    if project is None:
        return False
    try:
        fsaccess.write_json(project, prd.PARTS, data, private=False)
        return True
    except UnsafePathError as exc:
        log.warning("project_file_refused", why=str(exc))
    except OSError as exc:
        log.error("prd_unwritable", project=str(project), error=str(exc)[:200])
    return False
