"""The search server: one process per user and installation that keeps numpy, the model and the vectors.

``python -m omcm_post_tool_observer.search_server``, started by the first
``omcm search`` that needs the model (search_client.start: detached, its own
session, the lock beside the socket handed down so only one runs). It loads the
model and maps the vectors, then answers semantic and hybrid searches one at a
time over ``OMCM_HOME/run/search-*.sock`` (a 0600 socket in the 0700 folder the
dispatcher uses, callers of our uid only), running the very functions the CLI
runs in process (search.semantic, search.hybrid) on the same store file.

It leaves, removing its socket, after ``OMCM_SEARCH_SERVER_IDLE_S`` (default
600) without a search, as soon as its store file is deleted or replaced, when
the code it loaded changes on disk (an upgrade or an uninstall: see
search_client.code_stamp), when its socket is removed (``omcm uninstall``), and
when asked (``omcm search --stop-server``). It runs at a lower priority (nice 5):
it answers a person who waits, but hooks come first.

Why not the warm dispatcher or the embedding worker: the dispatcher answers every
hook call within a 40 MB budget, and numpy with the model and a 1.5 GB mapping
would grow it and stall hooks behind a scan; the worker lives only while jobs
wait and answers nobody.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from omcm_post_tool_observer import search_client

IDLE_VAR = "OMCM_SEARCH_SERVER_IDLE_S"
DEFAULT_IDLE_S = 600.0
#: How often the server looks at its store, code and socket while waiting.
TICK_S = 1.0
NICE = 5
MAX_REQUEST = 1 << 20


def _idle_s(env) -> float:
    try:
        value = float(env.get(IDLE_VAR) or DEFAULT_IDLE_S)
    except ValueError:
        return DEFAULT_IDLE_S
    return value if value > 0 else DEFAULT_IDLE_S


class Server:
    def __init__(self, home: Path, path: str, env: dict) -> None:
        from omcm_core.log import get_logger
        from omcm_core.store import Store

        self.home = home
        self.path = path
        self.idle_s = _idle_s(env)
        self.store = Store(home)
        self.store_id = search_client.store_id(self.store.path)
        self.stamp = search_client.code_stamp()
        self.served = 0
        self.log = get_logger(component="search-server")
        self.socket_id: list[int] | None = None

    def why_leave(self) -> str | None:
        """Why this server must not answer any more, or None."""
        if search_client.store_id(self.store.path) != self.store_id:
            return "store_gone"
        if search_client.code_stamp() != self.stamp:
            return "code_changed"
        if search_client.store_id(self.path) != self.socket_id:
            return "socket_removed"
        return None

    def warm(self) -> None:
        """Load the model and map the vectors now, so the first search asked of us is a warm one."""
        from omcm_post_tool_observer import search, storage

        storage.ready(self.store)
        search.semantic(self.store, "warm up", search.Filters(), 1)

    def serve(self, server: socket.socket) -> str:
        server.settimeout(TICK_S)
        last = time.monotonic()
        while True:
            why = self.why_leave()
            if why is None and time.monotonic() - last > self.idle_s:
                why = "idle"
            if why is not None:
                return why
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return "socket_error"
            with conn:
                leave = self.answer(conn)
            last = time.monotonic()
            if leave:
                return leave

    def answer(self, conn: socket.socket) -> str | None:
        """Answer one connection; a reason to leave after it, or None."""
        from omcm_core import local_socket

        if not local_socket.peer_is_us(conn):
            self.log.warning("search_server_foreign_caller")
            return None
        conn.settimeout(10.0)
        try:
            request = self._read(conn)
        except (OSError, ValueError):
            return None
        op = request.get("op") if isinstance(request, dict) else None
        reply: dict = {"ok": False}
        leave = None
        if op == "stop":
            reply, leave = {"ok": True}, "stopped"
        elif op == "status":
            reply = {"ok": True, "pid": os.getpid(), "served": self.served, "code": self.stamp}
        elif op == "search":
            reply, leave = self._search(request)
        try:
            conn.sendall(json.dumps(reply).encode("utf-8"))
        except OSError:
            pass
        return leave

    def _read(self, conn: socket.socket) -> dict:
        data = bytearray()
        while b"\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
            if len(data) > MAX_REQUEST:
                raise ValueError("request too long")
        return json.loads(bytes(data).partition(b"\n")[0])

    def _search(self, request: dict) -> tuple[dict, str | None]:
        from omcm_post_tool_observer import search

        why = self.why_leave()
        if why is not None:
            return {"ok": False, "why": why}, why
        if request.get("code") != self.stamp:
            return {"ok": False, "why": "other code"}, None  # an older or newer client: it searches itself
        if request.get("store") != self.store_id:
            return {"ok": False, "why": "other store"}, None
        mode, text, limit, given = (request.get(k) for k in ("mode", "text", "limit", "filters"))
        if mode not in ("semantic", "hybrid") or not isinstance(text, str) or not isinstance(limit, int):
            return {"ok": False, "why": "bad request"}, None
        if not isinstance(given, dict) or not set(given) <= set(search.Filters._fields):
            return {"ok": False, "why": "bad request"}, None
        filters = search.Filters(**given)
        try:
            if mode == "semantic":
                hits = search.semantic(self.store, text, filters, limit)
            else:
                hits = search.hybrid(self.store, text, filters, limit)
        except Exception as exc:  # the client searches in process and meets the same error there
            self.log.warning("search_server_search_failed", error=f"{type(exc).__name__}: {exc}")
            return {"ok": False, "why": "failed"}, None
        self.served += 1
        return {"ok": True, "hits": hits}, None


def main() -> int:
    from omcm_core import local_socket, log

    env = dict(os.environ)
    home = Path(env.get("OMCM_HOME") or "")
    if not home.is_absolute() or not (home / "omcm.db").is_file():
        return 0  # started for a store deleted since: nothing to serve
    log.configure(home)
    logger = log.get_logger(component="search-server")
    try:
        os.nice(NICE)
    except OSError:
        pass
    path = search_client.socket_path(home)
    try:
        with local_socket.hold_lock(path, env):
            server_state = Server(home, path, env)
            server_state.warm()
            listening = local_socket.listen(path)
            if listening is None:
                return 1
            server_state.socket_id = search_client.store_id(path)
            logger.info("search_server_listening", socket=path, pid=os.getpid())
            try:
                why = server_state.serve(listening)
            except Exception as exc:  # its stderr is /dev/null: say it in the log, then leave cleanly
                logger.error("search_server_crashed", error=f"{type(exc).__name__}: {exc}")
                why = "crashed"
            finally:
                listening.close()
                if search_client.store_id(path) == server_state.socket_id:
                    try:
                        os.unlink(path)
                    except OSError:
                        pass
                server_state.store.close()
            logger.info("search_server_exit", reason=why, served=server_state.served)
    except TimeoutError:
        return 0  # another holds the lock: it serves
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
