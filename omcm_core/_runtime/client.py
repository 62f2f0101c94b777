"""The hook client: read stdin, get the answer, print it, exit. Imports almost nothing.

Claude Code starts this for every hook event, so it is written to cost little
more than starting Python itself. ``omcm install`` registers
``python -S .../omcm_core/fast_hook.py EVENT``, which imports this module from
its cached bytecode. Measured on the bench machine (docs/benchmarks.md), each
of these would add to every call: site-packages (``-S`` skips it, ~1.4 ms),
``os`` (~1.2 ms; the built-in ``posix`` does the same work here), ``zlib``
(~0.4 ms), compiling this file instead of loading its bytecode (~0.8 ms).

1. If a warm dispatcher (``omcm_core._runtime.daemon``) listens on this installation's
   socket, the payload goes there and the answer comes back (a few ms).
2. Otherwise it starts one in the background for the next call and answers
   this call in process, with the same code (``omcm_core._runtime.dispatch.handle``),
   so both paths give identical answers.

A request the daemon accepted is never run twice: if the daemon fails after
accepting, the client answers nothing (fail open) instead of re-running
plugins in process. Set ``OMCM_DAEMON=0`` to always answer in process.
"""

import sys

try:
    import posix as _os  # built in; `os` itself costs more than the rest of this client
except ImportError:  # Windows: no posix module and no AF_UNIX, so always in process
    import os as _os

PROTOCOL = b"OMCM1"
ACCEPTED = b"OMCM1 accepted\n"
FALLBACK = "fallback"
_POSIX = _os.__name__ == "posix"


def _fnv1a(data: bytes) -> int:
    # A name, not a secret (the socket's folder and mode are the protection), and
    # hashlib or zlib would cost more to import than this loop takes.
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def _user_home(environ) -> bytes:
    home = environ.get(b"HOME")
    if home:
        return home
    import os  # no HOME: rare, let the standard library ask the password database

    return os.path.expanduser(b"~")


def with_absolute_home(environ: dict) -> dict:
    """``environ`` (bytes) with OMCM_HOME made absolute.

    The daemon runs from ``/``; a relative or ``~`` OMCM_HOME must name the same
    folder there as in the hook's own working directory.
    """
    home = environ.get(b"OMCM_HOME")
    if home and not home.startswith(b"/"):
        import os

        environ[b"OMCM_HOME"] = os.path.abspath(os.path.expanduser(home))
    return environ


def socket_path_bytes(environ, executable: bytes) -> bytes:
    """The daemon's socket for this interpreter, search path and home (``environ`` in bytes)."""
    user_home = _user_home(environ)
    omcm_home = environ.get(b"OMCM_HOME") or user_home + b"/.omcm"
    key = b"\0".join([executable, environ.get(b"PYTHONPATH", b""), environ.get(b"OMCM_HOME", b""), user_home])
    name = b"dispatcher-%016x.sock" % _fnv1a(key)
    path = omcm_home + b"/run/" + name
    if len(path) < 100:  # AF_UNIX paths are limited to about 100 bytes
        return path
    return b"/tmp/omcm-%d/" % _os.getuid() + name


def socket_path(env=None) -> str:
    """:func:`socket_path_bytes` for a ``str`` environment (the daemon and the CLI)."""
    import os

    env = os.environ if env is None else env
    environ = with_absolute_home({os.fsencode(k): os.fsencode(v) for k, v in env.items()})
    return os.fsdecode(socket_path_bytes(environ, os.fsencode(sys.executable)))


def encode_request(argv_event: str, environ, raw: bytes) -> bytes:
    """The request: protocol line, event, lengths, then the environment (bytes) and payload."""
    env_block = b"\0".join(k + b"=" + v for k, v in environ.items() if b"\0" not in k + v)
    head = b"\n".join([PROTOCOL, argv_event.encode(), b"%d" % len(env_block), b"%d" % len(raw)])
    return head + b"\n" + env_block + raw


def _recv_all(sock) -> bytes:
    chunks = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def ask_daemon(path, argv_event: str, environ, raw: bytes, timeout: float = 60.0):
    """(exit code, stdout, stderr) from the daemon, or ``FALLBACK`` to answer in process.

    Raises OSError when no daemon is listening.
    """
    import _socket  # the C module: `socket` would also import enum, selectors and more

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(encode_request(argv_event, environ, raw))
        sock.shutdown(_socket.SHUT_WR)
        reply = _recv_all(sock)
    finally:
        sock.close()
    if not reply:
        return FALLBACK  # closed before accepting (e.g. it was shutting down): nothing ran
    accepted = reply.startswith(ACCEPTED)
    if accepted:
        reply = reply[len(ACCEPTED) :]
    head, _, body = reply.partition(b"\n\n")
    fields = head.split(b"\n")
    if len(fields) != 4 or fields[0] != PROTOCOL:
        if not accepted and fields[:2] == [PROTOCOL, b"fallback"]:
            return FALLBACK
        return 0, b"", b""  # accepted but the answer broke off: fail open, never run twice
    code, out_len, err_len = int(fields[1]), int(fields[2]), int(fields[3])
    return code, body[:out_len], body[out_len : out_len + err_len]


def _enable_site() -> None:
    # Started with -S for speed: turn site-packages on before importing omcm_core.
    if sys.flags.no_site:
        import site

        site.main()


def _str_env(environ) -> dict:
    import os

    return {os.fsdecode(k): os.fsdecode(v) for k, v in environ.items()}


def start_daemon(env) -> None:
    """Start the warm dispatcher in the background; it refuses to run twice."""
    _enable_site()
    import os

    from omcm_core.background import omcm_argv, spawn_detached

    # From / so the daemon holds no project folder and its sys.path[0] is harmless.
    spawn_detached(omcm_argv("daemon", "run"), env=env, cwd=os.path.abspath(os.sep))


def answer(args, raw: bytes):
    """(exit code, stdout, stderr) for one payload: daemon first, then in process."""
    argv_event = args[0] if args else ""
    env = None
    if _POSIX:
        environ = with_absolute_home(dict(_os.environ))
        if environ.get(b"OMCM_DAEMON", b"1") != b"0":
            path = socket_path_bytes(environ, sys.executable.encode(sys.getfilesystemencoding(), "surrogateescape"))
            try:
                result = ask_daemon(path, argv_event, environ, raw)
            except (FileNotFoundError, ConnectionRefusedError):
                result = FALLBACK
                try:
                    start_daemon(_str_env(environ))
                except Exception:
                    pass
            except OSError:
                # Sent but no answer (timeout, daemon died): never run the plugins twice.
                return 0, b"", b""
            if result != FALLBACK:
                return result
        env = _str_env(environ)
    _enable_site()
    from omcm_core._runtime import dispatch

    outcome = dispatch.handle(raw, argv_event or None, env)
    return outcome.exit_code, outcome.stdout, outcome.stderr


def main(args) -> int:
    """Entry of ``omcm hook [EVENT]``: never returns normally (exits fast)."""
    real_stdout = _os.dup(1)
    # From here on anything a plugin prints (even from C or a child process)
    # goes to stderr: stdout carries only our one JSON object.
    _os.dup2(2, 1)
    sys.stdout = sys.stderr
    code = 0
    try:
        try:
            raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        except (OSError, ValueError):
            raw = b""
        code, out, err = answer(args, raw)
        if err:
            _os.write(2, err)
        if out:
            _os.write(real_stdout, out + b"\n")
    except BaseException:  # pragma: no cover - dispatch.handle already catches
        code = 0
    # Skip interpreter teardown: a plugin thread that overran must not hold us.
    _os._exit(code)


if __name__ == "__main__":
    sys.path.pop(0)  # run as a file: its own folder must not shadow the standard library
    main(sys.argv[1:])
