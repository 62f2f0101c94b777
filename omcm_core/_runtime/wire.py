"""The hook client <-> warm dispatcher protocol: both ends encode and decode here.

Imported by the client under ``python -S`` as a top-level module: it must stay
free of imports beyond ``sys`` and the built-in ``time``.

A request is one header line and length-prefixed fields::

    OMCM2 <verb> <accept_by> <umask> <len event> <len cwd> <len env> <len payload>\\n
    <event><cwd><env: NAME=value, NUL-separated><payload>

``verb`` is ``call`` (run the hook) or ``stop`` (exit). ``accept_by`` is a
``time.monotonic()`` instant (one clock for every process on the machine): a
dispatcher that reads the request later must refuse it, because by then the
client has given up and answered in process.

The dispatcher answers with exactly one of:

- ``OMCM2 refused <reason>\\n``: nothing ran; the client answers in process.
- ``OMCM2 accepted\\n``, then ``OMCM2 done <exit code> <len stdout> <len stderr>\\n``
  followed by both streams. After ``accepted`` the plugins may have run: the
  client must never run them again, even when ``done`` never comes.

Anything short of ``accepted`` (no reply, reset, broken pipe, refusal, a
deadline passed) means the call did not run.

Where the dispatcher listens is decided here too (:func:`socket_path_bytes`):
always ``OMCM_HOME/run/``, a folder only its owner can create or enter. An
AF_UNIX address holds about 100 bytes; a longer path is bound and reached
through ``/proc/self/fd/<the folder>/<name>`` (:func:`connect`, :func:`bind`),
never through a shared folder such as ``/tmp``, where another local user could
create our folder first and keep every call on the slow path.
"""

import sys
import time

try:
    import posix as _os  # built in; `os` itself costs more than the client's whole warm path
except ImportError:  # Windows: no AF_UNIX, the client answers in process
    import os as _os  # type: ignore[no-redef]

PROTOCOL = b"OMCM2"
CALL = b"call"
STOP = b"stop"
ACCEPTED = PROTOCOL + b" accepted\n"
_REFUSED = PROTOCOL + b" refused "
_DONE = PROTOCOL + b" done "

#: What a call may depend on in the environment; nothing else leaves the client.
#: Locale, time zone, the user's folders, where Python and programs are found.
ENV_PREFIXES = (b"OMCM_", b"CLAUDE_", b"LC_", b"XDG_")
ENV_NAMES = frozenset(
    [b"LANG", b"LANGUAGE", b"TZ", b"HOME", b"USER", b"LOGNAME", b"PATH", b"PYTHONPATH", b"TMPDIR", b"VIRTUAL_ENV"]
)
#: Comma-separated extra names (``NAME`` or ``PREFIX*``) a user lets plugins see.
PASS_ENV = b"OMCM_PASS_ENV"


class NotRun(Exception):
    """The dispatcher did not run this call (refused, gone, too late): answer in process."""


class Lost(Exception):
    """The dispatcher accepted the call but its answer never came: never run it again."""


def call_env(environ: dict) -> dict:
    """The subset of ``environ`` (bytes -> bytes) a hook call sees, in process and in the dispatcher."""
    extra = [n.strip() for n in environ.get(PASS_ENV, b"").split(b",") if n.strip()]
    prefixes = ENV_PREFIXES + tuple(n[:-1] for n in extra if n.endswith(b"*"))
    names = ENV_NAMES.union(extra)
    return {k: v for k, v in environ.items() if k in names or k.startswith(prefixes)}


def encode_request(
    verb: bytes, event: bytes, env: dict, raw: bytes, cwd: bytes = b"/", umask: int = 0o022, accept_by: float = 0.0
) -> bytes:
    env_block = b"\0".join(k + b"=" + v for k, v in env.items() if b"\0" not in k + v and b"=" not in k)
    head = b"%s %s %.6f %d %d %d %d %d\n" % (
        PROTOCOL,
        verb,
        accept_by,
        umask,
        len(event),
        len(cwd),
        len(env_block),
        len(raw),
    )
    return head + event + cwd + env_block + raw


class Request:
    """A decoded request; text fields are ``str`` (surrogateescape keeps any byte)."""

    __slots__ = ("verb", "accept_by", "umask", "event", "cwd", "env", "raw")

    def __init__(self, data: bytes) -> None:
        head, sep, body = data.partition(b"\n")
        fields = head.split(b" ")
        if not sep or len(fields) != 8 or fields[0] != PROTOCOL:
            raise ValueError("not an omcm request")
        self.verb = fields[1]
        self.accept_by = float(fields[2])
        self.umask = int(fields[3]) & 0o777
        lengths = [int(f) for f in fields[4:]]
        if min(lengths) < 0 or sum(lengths) != len(body):
            raise ValueError("omcm request has the wrong length")
        parts, at = [], 0
        for length in lengths:
            parts.append(body[at : at + length])
            at += length
        text = [p.decode("utf-8", "surrogateescape") for p in parts[:3]]
        self.event, self.cwd = text[0], text[1] or "/"
        self.env = dict(item.partition("=")[::2] for item in text[2].split("\0") if item)
        self.raw = parts[3]


def encode_refusal(reason: str) -> bytes:
    return _REFUSED + reason.encode("ascii", "replace").replace(b"\n", b" ") + b"\n"


def encode_done(code: int, out: bytes, err: bytes) -> bytes:
    return _DONE + b"%d %d %d\n" % (code, len(out), len(err)) + out + err


def receive(sock, data: bytearray, deadline: float, line_only: bool = False) -> bool:
    """Append what ``sock`` sends to ``data`` until EOF (or a full first line); False on EOF.

    Raises ``TimeoutError`` (an ``OSError``) once ``deadline`` (monotonic) passes.
    """
    while not (line_only and b"\n" in data):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("omcm: no answer in time")
        sock.settimeout(remaining)
        chunk = sock.recv(65536)
        if not chunk:
            return False
        data += chunk
    return True


def first_line(data: bytes | bytearray) -> bytes:
    """The dispatcher's verdict line, raising :class:`NotRun` unless it is ``accepted``."""
    line = bytes(data[: data.find(b"\n") + 1])
    if line == ACCEPTED:
        return line
    if line.startswith(_REFUSED):
        raise NotRun(line[len(_REFUSED) :].strip().decode("ascii", "replace"))
    raise NotRun("no verdict from the dispatcher" if not line else "unreadable verdict")


def decode_done(data: bytes | bytearray) -> tuple:
    """(exit code, stdout, stderr) from what follows ``accepted``; :class:`Lost` if it is cut."""
    head, sep, body = bytes(data).partition(b"\n")
    fields = head[len(_DONE) :].split(b" ") if head.startswith(_DONE) else []
    if not sep or len(fields) != 3:
        raise Lost("the dispatcher accepted the call but did not answer")
    try:
        code, out_len, err_len = (int(f) for f in fields)
    except ValueError:
        raise Lost("the dispatcher's answer is unreadable") from None
    if len(body) < out_len + err_len:
        raise Lost("the dispatcher's answer broke off")
    return code, body[:out_len], body[out_len : out_len + err_len]


def peer_uid(sock) -> int:
    """The uid of the process at the other end (Linux SO_PEERCRED), or -1 when unknown."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return -1
    creds = sock.getsockopt(_socket.SOL_SOCKET, option, 12)  # struct ucred: pid, uid, gid
    return int.from_bytes(creds[4:8], sys.byteorder)


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


def installation() -> bytes:
    """What names this installation: the interpreter's folder and version, and omcm_core's folder.

    Not the interpreter's spelling: ``venv/bin/python`` and ``venv/bin/python3``
    are one installation and must find one dispatcher (``sys.prefix`` would do,
    but ``-S`` leaves it at the base interpreter's). Resolved through symlinks when
    imported from the package; fast_hook.py's own path is resolved at install.
    """
    here, bindir = __file__.rpartition("/")[0], sys.executable.rpartition("/")[0]
    if __package__:
        import os

        here, bindir = os.path.realpath(here), os.path.realpath(bindir)
    return b"%s\0%d\0%s" % (
        bindir.encode("utf-8", "surrogateescape"),
        sys.hexversion >> 16,
        here.encode("utf-8", "surrogateescape"),
    )


def socket_path_bytes(environ, install: bytes) -> bytes:
    """The daemon's socket for this installation, search path and home (``environ`` in bytes)."""
    user_home = _user_home(environ)
    omcm_home = environ.get(b"OMCM_HOME") or user_home + b"/.omcm"
    key = b"\0".join([install, environ.get(b"PYTHONPATH", b""), environ.get(b"OMCM_HOME", b""), user_home])
    name = b"dispatcher-%016x.sock" % _fnv1a(key)
    # Always inside OMCM_HOME, however long (see connect): never a shared folder.
    return omcm_home + b"/run/" + name


def socket_path(env=None) -> str:
    """:func:`socket_path_bytes` for a ``str`` environment (the daemon and the CLI)."""
    import os

    env = os.environ if env is None else env
    environ = with_absolute_home({os.fsencode(k): os.fsencode(v) for k, v in env.items()})
    return os.fsdecode(socket_path_bytes(environ, installation()))


def socket_problem(path: bytes, uid: int = -1):
    """Why the socket at ``path`` must not be used, or None.

    Its folder must be a real folder (not a symlink) owned by us with mode 0700,
    so no other user can have put or replaced anything in it.
    """
    uid = _os.getuid() if uid < 0 else uid
    folder = path.rpartition(b"/")[0]
    try:
        st = _os.lstat(folder)
    except OSError:
        return None  # no folder, so no daemon either: the caller will start one
    if st.st_mode & 0o170000 != 0o040000:
        return "the socket folder %s is not a folder (a symlink?)" % folder.decode("utf-8", "replace")
    if st.st_uid != uid or st.st_mode & 0o777 != 0o700:
        return "the socket folder %s is owned by uid %d with mode %o, not by us with 700" % (
            folder.decode("utf-8", "replace"),
            st.st_uid,
            st.st_mode & 0o777,
        )
    try:
        st = _os.lstat(path)
    except OSError:
        return None
    if st.st_mode & 0o170000 != 0o140000:
        return "%s is not a socket" % path.decode("utf-8", "replace")
    return None


#: The longest path an AF_UNIX address takes here (sun_path is 108 bytes with its NUL).
MAX_ADDRESS = 100


def address(path: bytes, folder_fd: int) -> bytes:
    """What to bind or connect for ``path``: itself if short, else through ``folder_fd`` (its folder)."""
    if len(path) < MAX_ADDRESS:
        return path
    return b"/proc/self/fd/%d/%s" % (folder_fd, path.rpartition(b"/")[2])


def _open_folder(path: bytes) -> int:
    if len(path) < MAX_ADDRESS:
        return -1
    return _os.open(path.rpartition(b"/")[0], _os.O_RDONLY | _os.O_DIRECTORY | _os.O_NOFOLLOW | _os.O_CLOEXEC)


def connect(sock, path: bytes) -> None:
    """``sock.connect(path)``, for a path of any length (a long one through its folder's descriptor)."""
    fd = _open_folder(path)
    try:
        sock.connect(address(path, fd))
    finally:
        if fd >= 0:
            _os.close(fd)


def bind(sock, path: bytes) -> None:
    """``sock.bind(path)``, for a path of any length (see :func:`connect`)."""
    fd = _open_folder(path)
    try:
        sock.bind(address(path, fd))
    finally:
        if fd >= 0:
            _os.close(fd)
