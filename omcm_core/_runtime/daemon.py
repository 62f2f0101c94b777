"""The warm dispatcher: plugin manager, config code and store open, reached by a socket.

Started on demand by the hook client (``omcm daemon run``), one per
installation (interpreter folder and version, omcm_core's folder, PYTHONPATH,
OMCM_HOME), never two at once (an exclusive lock beside the socket, handed down
by the client that starts it), owner-only (socket in a 0700 folder, mode 0600,
peer uid checked on Linux). It stays while a Claude Code session that used it
is alive and exits soon after the last one ends (``sessions.py`` has the policy
and its settings), as soon as omcm's or a loaded plugin's code changes on disk,
and after a call in which a plugin overran its budget (its thread may hold the
GIL); before exiting it refuses every queued connection and finishes the calls
in flight, so no call is dropped (the protocol is in ``wire.py``).

Requests are answered one at a time, in arrival order (``turns.py``), by
:func:`omcm_core._runtime.dispatch.handle` under the caller's umask, working
directory and environment subset (``callstate.py``), exactly as in process. A
caller that would wait for its turn longer than answering in process takes (the
time this daemon took to start, at least ``OMCM_DAEMON_QUEUE_MS``,
default 250), or past its deadline, is told at once to answer in process
instead, so one slow plugin never queues the session.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

from omcm_core import after_answer
from omcm_core._runtime import callstate, control, dispatch, listener, sessions, stats, turns, wire
from omcm_core._runtime.codewatch import CodeWatch
from omcm_core._runtime.control import status, stop
from omcm_core._runtime.wire import socket_path
from omcm_core.log import get_logger
from omcm_core.paths import ensure_private_dir, omcm_home

_log = get_logger(component="daemon")
__all__ = ["Daemon", "run", "status", "stop"]
_CHECK_S = 0.5  # how often the serve loop looks at the sessions' clients (its accept timeout)


def _overran() -> bool:
    """True if a plugin thread of the call just answered is still running (it overran its budget)."""
    for thread in threading.enumerate():
        if thread.name == "omcm-plugins":
            thread.join(0.05)  # a worker that finished may still be on its way out
            if thread.is_alive():
                return True
    return False


#: What a reinstall or removal of this omcm takes away (uv/pipx under another Python delete the old tree).
_OURS = (Path(__file__).resolve().parent / "client.py", Path(__file__).resolve().parent / "dispatch.py")


def _installation_gone() -> bool:
    """This daemon's own code is no longer on disk: no client will find it again, even while a session lives."""
    return not all(path.exists() for path in _OURS)


class Daemon:
    def __init__(self, path: str, policy: sessions.Policy, queue_ms: float) -> None:
        self.path = path
        self.sessions = sessions.Sessions(policy)
        self.books = threading.Lock()  # guards self.sessions: connection threads note, the loop prunes
        self.checked = 0.0
        self.queue_s = queue_ms / 1000
        self.turns = turns.Turns()  # one call at a time, in arrival order
        self.last_activity = time.monotonic()
        self.stopping = threading.Event()
        self.code = CodeWatch()
        self.served = 0
        self.in_flight: set = set()
        self.keeper = dispatch.StoreKeeper()

    def serve(self, server: socket.socket) -> None:
        """Accept until idle or told to stop, then refuse the backlog and finish calls in flight."""
        server.settimeout(0.5)
        while not self.stopping.is_set():
            if not self.in_flight and self._done():
                _log.info("daemon_idle_exit", served=self.served)
                break
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            self._start(conn)
        self.stopping.set()
        self._drain(server)
        for thread in list(self.in_flight):
            thread.join()

    def _done(self) -> bool:
        """No live session and idle long enough (checked every _CHECK_S)."""
        now = time.monotonic()
        if now - self.checked < _CHECK_S:
            return False
        self.checked = now
        if _installation_gone():
            _log.info("daemon_installation_gone_exit", served=self.served)
            return True
        with self.books:
            for sid, why in self.sessions.prune(now):
                _log.info("daemon_session_gone", session_id=sid, why=why)
            return self.sessions.should_exit(now, self.last_activity)

    def _details(self) -> bytes:
        import json

        now = time.monotonic()
        with self.books:
            live = [
                {"session_id": sid, "idle_s": round(now - s.last_seen), "client_pid": s.owner.pid if s.owner else None}
                for sid, s in self.sessions.live.items()
            ]
        policy = self.sessions.policy
        return json.dumps(
            {
                "pid": os.getpid(),
                "served": self.served,
                "idle_s": round(now - self.last_activity),
                "sessions": live,
                "policy": {
                    "idle_s": policy.idle_s,
                    "session_idle_s": policy.session_idle_s,
                    "linger_s": policy.linger_s,
                },
                "queue_ms": round(self.queue_s * 1000),
                "typical_call_ms": round(self.turns.typical_s * 1000, 1),
                "rss_mb": sessions.rss_mb(),
            }
        ).encode()

    def _note(self, peer_pid: int, request: wire.Request) -> None:
        """Remember the call's session and the Claude Code process behind it."""
        sid = sessions.field(request.raw, b"session_id")
        if sid is None:
            return
        event = request.event or sessions.field(request.raw, b"hook_event_name") or ""
        owner = sessions.owner_of(peer_pid)  # now: the hook process is waiting for us
        with self.books:
            self.sessions.seen(sid, event, owner, time.monotonic())

    def _start(self, conn: socket.socket) -> None:
        thread = threading.Thread(target=self._serve_one, args=(conn,), daemon=True)
        self.in_flight.add(thread)  # not activity yet: a status probe must not keep us alive
        thread.start()

    def _drain(self, server: socket.socket) -> None:
        """Stop listening; every connection already queued gets an explicit refusal."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # new callers find no daemon and start a fresh one
        server.setblocking(False)
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                break
            with conn, contextlib.suppress(OSError):
                conn.sendall(wire.encode_refusal("stopping"))
        server.close()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                self._answer(conn)
        except Exception as exc:
            _log.error("daemon_request_failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            self.in_flight.discard(threading.current_thread())

    def _answer(self, conn: socket.socket) -> None:
        peer_pid = listener.peer_pid(conn)
        if peer_pid is None:
            _log.error("daemon_foreign_peer")
            return
        data = bytearray()
        wire.receive(conn, data, time.monotonic() + 30)
        if not data:
            return  # a status probe: connected and left
        request = wire.Request(bytes(data))
        if request.verb == wire.STOP:
            self.stopping.set()
            conn.sendall(wire.encode_refusal("stopping"))
            return
        if request.verb == control.DETAILS:  # not activity: asking must not keep us alive
            conn.sendall(wire.ACCEPTED + wire.encode_done(0, self._details(), b""))
            return
        self._note(peer_pid, request)  # even a call we refuse: its session is alive
        if time.monotonic() >= request.accept_by:
            conn.sendall(wire.encode_refusal("late"))
            return
        waited = self.turns.take(self.queue_s, request.accept_by)
        if waited is None:
            conn.sendall(wire.encode_refusal("busy"))
            return
        later: list = []  # what the plugins left for after the answer (omcm_core.after_answer)
        try:
            reply = self._run(conn, request, later)
        finally:
            self.turns.give_back()
        _log.debug("daemon_call", waited_ms=round(waited * 1000, 1), typical_ms=round(self.turns.typical_s * 1000, 1))
        try:
            if reply is not None:
                conn.sendall(reply)
        finally:
            after_answer.RUNNER.submit(later)

    def _run(self, conn: socket.socket, request: wire.Request, later: list) -> bytes | None:
        """Run one call if still wanted; the reply to send, or None if the caller had gone."""
        if self.stopping.is_set() or time.monotonic() > request.accept_by:
            conn.sendall(wire.encode_refusal("stopping" if self.stopping.is_set() else "late"))
            return None
        changed = self.code.changed()
        if changed:
            _log.info("daemon_code_changed_exit", served=self.served, changed=changed)
            self.stopping.set()
            conn.sendall(wire.encode_refusal("restarting: code changed"))
            return None
        try:
            conn.sendall(wire.ACCEPTED)  # from here on the client must not answer in process
        except OSError:
            return None  # the caller gave up and answers in process: do not run it here too
        with callstate.applied(request.umask, request.cwd, request.env):
            outcome = dispatch.handle(request.raw, request.event or None, request.env, keeper=self.keeper, later=later)
        self.served += 1
        self.last_activity = time.monotonic()
        if outcome.overran:
            # Its thread may still run (perhaps in C code holding the GIL): retire, so no
            # other session's call waits behind it; the next call starts a fresh dispatcher.
            _log.warning("daemon_retiring_after_overrun", served=self.served)
            self.stopping.set()
        return wire.encode_done(outcome.exit_code, outcome.stdout, outcome.stderr)


def _warm_after_listening() -> None:
    """Import masking's detectors while the first calls are answered, so no call pays them inside its budget.

    A plugin that records text and reaches them first waits on the import lock for
    this import, which started earlier, instead of running the whole import itself.
    """
    try:
        from omcm_core import _redact_library

        _redact_library.load()
    except Exception as exc:  # masking falls back to omcm's own rules; say why once
        _log.warning("detectors_not_loaded", error=f"{type(exc).__name__}: {exc}")


def run(env: dict | None = None) -> int:
    """Serve until idle or outdated. Returns at once if another daemon holds the lock."""
    env = dict(os.environ if env is None else env)
    # The process was spawned with its first caller's environment: what that caller passed
    # with OMCM_PASS_ENV was its choice for its calls, not every later session's.
    callstate.forget_passed(os.environ)
    callstate.forget_passed(env)
    path = socket_path(env)
    ensure_private_dir(Path(os.path.dirname(path)))
    try:
        with listener.run_lock(path, env):
            warm_start_ns = time.time_ns()
            dispatch.manager_for(env)
            # What every call needs, before listening. Not what only some need: detect-secrets (the second
            # masking pass, 0.2-0.5 s and 9 MB) is imported once listening (_warm_after_listening), cattrs
            # (only for payloads whose fields have the wrong types) on first use.
            from omcm_core import config, context, redact, store  # noqa: F401
            from omcm_core._runtime import breaker, merge, payload  # noqa: F401

            # Answering in process costs about what this start did (Python, omcm and the
            # plugins loaded, on this machine under its present load): a caller may wait
            # that long for its turn and still get its answer sooner than on its own.
            started_s = sessions.age_s(os.getpid()) or 0.0
            queue_ms = max(float(env.get("OMCM_DAEMON_QUEUE_MS", "250")), started_s * 1000)
            daemon = Daemon(path, sessions.Policy.from_env(env), queue_ms)
            daemon.code.start(warm_start_ns)
            server = listener.bind(path)
            if server is None:
                return 1
            _log.info("daemon_started", pid=os.getpid(), socket=path, queue_ms=round(queue_ms))
            threading.Thread(target=_warm_after_listening, name="omcm-warm", daemon=True).start()
            from omcm_core._cli import repair  # new code's first start: a stale registration is redone, detached

            if why := repair.start(omcm_home(env), env):
                _log.info("registration_repair_started", why=why)
            stats.start_flusher(omcm_home(env))  # off the answer's path: rows written every few seconds
            try:
                daemon.serve(server)
            finally:
                server.close()
                daemon.keeper.close()
                stats.flush_now(omcm_home(env))
    except TimeoutError:
        return 0  # another daemon is serving
    if _overran():
        after_answer.RUNNER.wait(2.0)  # the answered calls' deferred work first (the rest is recovered later)
        os._exit(0)  # a plugin thread still runs, maybe holding the GIL: do not wait for it at exit
    return 0
