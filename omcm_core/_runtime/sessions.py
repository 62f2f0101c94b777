"""Which Claude Code sessions use the warm dispatcher, and whether they are still alive.

The dispatcher stays while a session that used it lives (:class:`Policy`).
A session is live from its first call (SessionStart or any other event carrying
its ``session_id``) until its SessionEnd, or until the Claude Code process that
ran its hooks is gone: a crashed or killed client sends no SessionEnd, and must
not keep the dispatcher for the whole idle bound.

That process is found without help from the client. The kernel tells the
dispatcher the pid of the hook process at the other end of the socket
(SO_PEERCRED, read for the uid check anyway); Claude Code runs a hook command
through a shell that usually execs it, so the first ancestor that is not a
shell or a launcher is Claude Code. It is remembered as (pid, start time): a
pid the system reused for another process has another start time. On systems
without ``/proc`` no owner is known and only the idle bound applies.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from attrs import define, frozen

#: Programs that stand between Claude Code and the hook process: shells, the
#: plugin's launcher script, the console script, and common wrappers.
PASS_THROUGH = frozenset(
    ["sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "env", "timeout", "nice", "ionice", "nohup"]
    + ["omcm", "omcm-hook", "fast_hook.py"]
)
MAX_SESSIONS = 256  # live sessions remembered at once; the least recently seen goes first
_MAX_DEPTH = 8  # a hook is never more than a few wrappers below its client


@frozen
class Process:
    """One process as /proc shows it; ``start`` tells a reused pid apart."""

    pid: int
    start: int
    parent: int
    name: str


def process(pid: int, proc: str = "/proc") -> Process | None:
    """The process ``pid``, or None if it is gone, a zombie or unreadable."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # The name (field 2) is in parentheses and may itself hold spaces or ")".
    name, _, rest = stat.partition(b" (")[2].rpartition(b") ")
    fields = rest.split()
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    # After the name: state, ppid (field 4), ..., starttime (field 22).
    return Process(pid, int(fields[19]), int(fields[1]), name.decode("utf-8", "replace"))


def owner_of(hook_pid: int, proc: str = "/proc") -> Process | None:
    """The first ancestor of the hook process that is not a shell or launcher: Claude Code."""
    current = process(hook_pid, proc) if hook_pid > 0 else None
    for _ in range(_MAX_DEPTH):
        if current is None or current.parent <= 1:
            return None  # orphaned or at init: no client to watch
        current = process(current.parent, proc)
        if current is not None and current.name not in PASS_THROUGH:
            return current
    return None


def age_s(pid: int, proc: str = "/proc") -> float | None:
    """Seconds since ``pid`` started, or None where /proc cannot tell."""
    me = process(pid, proc)
    try:
        with open(f"{proc}/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return uptime - me.start / os.sysconf("SC_CLK_TCK") if me else None
    except (OSError, ValueError, IndexError):
        return None


def rss_mb() -> float | None:
    """This process's resident memory (Linux), for ``omcm daemon status``."""
    try:
        with open("/proc/self/status", "rb") as f:
            line = next(x for x in f if x.startswith(b"VmRSS:"))
        return round(int(line.split()[1]) / 1024, 1)
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def alive(owner: Process, proc: str = "/proc") -> bool:
    now = process(owner.pid, proc)
    return now is not None and now.start == owner.start


def field(raw: bytes, name: bytes) -> str | None:
    """A top-level string field of the payload (``session_id``, ``hook_event_name``), or None.

    A search, not a parse: it runs for every call, and a payload with a big tool
    output costs milliseconds to parse. Text inside a string value has its quotes
    escaped, so only a key matches; Claude Code writes these keys before the tool's
    data, so the first match is the payload's own.
    """
    match = re.search(rb'"' + name + rb'"\s*:\s*"([^"\\]{1,200})"', raw)
    return match.group(1).decode("utf-8", "replace") if match else None


@frozen
class Policy:
    """How long the dispatcher stays; each is a setting (environment, seconds)."""

    #: No session has used the dispatcher (calls without a session_id): OMCM_DAEMON_IDLE_S.
    idle_s: float = 300.0
    #: A live session that makes no call for this long is forgotten: OMCM_DAEMON_SESSION_IDLE_S.
    session_idle_s: float = 3600.0
    #: After the last live session ended or died, exit after this long without a call:
    #: OMCM_DAEMON_LINGER_S (covers /clear and a quick restart of the client).
    linger_s: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Policy:
        values = {}
        for name, var in (("idle_s", "IDLE_S"), ("session_idle_s", "SESSION_IDLE_S"), ("linger_s", "LINGER_S")):
            try:
                values[name] = max(0.0, float(env["OMCM_DAEMON_" + var]))
            except (KeyError, ValueError):
                pass  # unset or not a number: the default
        return cls(**values)


@define
class Session:
    last_seen: float
    owner: Process | None


class Sessions:
    """The live sessions and the exit decision; used under the dispatcher's bookkeeping lock."""

    def __init__(self, policy: Policy, proc: str = "/proc") -> None:
        self.policy = policy
        self.proc = proc
        self.live: dict[str, Session] = {}
        self.ever = False  # a session has used us: the short linger applies once none is live
        self.last_gone = 0.0  # when the last live session ended or was found dead

    def seen(self, sid: str, event: str, owner: Process | None, now: float) -> None:
        self.ever = True
        if event == "SessionEnd":
            if self.live.pop(sid, None) is not None and not self.live:
                self.last_gone = now
            return
        known = self.live.get(sid)
        if known is None:
            if len(self.live) >= MAX_SESSIONS:  # a flood of made-up ids must not grow us
                del self.live[min(self.live, key=lambda k: self.live[k].last_seen)]
            self.live[sid] = Session(now, owner)
            return
        known.last_seen = now
        if owner is not None:
            known.owner = owner  # a resumed session runs in a new client process

    def prune(self, now: float) -> list[tuple[str, str]]:
        """Forget sessions whose client died or that were idle too long: [(session, why)]."""
        gone = []
        for sid, session in list(self.live.items()):
            if session.owner is not None and not alive(session.owner, self.proc):
                gone.append((sid, "client_gone"))
            elif now - session.last_seen > self.policy.session_idle_s:
                gone.append((sid, "idle"))
        for sid, _ in gone:
            del self.live[sid]
        if gone and not self.live:
            self.last_gone = now
        return gone

    def should_exit(self, now: float, last_activity: float) -> bool:
        if self.live:
            return False  # prune() bounds each one
        if self.ever:
            return now - max(last_activity, self.last_gone) >= self.policy.linger_s  # 0: at once
        return now - last_activity > self.policy.idle_s
