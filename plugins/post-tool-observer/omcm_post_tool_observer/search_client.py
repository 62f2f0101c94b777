"""The CLI's side of the search server (search_server.py): ask it, or start it and search in process.

A search that needs the model (semantic, hybrid) costs a new process about a
second before it ranks anything: numpy, the model, the vector mapping. The
server keeps them. :func:`ask` returns its answer only when everything checks:
the socket's folder is ours (a real folder, mode 0700), the peer runs as us, the
server runs the same code and masking rules and has the same store file open,
and it answers within the wait (``OMCM_SEARCH_SERVER_WAIT_S``, default 5 s) with
a well-formed result. Anything else returns :data:`NOT_SERVED` and the caller
searches in process, so the result is never different and the wait is bounded.
``OMCM_SEARCH_SERVER=0`` turns the server off.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

#: What :func:`ask` returns when the server did not answer: search in process.
NOT_SERVED = object()
WAIT_VAR = "OMCM_SEARCH_SERVER_WAIT_S"
SWITCH_VAR = "OMCM_SEARCH_SERVER"
DEFAULT_WAIT_S = 5.0
#: The longest answer read (10,000 hits of 10 KB outputs fit; more is not an answer of ours).
MAX_ANSWER = 256 << 20
#: Core modules whose change changes what a search returns (with the plugin's own files and the rules' stamp).
CORE_FILES = ("store.py", "redact.py", "_redact_rules.py", "_redact_library.py", "paths.py")
#: The keys of a hit as search._row makes them, and the types their values may have.
_TEXT = (str, type(None))
HIT_TYPES = {
    "event_id": _TEXT,
    "ts": (int, float),
    "session_id": _TEXT,
    "tool": _TEXT,
    "success": (bool,),
    "file": _TEXT,
    "command": _TEXT,
    "error": _TEXT,
    "output": _TEXT,
    "snippet": _TEXT,
    "score": (int, float, type(None)),
}


def socket_path(home: Path) -> str:
    """``OMCM_HOME/run/search-<installation and home>.sock``: beside the dispatcher's, never in a shared folder."""
    from omcm_core import local_socket

    return local_socket.socket_path(home, "search")


def code_stamp() -> str:
    """What the code that searches is: the plugin's and the store's sources, the folders on the path, Python, the rules.

    The server refuses a client whose stamp differs and leaves when its own
    files change (an upgrade, an uninstall): it never answers with other code.
    """
    import omcm_core
    from omcm_core.redact import rules_version

    here = os.path.dirname(os.path.abspath(__file__))
    core = os.path.dirname(os.path.abspath(omcm_core.__file__))
    try:
        names = sorted(os.path.join(here, n) for n in os.listdir(here) if n.endswith(".py"))
    except OSError:
        names = []
    parts: list = [sys.version, sys.executable, rules_version()]
    # The folders on the path (not the first: the script's or working folder, which differ between the two
    # ends): installing or removing a distribution there (numpy, the model) changes their mtime.
    for name in [*names, *(os.path.join(core, n) for n in CORE_FILES), *sys.path[1:]]:
        try:
            st = os.stat(name)
            parts.append((name, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            parts.append((name, -1))
    return repr(parts)  # compared whole (a few KB): no digest to import


def store_id(path: os.PathLike | str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def wait_s(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get(WAIT_VAR) or DEFAULT_WAIT_S)
    except ValueError:
        return DEFAULT_WAIT_S
    return value if 0 < value <= 600 else DEFAULT_WAIT_S


def ask(home: Path, store_path: Path, mode: str, text: str, filters: dict, limit: int, env: Mapping[str, str]):
    """The server's hits for this search (a list, or None where semantic ranking is unavailable), or NOT_SERVED."""
    if env.get(SWITCH_VAR) == "0" or os.name != "posix":  # no AF_UNIX or fcntl elsewhere: search in process
        return NOT_SERVED
    from omcm_core import local_socket

    path = socket_path(home)
    problem = local_socket.unsafe(path)
    if problem:
        _note("search_server_refused", reason=problem, socket=path)
        return NOT_SERVED
    current = store_id(store_path)
    if current is None:
        return NOT_SERVED
    request = {"op": "search", "code": code_stamp(), "store": current, "mode": mode, "text": text}
    request.update(filters=filters, limit=limit)
    answer = exchange(path, request, wait_s(env))
    if answer is None:
        start(home, path, env)  # none listening (or one that failed us): the next search finds a new one
        return NOT_SERVED
    hits = answer.get("hits")
    if answer.get("ok") is not True or not _well_formed(hits):
        return NOT_SERVED
    return hits


def _well_formed(hits) -> bool:
    if hits is None:
        return True
    return isinstance(hits, list) and all(
        isinstance(h, dict) and all(isinstance(h.get(k, ...), types) for k, types in HIT_TYPES.items()) for h in hits
    )


def exchange(path: str, request: dict, wait: float) -> dict | None:
    """One request, one answer (a JSON object), within ``wait`` seconds; None if anything fails."""
    import _socket  # the C module: `socket` costs ~5 ms to import (its enums), a tenth of a search
    import json
    import time

    from omcm_core import local_socket

    deadline = time.monotonic() + wait
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(wait)
        local_socket.connect(sock, path)
        if not local_socket.peer_is_us(sock):
            _note("search_server_refused", reason=f"the socket's process runs as uid {local_socket.peer_uid(sock)}")
            return None
        sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
        data = bytearray()
        while len(data) <= MAX_ANSWER:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data += chunk
        answer = json.loads(bytes(data))
        return answer if isinstance(answer, dict) else None
    except (OSError, ValueError) as exc:  # none listening, refused, reset, late, unreadable
        if not isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
            _note("search_server_failed", error=f"{type(exc).__name__}: {exc}", socket=path)
        return None
    finally:
        sock.close()


def start(home: Path, path: str, env: Mapping[str, str]) -> bool:
    """Start the search server unless one holds its lock; True if this call started it."""
    from omcm_core import local_socket

    if not os.path.isfile(os.path.join(str(home), "omcm.db")):
        return False
    argv = [sys.executable, "-m", "omcm_post_tool_observer.search_server"]
    try:
        started = local_socket.spawn_with_lock(argv, path, env, {"OMCM_HOME": os.path.dirname(os.path.dirname(path))})
        if started:
            from omcm_core import log

            log.get_logger(component="search").info("search_server_started", socket=path)
        return started
    except OSError as exc:
        _note("search_server_not_started", error=str(exc), socket=path)
        return False


def stop(home: Path, wait: float = 10.0) -> bool:
    """Ask the server of ``home`` to leave; True if one answered."""
    from omcm_core import local_socket

    path = socket_path(home)
    if local_socket.unsafe(path):
        return False
    answer = exchange(path, {"op": "stop"}, wait)
    return bool(answer and answer.get("ok"))


def status(home: Path, wait: float = 10.0) -> dict | None:
    """The server's pid, code stamp and how many searches it answered; None if none answers."""
    from omcm_core import local_socket

    path = socket_path(home)
    if local_socket.unsafe(path):
        return None
    answer = exchange(path, {"op": "status"}, wait)
    return answer if answer and answer.get("ok") else None


def _note(event: str, **fields) -> None:
    from omcm_core import log

    log.get_logger(component="search").warning(event, **fields)
