"""The hook client: read stdin, get the answer, print it, exit. Imports almost nothing.

Claude Code starts this for every hook event, so it is written to cost little
more than starting Python itself. ``omcm install`` registers
``python -S .../omcm_core/fast_hook.py EVENT``, which imports this module from
its cached bytecode. Measured on the bench machine (docs/benchmarks.md), each
of these would add to every call: site-packages (``-S`` skips it, ~1.4 ms),
``os`` (~1.2 ms; the built-in ``posix`` does the same work here), ``zlib``
(~0.4 ms), compiling this file instead of loading its bytecode (~0.8 ms).

1. If a warm dispatcher (``omcm_core._runtime.daemon``) listens on this installation's
   socket, in a folder verified to be ours (owner, mode 0700, not a symlink) and
   run by our uid (SO_PEERCRED), the call goes there (see ``wire.py`` for the
   protocol) with the environment subset a call may depend on (``wire.call_env``,
   never the whole environment), the umask and the working directory.
2. Otherwise, or when the dispatcher did not accept the call (busy, stopping,
   stopped, past the deadline, reset), it answers in process with the same code
   (``omcm_core._runtime.dispatch.handle``, importing only the plugins that
   implement the event), so both paths give identical answers, and once the
   answer is written starts a dispatcher for the next call if none runs
   (``starter.py``): the new dispatcher's start-up does not compete with this
   call for the CPU. A cold SessionEnd is the exception: its answer is ignored and its
   window short, so it answers at once and a forked child does the work (below).

A call the dispatcher accepted is never run twice: if its answer never comes,
the client logs ``daemon_answer_lost`` and answers nothing (fail open).
Set ``OMCM_DAEMON=0`` to always answer in process.

The native client (``omcm_core/_native/omcm_hook.c``) does step 1 itself and execs this
client for the rest, saying in ``OMCM_CLIENT_HANDOFF`` what became of the call:
``start`` (no dispatcher listens), ``refused <why>`` (it did not run), ``lost
<why>`` (accepted, answer lost); absent, this client does everything itself.
"""

import sys

try:
    import posix as _os  # built in; `os` itself costs more than the rest of this client
except ImportError:  # Windows: no posix module and no AF_UNIX, so always in process
    import os as _os  # type: ignore[no-redef]

if __package__:  # imported as omcm_core._runtime.client
    from omcm_core._runtime import wire
else:  # fast_hook.py: a top-level module beside wire.py
    import wire  # type: ignore[no-redef]

_POSIX = _os.__name__ == "posix"
#: How long a call waits for the dispatcher's verdict before answering in process
#: itself (a stopped or stuck dispatcher); OMCM_DAEMON_ACCEPT_MS overrides.
ACCEPT_S = 0.75
#: After the verdict, how long to wait for the answer: below each event's timeout
#: registered with Claude Code (SessionEnd hooks share 1.5 s).
ANSWER_S = {b"SessionEnd": 1.2, b"PreToolUse": 8.0, b"UserPromptSubmit": 8.0}
#: What to do after the answer is written (start a dispatcher), run by :func:`main`.
_later: list = []


# Where the dispatcher listens and whether it is safe there: in wire.py, which the
# starter, the daemon and the CLI import too (not this module: no import cycle).
installation = wire.installation
socket_path = wire.socket_path
socket_path_bytes = wire.socket_path_bytes
socket_problem = wire.socket_problem
with_absolute_home = wire.with_absolute_home


def call_daemon(path: bytes, request: bytes, accept_s: float, answer_s: float):
    """(exit code, stdout, stderr) from the daemon at ``path``.

    Raises :class:`wire.NotRun` when the call certainly did not run (answer in
    process), :class:`wire.Lost` when it was accepted but not answered, and
    ``FileNotFoundError``/``ConnectionRefusedError`` when no daemon listens.
    """
    import _socket  # the C module: `socket` would also import enum, selectors and more

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    data = bytearray()
    try:
        sock.settimeout(accept_s)
        wire.connect(sock, path)
        peer = wire.peer_uid(sock)
        if peer not in (-1, _expected_uid()):
            raise wire.NotRun("the process at %s runs as uid %d, not as us" % (path.decode("utf-8", "replace"), peer))
        try:
            sock.sendall(request)
            sock.shutdown(_socket.SHUT_WR)
            wire.receive(sock, data, _deadline(request, accept_s), line_only=True)
        except OSError as exc:  # reset, broken pipe, timeout: the daemon never accepted
            if b"\n" not in data:
                raise wire.NotRun("no verdict: %s" % exc) from None
        wire.first_line(data)
        try:
            wire.receive(sock, data, _monotonic() + answer_s)
        except OSError as exc:
            raise wire.Lost("accepted, then: %s" % exc) from None
    finally:
        sock.close()
    return wire.decode_done(data[len(wire.ACCEPTED) :])


def _expected_uid() -> int:
    return _os.getuid()


def _monotonic() -> float:
    import time

    return time.monotonic()


def _deadline(request: bytes, accept_s: float) -> float:
    # The daemon refuses after accept_by; wait a little longer for that refusal or its verdict.
    return float(request.split(b" ", 3)[2]) + min(0.25, accept_s)


def _enable_site() -> None:
    # Started with -S for speed: turn site-packages on (once) before importing omcm_core.
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()


def _str_env(environ) -> dict:
    import os

    return {os.fsdecode(k): os.fsdecode(v) for k, v in environ.items()}


def _umask() -> int:
    mask = _os.umask(0o077)
    _os.umask(mask)
    return mask


def ask(environ: dict, event: bytes, env: dict, raw: bytes):
    """(exit code, stdout, stderr) from the warm dispatcher, or (None, why not, start one?)."""
    install = installation()
    path = socket_path_bytes(environ, install)
    problem = socket_problem(path)
    if problem:
        return None, problem, False
    try:
        accept_s = int(environ.get(b"OMCM_DAEMON_ACCEPT_MS", b"750")) / 1000
    except ValueError:
        accept_s = ACCEPT_S
    accept_by = _monotonic() + accept_s
    request = wire.encode_request(wire.CALL, event, env, raw, _os.getcwdb(), _umask(), accept_by)
    try:
        return call_daemon(path, request, accept_s, ANSWER_S.get(event, 12.0))
    except (FileNotFoundError, ConnectionRefusedError):
        return None, None, True
    except wire.NotRun as exc:
        return None, str(exc), False
    except OSError as exc:  # connect timed out, too many open files...: nothing was sent
        return None, "cannot reach the dispatcher: %s" % exc, False


#: Set by the native client when it execs this one (see the module's docstring).
HANDOFF = b"OMCM_CLIENT_HANDOFF"


def _handed_off(handoff: bytes):
    """What :func:`ask` would have returned, from the native client's note of what it saw."""
    kind, _, why = handoff.partition(b" ")
    text = why.decode("utf-8", "replace")
    if kind == b"lost":
        raise wire.Lost(text)
    if kind == b"refused":
        return None, text, False
    return None, None, True  # "start": no dispatcher listens


def take_handoff():
    """Remove the native client's note from this process's environment (plugins never see it)."""
    handoff = _os.environ.pop(HANDOFF, None)
    if handoff is not None:
        _os.unsetenv(HANDOFF)
        if "os" in sys.modules:
            sys.modules["os"].environ.pop(HANDOFF.decode(), None)
    return handoff


def answer(args, raw: bytes, environ=None, handoff=None):
    """(exit code, stdout, stderr) for one payload: daemon first, then in process."""
    argv_event = args[0] if args else ""
    env = None
    if _POSIX:
        environ = with_absolute_home(dict(_os.environ if environ is None else environ))
        env = wire.call_env(environ)
        if environ.get(b"OMCM_DAEMON", b"1") != b"0":
            try:
                if handoff is not None:
                    result = _handed_off(handoff)
                else:
                    result = ask(environ, argv_event.encode("utf-8", "surrogateescape"), env, raw)
            except wire.Lost as exc:
                # It may have run: running it again could repeat a side effect. Say so, answer nothing.
                result = (0, b"", b"")
                _fallback(environ, env, None, False, "daemon_answer_lost: %s" % exc)
            if result[0] is not None:
                return result
            if argv_event == "SessionEnd" and _answer_now_work_later():
                return 0, b"", b""  # the parent: the client waits for nothing (its window is 1.5 s)
            _fallback(environ, env, *result[1:])
        env = _str_env(env)
    _enable_site()
    from omcm_core._runtime import dispatch

    jobs: list = []
    outcome = dispatch.handle(raw, argv_event or None, env, one_call=True, later=jobs)
    if jobs:  # the plugins' deferred work (omcm_core.after_answer): once the answer is out
        from omcm_core import after_answer

        _later.append(lambda: after_answer.run(jobs))
    return outcome.exit_code, outcome.stdout, outcome.stderr


def _answer_now_work_later() -> bool:
    """A cold SessionEnd: answer now, run the plugins in a detached child. True in the parent.

    Claude Code ignores SessionEnd's answer and cancels it after 1.5 s shared by every
    SessionEnd hook; a cold call (no warm dispatcher: ``claude mcp list``, a one-turn
    ``claude -p``) imports the plugins first, which a busy machine makes slower than
    that. The child, in its own session with no pipe of the client's, does the same
    work; a forked copy of this small process, so it costs no second interpreter start.
    ``OMCM_DAEMON=0`` (always in process, as tests run) keeps it in this process.
    """
    fork = getattr(_os, "fork", None)
    if fork is None:
        return False
    try:
        pid = fork()
    except OSError:
        return False  # no process to spare: answer in process, as before
    if pid:
        return True
    _os.setsid()
    null = _os.open("/dev/null", _os.O_RDWR)
    for fd in (0, 1, 2, *_stdout_fd):  # the client waits for its pipes to close
        _os.dup2(null, fd)
    return False


#: The client's stdout, which :func:`main` keeps apart from fd 1 (plugins' prints go to stderr).
_stdout_fd: list = []


def _fallback(environ, env, why, start, lost=None) -> None:
    """The slow path (the call is answered in process): log why; start a dispatcher later if none runs."""
    _enable_site()
    from omcm_core._runtime import starter

    then = starter.after_fallback(_str_env(environ), _str_env(env), why, start, lost)
    if then is not None:
        _later.append(then)


def run_later() -> None:
    """Run what :func:`answer` left for after the answer (never raises)."""
    while _later:
        try:
            _later.pop(0)()
        except BaseException:  # pragma: no cover - after_fallback's closure logs its own errors
            pass


def main(args) -> int:
    """Entry of ``omcm hook [EVENT]``: never returns normally (exits fast)."""
    real_stdout = _os.dup(1)
    _stdout_fd.append(real_stdout)
    # From here on anything a plugin prints (even from C or a child process)
    # goes to stderr: stdout carries only our one JSON object.
    _os.dup2(2, 1)
    sys.stdout = sys.stderr
    code = 0
    try:
        handoff = take_handoff() if _POSIX else None
        try:
            raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        except (OSError, ValueError):
            raw = b""
        code, out, err = answer(args, raw, handoff=handoff)
        if err:
            _os.write(2, err)
        if out:
            _os.write(real_stdout, out + b"\n")
        _os.close(real_stdout)  # the answer is complete: what runs later must not hold it open
        run_later()
    except BaseException:  # pragma: no cover - dispatch.handle already catches
        code = 0
    # Skip interpreter teardown: a plugin thread that overran must not hold us.
    _os._exit(code)


if __name__ == "__main__":
    sys.path.pop(0)  # run as a file: its own folder must not shadow the standard library
    main(sys.argv[1:])
