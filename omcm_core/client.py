"""The hook client: read stdin, get the answer, print it, exit. Imports almost nothing.

Claude Code starts this for every hook event, so it is written to cost little
more than starting Python itself (``omcm install`` registers it as
``python -S .../omcm_core/client.py EVENT``: no site-packages scan at start-up).

1. If a warm dispatcher (``omcm_core.daemon``) listens on this installation's
   socket, the payload goes there and the answer comes back (a few ms).
2. Otherwise it starts one in the background for the next call and answers
   this call in process, with the same code (``omcm_core.dispatch.handle``),
   so both paths give identical answers.

A request the daemon accepted is never run twice: if the daemon fails after
accepting, the client answers nothing (fail open) instead of re-running
plugins in process. Set ``OMCM_DAEMON=0`` to always answer in process.
"""

import os
import sys

if __name__ == "__main__":
    # Run as a file: its own folder must not shadow the standard library.
    sys.path.pop(0)

PROTOCOL = b"OMCM1"
ACCEPTED = b"OMCM1 accepted\n"
_FALLBACK = "fallback"


def _key(env) -> str:
    """Which daemon serves this caller: same interpreter, search path and home.

    crc32 rather than sha256: hashlib costs milliseconds to import and this is a
    name, not a secret (the socket's folder and mode are the protection).
    """
    import zlib

    data = "\0".join([sys.executable, env.get("PYTHONPATH", ""), env.get("OMCM_HOME", ""), os.path.expanduser("~")])
    raw = data.encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"


def socket_path(env=None) -> str:
    """The daemon's socket: in OMCM_HOME/run when the path is short enough for AF_UNIX."""
    env = os.environ if env is None else env
    home = env.get("OMCM_HOME") or os.path.join(os.path.expanduser("~"), ".omcm")
    name = f"dispatcher-{_key(env)}.sock"
    path = os.path.join(home, "run", name)
    if len(path.encode()) < 100:
        return path
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join("/tmp", f"omcm-{uid}", name)


def encode_request(argv_event: str, env, raw: bytes) -> bytes:
    env_block = b"\0".join(
        f"{k}={v}".encode("utf-8", "surrogateescape") for k, v in env.items() if "\0" not in k + v
    )
    head = b"\n".join([PROTOCOL, argv_event.encode(), str(len(env_block)).encode(), str(len(raw)).encode()])
    return head + b"\n" + env_block + raw


def _recv_all(sock) -> bytes:
    chunks = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def ask_daemon(path: str, argv_event: str, env, raw: bytes, timeout: float = 60.0):
    """(exit code, stdout, stderr) from the daemon, or ``_FALLBACK`` to answer in process.

    Raises OSError when no daemon is listening.
    """
    import _socket  # the C module: `socket` would also import enum, selectors and more

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(encode_request(argv_event, env, raw))
        sock.shutdown(_socket.SHUT_WR)
        reply = _recv_all(sock)
    finally:
        sock.close()
    if not reply:
        return _FALLBACK  # closed before accepting (e.g. it was shutting down): nothing ran
    accepted = reply.startswith(ACCEPTED)
    if accepted:
        reply = reply[len(ACCEPTED) :]
    head, _, body = reply.partition(b"\n\n")
    fields = head.split(b"\n")
    if len(fields) != 4 or fields[0] != PROTOCOL:
        if not accepted and fields[:2] == [PROTOCOL, b"fallback"]:
            return _FALLBACK
        return 0, b"", b""  # accepted but the answer broke off: fail open, never run twice
    code, out_len, err_len = int(fields[1]), int(fields[2]), int(fields[3])
    return code, body[:out_len], body[out_len : out_len + err_len]


def _enable_site() -> None:
    # Started with -S for speed: turn site-packages on before importing omcm_core.
    if sys.flags.no_site:
        import site

        site.main()


def start_daemon(env) -> None:
    """Start the warm dispatcher in the background; it refuses to run twice."""
    _enable_site()
    from omcm_core.background import omcm_argv, spawn_detached

    # From / so the daemon holds no project folder and its sys.path[0] is harmless.
    spawn_detached(omcm_argv("daemon", "run"), env=env, cwd=os.path.abspath(os.sep))


def answer(args, raw: bytes, env=None):
    """(exit code, stdout, stderr) for one payload: daemon first, then in process."""
    env = dict(os.environ if env is None else env)
    argv_event = args[0] if args else ""
    use_daemon = env.get("OMCM_DAEMON", "1") != "0" and hasattr(__import__("_socket"), "AF_UNIX")
    if use_daemon:
        path = socket_path(env)
        try:
            result = ask_daemon(path, argv_event, env, raw)
        except (FileNotFoundError, ConnectionRefusedError):
            result = _FALLBACK
            try:
                start_daemon(env)
            except Exception:
                pass
        except OSError:
            # Sent but no answer (timeout, daemon died): never run the plugins twice.
            return 0, b"", b""
        if result != _FALLBACK:
            return result
    _enable_site()
    from omcm_core import dispatch

    outcome = dispatch.handle(raw, argv_event or None, env)
    return outcome.exit_code, outcome.stdout, outcome.stderr


def main(args) -> int:
    """Entry of ``omcm hook [EVENT]``: never returns normally (exits fast)."""
    real_stdout = os.dup(1)
    # From here on anything a plugin prints (even from C or a child process)
    # goes to stderr: stdout carries only our one JSON object.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    code = 0
    try:
        try:
            raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        except (OSError, ValueError):
            raw = b""
        code, out, err = answer(args, raw)
        if err:
            os.write(2, err)
        if out:
            os.write(real_stdout, out + b"\n")
    except BaseException:  # pragma: no cover - dispatch.handle already catches
        code = 0
    # Skip interpreter teardown: a plugin thread that overran must not hold us.
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
