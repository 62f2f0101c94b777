"""The command ``omcm install`` registers for each event: what it runs, and how it never blocks by accident."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from omcm_core.events import EVENTS


def client_version(timeout_s: float = 10) -> str | None:
    """The version of the ``claude`` on PATH (``2.1.330 (Claude Code)`` -> ``2.1.330``), or None."""
    import re
    import shutil
    import subprocess

    exe = shutil.which("claude")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=timeout_s).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"\b(\d+\.\d+\.\d+)\b", out)
    return match.group(1) if match else None


def _timeout(event: str) -> float:
    spec = EVENTS.get(event)
    return spec.timeout_s if spec is not None else 10


#: The registered command's program, run as ``python -S -c HOOK_CODE .../fast_hook.py EVENT``.
#: A file Python is asked to run that is gone (a reinstall under another Python, a
#: moved or removed omcm) makes it exit 2, which Claude Code takes for a blocking
#: hook error: every prompt refused. ``-c`` cannot miss, so the code decides:
#: 1. the fast path: fast_hook.py's folder's ``_runtime/client.py`` from its bytecode;
#: 2. gone: site-packages on, omcm_core from wherever this interpreter now has it
#:    (``uv tool install --reinstall --python X`` keeps the interpreter's path);
#: 3. no omcm at all: exit 0, and once per session a systemMessage naming
#:    ``omcm doctor``; with ``fail-closed`` (a ``[core] fail_closed`` guard) a
#:    PreToolUse/PermissionRequest is denied instead, since a missing guard must keep guarding
#:    (in Gemini CLI's form under ``OMCM_AGENT=gemini``: it ignores Claude's; its command names omcm's event).
#: Standard library only past step 2, and kept short: it is compiled on every call.
HOOK_CODE = r"""import sys
f=sys.argv[1];sys.path[0]=f[:-12]+"_runtime"
try:import client
except Exception:client=None
del sys.path[0]
if client is None:
 try:import site;site.main();from omcm_core._runtime import client
 except Exception:client=None
if client:client.main(sys.argv[2:])
import json,os
try:p=json.loads(sys.stdin.buffer.read(1<<20)or"{}");s=str(p.get("session_id",""))[:100]
except Exception:p={};s=""
e=sys.argv[2]if sys.argv[2:]else str(p.get("hook_event_name",""))
m="omcm cannot run: "+f+" is gone (omcm reinstalled, moved or removed). Run `omcm doctor`, or remove omcm from settings.json."
g="fail-closed"in sys.argv
if g and e=="PreToolUse"and os.environ.get("OMCM_AGENT","").strip().lower()=="gemini":print(json.dumps({"decision":"deny","reason":m}));sys.exit(0)
if g and e=="PreToolUse":print(json.dumps({"hookSpecificOutput":{"hookEventName":e,"permissionDecision":"deny","permissionDecisionReason":m}}));sys.exit(0)
if g and e=="PermissionRequest":print(json.dumps({"hookSpecificOutput":{"hookEventName":e,"decision":{"behavior":"deny","message":m}}}));sys.exit(0)
h=os.environ.get("OMCM_HOME")or os.path.expanduser("~/.omcm");n=os.path.join(h,".broken-install-told")
try:t=s in open(n).read(1<<16).split()
except OSError:t=False
if not t and e not in("SessionEnd","StopFailure","Notification"):
 try:os.makedirs(h,0o700,exist_ok=True);o=os.open(n,os.O_WRONLY|os.O_CREAT|os.O_APPEND,0o600);os.write(o,s.encode()+b"\n");os.close(o)
 except OSError:pass
 print(json.dumps({"systemMessage":m}))
"""


def fast_hook_argv(event: str, fail_closed: bool = False) -> list[str]:
    """The quickest way to run ``omcm hook EVENT`` with this installation, and one that never blocks by accident.

    ``python -S`` skips the site-packages scan at start-up (the client turns it on
    itself only if it must answer in process); ``-c`` :data:`HOOK_CODE`, never a
    file, so a reinstall cannot make the command exit 2. ``fail_closed``: deny
    when omcm cannot run at all (see :data:`HOOK_CODE`).
    """
    script = str(Path(__file__).resolve().parent.parent / "fast_hook.py")
    # One line (exec of an escaped string): the client's debug log and /hooks show a command per line.
    code = f"exec({json.dumps(HOOK_CODE)})"
    return [sys.executable, "-S", "-c", code, script, event] + (["fail-closed"] if fail_closed else [])


def compile_client() -> None:
    """Write the client's cached bytecode, which fast_hook.py loads on every call.

    pip writes it at install time, but an editable install or
    PYTHONDONTWRITEBYTECODE leaves none, and compiling client.py then costs
    ~0.8 ms per hook. A read-only install keeps whatever it has.
    """
    for name in ("client.py", "wire.py"):  # wire.py: the protocol module client.py imports
        _compile(str(Path(__file__).resolve().parent.parent / "_runtime" / name))


def _compile(source: str) -> None:
    import importlib.util
    import py_compile

    try:
        py_compile.compile(source, cfile=importlib.util.cache_from_source(source), doraise=True)
    except (OSError, py_compile.PyCompileError):
        pass


def hook_command(event: str, base: list[str] | None = None, fail_closed: bool = False, agent: str | None = None) -> str:
    """The command string for settings.json; ``base`` replaces the fast form (``base hook EVENT``).

    ``agent`` (another coding agent, docs/agents.md) is named by ``OMCM_AGENT=NAME`` in front: every
    agent runs the command through a shell, and the variable reaches the dispatch unchanged.
    """
    guarding = ["fail-closed"] if fail_closed else []
    parts = base + ["hook", event, *guarding] if base else fast_hook_argv(event, fail_closed)
    named = [f"OMCM_AGENT={agent}"] if agent and agent != "claude" else []
    if os.name == "nt":  # pragma: no cover
        return " ".join(f'"{p}"' if " " in p else p for p in parts)
    return " ".join([*named, *(shlex.quote(p) for p in parts)])


#: Events a ``[core] fail_closed`` guard answers, whose entry keeps guarding when omcm cannot run.
GUARDED_EVENTS = ("PreToolUse", "PermissionRequest")
#: The first client that knows a hook entry's ``onFailure: "block"`` (it ignores unknown keys before).
ON_FAILURE_CLIENT = "2.1.295"


def hook_entry(
    event: str, base: list[str] | None = None, guard: bool = False, on_failure: bool = False, agent: str | None = None
) -> dict:
    """One settings.json hook handler for ``event``.

    ``guard``: a ``[core] fail_closed`` plugin answers it, so the command denies
    when omcm cannot run, and with ``on_failure`` (client >= :data:`ON_FAILURE_CLIENT`)
    the client itself blocks when the command cannot even start (interpreter gone).
    """
    guard = guard and event in GUARDED_EVENTS
    entry: dict[str, Any] = {
        "type": "command",
        "command": hook_command(event, base, guard, agent),
        "timeout": _timeout(event),
    }
    if guard and on_failure:
        entry["onFailure"] = "block"
    return entry


def on_failure_known(version: str | None) -> bool:
    from omcm_core.events import _at_least

    return _at_least(version, ON_FAILURE_CLIENT)
