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
"""

import sys
import time

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
    code, out_len, err_len = (int(f) for f in fields)
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
