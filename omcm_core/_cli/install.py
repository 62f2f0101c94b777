"""``omcm install`` / ``omcm uninstall``: add omcm to a Claude Code settings.json, then remove exactly that.

Install records a manifest in ``OMCM_HOME/installs/`` with the file's original
bytes and the exact hook entries it added. Uninstall removes those entries; if
nothing else changed since, it restores the original bytes exactly, so everyone
else's hooks and settings are byte-for-byte what they were. If the user edited
the file meanwhile, only omcm's entries are removed and the rest is kept, in its
order and indentation.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omcm_core._cli import native_client
from omcm_core._cli.matchers import place as place_matcher
from omcm_core.events import EVENTS, events_for_hooks  # noqa: F401  (cli imports events_for_hooks from here)
from omcm_core.files import atomic_write_bytes, atomic_write_json
from omcm_core.paths import ensure_private_dir


class InstallError(Exception):
    pass


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


def settings_path(scope: str, project: Path | None, env: Mapping[str, str] | None = None) -> Path:
    if scope == "user":
        # The invocation's HOME, not this process's: a command run for another environment
        # (a test, a wrapper) must not edit the caller's own ~/.claude/settings.json.
        home = (env or {}).get("HOME")
        return (Path(home) if home else Path.home()) / ".claude" / "settings.json"
    if project is None:
        raise InstallError("project scope needs a project directory (--project-dir or CLAUDE_PROJECT_DIR)")
    name = "settings.local.json" if scope == "local" else "settings.json"
    return project / ".claude" / name


#: The registered command's program, run as ``python -S -c HOOK_CODE .../fast_hook.py EVENT``.
#: A file Python is asked to run that is gone (a reinstall under another Python, a
#: moved or removed omcm) makes it exit 2, which Claude Code takes for a blocking
#: hook error: every prompt refused. ``-c`` cannot miss, so the code decides:
#: 1. the fast path: fast_hook.py's folder's ``_runtime/client.py`` from its bytecode;
#: 2. gone: site-packages on, omcm_core from wherever this interpreter now has it
#:    (``uv tool install --reinstall --python X`` keeps the interpreter's path);
#: 3. no omcm at all: exit 0, and once per session a systemMessage naming
#:    ``omcm doctor``; with ``fail-closed`` (a ``[core] fail_closed`` guard) a
#:    PreToolUse/PermissionRequest is denied instead, since a missing guard must keep guarding.
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


def hook_command(event: str, base: list[str] | None = None, fail_closed: bool = False) -> str:
    """The command string for settings.json; ``base`` replaces the fast form (``base hook EVENT``)."""
    guarding = ["fail-closed"] if fail_closed else []
    parts = base + ["hook", event, *guarding] if base else fast_hook_argv(event, fail_closed)
    if os.name == "nt":  # pragma: no cover
        return " ".join(f'"{p}"' if " " in p else p for p in parts)
    return " ".join(shlex.quote(p) for p in parts)


#: Events a ``[core] fail_closed`` guard answers, whose entry keeps guarding when omcm cannot run.
GUARDED_EVENTS = ("PreToolUse", "PermissionRequest")
#: The first client that knows a hook entry's ``onFailure: "block"`` (it ignores unknown keys before).
ON_FAILURE_CLIENT = "2.1.295"


def hook_entry(event: str, base: list[str] | None = None, guard: bool = False, on_failure: bool = False) -> dict:
    """One settings.json hook handler for ``event``.

    ``guard``: a ``[core] fail_closed`` plugin answers it, so the command denies
    when omcm cannot run, and with ``on_failure`` (client >= :data:`ON_FAILURE_CLIENT`)
    the client itself blocks when the command cannot even start (interpreter gone).
    """
    guard = guard and event in GUARDED_EVENTS
    entry: dict[str, Any] = {"type": "command", "command": hook_command(event, base, guard), "timeout": _timeout(event)}
    if guard and on_failure:
        entry["onFailure"] = "block"
    return entry


def on_failure_known(version: str | None) -> bool:
    from omcm_core.events import _at_least

    return _at_least(version, ON_FAILURE_CLIENT)


def _manifest_path(home: Path, settings: Path) -> Path:
    digest = hashlib.sha256(str(settings.resolve()).encode()).hexdigest()[:16]
    return ensure_private_dir(home / "installs") / f"{digest}.json"


def _through_links(settings: Path) -> Path:
    """The file to change: a symlinked settings.json (dotfiles) is written where it points, and stays a link."""
    return Path(os.path.realpath(settings))


def _recorded_for(home: Path, settings: Path) -> Path | None:
    """A manifest naming ``settings`` as given: older versions keyed it on a link's target, then replaced the link."""
    for manifest in (home / "installs").glob("*.json"):
        try:
            if json.loads(manifest.read_text())["settings"] == str(settings):
                return manifest
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def _detect_indent(text: str) -> int:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(stripped) != len(line):
            return len(line) - len(stripped)
    return 2


def _load(path: Path) -> tuple[bytes | None, dict]:
    if not path.exists():
        return None, {}
    raw = path.read_bytes()
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix it first, omcm will not touch it") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; omcm will not touch it")
    return raw, data


def _dump(data: dict, indent: int) -> bytes:
    return (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def install(
    home: Path,
    settings: Path,
    events: list[str],
    base: list[str] | None = None,
    guard: bool = False,
    on_failure: bool = False,
    matchers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Add one omcm hook entry per event (``matchers``: its tool matcher, see ``matchers.py``); idempotent. Returns what was added and what was rewritten.

    An entry omcm added before (its manifest) whose command or fields changed (omcm
    moved to another Python, a guard added) is rewritten in place, not doubled.
    """
    settings = _through_links(settings)
    original, data = _load(settings)
    manifest_file = _manifest_path(home, settings)
    previous = json.loads(manifest_file.read_text()) if manifest_file.exists() else None
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{settings}: 'hooks' is not an object; omcm will not touch it")
    added = list(previous["added"]) if previous else []
    ours = {(a["event"], a["command"]) for a in added}
    if not base:
        compile_client()
        base = native_client.prepare(home, settings)  # the native client's argv, or None: the Python one
    new, rewritten = [], []
    for event in events:
        entry = hook_entry(event, base, guard, on_failure)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f"{settings}: hooks.{event} is not a list; omcm will not touch it")
        handlers = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if isinstance(h, dict)]
        matcher = (matchers or {}).get(event)
        same = next((h for h in handlers if h == entry and (event, h.get("command")) in ours), None)
        if same is not None and place_matcher(groups, same, matcher):
            rewritten.append({"event": event, "command": entry["command"]})
        if any(h == entry for h in handlers):
            continue
        old = next((h for h in handlers if (event, h.get("command")) in ours), None)
        if old is not None:
            record = next(a for a in added if a["event"] == event and a["command"] == old["command"])
            old.clear()
            old.update(entry)
            place_matcher(groups, old, matcher)
            record["command"] = entry["command"]
            rewritten.append(record)
            continue
        if any(h.get("command") == entry["command"] for h in handlers):
            continue  # someone else's copy of our exact command (an older manifest-less install)
        groups.append({**({"matcher": matcher} if matcher else {}), "hooks": [entry]})
        new.append({"event": event, "command": entry["command"]})
    added += new
    if not new and not rewritten:
        return {"settings": str(settings), "added": [], "already": True}
    indent = _detect_indent(original.decode("utf-8", "replace")) if original else 2
    settings.parent.mkdir(parents=True, exist_ok=True)
    mode = settings.stat().st_mode & 0o777 if settings.exists() else 0o644
    new_bytes = _dump(data, indent)
    manifest = {
        "settings": str(settings),
        "original": base64.b64encode(original).decode() if original is not None else None,
        "installed_sha256": hashlib.sha256(new_bytes).hexdigest(),
        "added": added,
    }
    if previous:  # keep the bytes from before the very first install
        manifest["original"] = previous["original"]
    atomic_write_json(manifest_file, manifest)
    atomic_write_bytes(settings, new_bytes, mode)
    return {"settings": str(settings), "added": new, "rewritten": rewritten}


def uninstall(home: Path, settings: Path) -> dict[str, Any]:
    """Remove exactly the entries ``install`` added to ``settings``."""
    given, settings = settings, _through_links(settings)
    manifest_file = _manifest_path(home, settings)
    if not manifest_file.exists():
        manifest_file = _recorded_for(home, given) or manifest_file
    if not manifest_file.exists():
        return {"settings": str(settings), "removed": [], "note": "omcm was not installed here"}
    manifest = json.loads(manifest_file.read_text())
    native_client.forget(home, manifest_file)
    if not settings.exists():
        manifest_file.unlink()
        return {"settings": str(settings), "removed": [], "note": "settings file is gone"}
    current = settings.read_bytes()
    mode = settings.stat().st_mode & 0o777
    original = base64.b64decode(manifest["original"]) if manifest["original"] is not None else None
    if hashlib.sha256(current).hexdigest() == manifest["installed_sha256"]:
        # Untouched since install: put back the exact original bytes.
        if original is None:
            settings.unlink()
        else:
            atomic_write_bytes(settings, original, mode)
        manifest_file.unlink()
        return {"settings": str(settings), "removed": manifest["added"], "restored": True}
    _raw, data = _load(settings)
    ours = {(a["event"], a["command"]) for a in manifest["added"]}
    hooks = data.get("hooks", {})
    removed = []
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept_groups = []
            for group in groups:
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    kept = [
                        h for h in group["hooks"] if not (isinstance(h, dict) and (event, h.get("command")) in ours)
                    ]
                    removed += [{"event": event, "command": h["command"]} for h in group["hooks"] if h not in kept]
                    if not kept:
                        continue
                    if len(kept) != len(group["hooks"]):
                        group = {**group, "hooks": kept}
                kept_groups.append(group)
            if kept_groups:
                hooks[event] = kept_groups
            else:
                del hooks[event]
        if not hooks and original is not None and b'"hooks"' not in original:
            data.pop("hooks", None)
    atomic_write_bytes(settings, _dump(data, _detect_indent(current.decode("utf-8", "replace"))), mode)
    manifest_file.unlink()
    return {"settings": str(settings), "removed": removed, "restored": False}


def installed_commands(settings: Path) -> list[tuple[str, str]]:
    """``(event, command)`` pairs in ``settings`` that run ``omcm hook``."""
    try:
        _raw, data = _load(settings)
    except InstallError:
        return []
    found = []
    hooks = data.get("hooks", {})
    if isinstance(hooks, dict):
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else []:
                for h in group.get("hooks", []) if isinstance(group, dict) else []:
                    cmd = h.get("command", "") if isinstance(h, dict) else ""
                    if "omcm" in cmd and (" hook " in f"{cmd} " or "fast_hook.py" in cmd or "client.py" in cmd):
                        found.append((event, cmd))
    return found


def install_notes(hooks: set[str], version: str | None, scope: str | None) -> list[str]:
    """What ``omcm install`` left out or wrote that the user should know (printed on stderr)."""
    from omcm_core.events import EVENTS, _at_least

    notes = []
    for spec in EVENTS.values():
        if spec.hook not in hooks or spec.min_client is None or _at_least(version, spec.min_client):
            continue
        if version is None:
            notes.append(
                f"{spec.name} left out: it needs Claude Code {spec.min_client} or later and `claude` is not on "
                "PATH here, so its version is unknown; run `omcm install` again where `claude --version` works"
            )
        else:
            notes.append(f"{spec.name} left out: it needs Claude Code {spec.min_client} or later, this is {version}")
    if scope == "project":
        notes.append(
            "--scope project wrote this machine's paths (this Python and omcm) into the project's "
            ".claude/settings.json, a file teams commit: a teammate's session would run a program it does "
            "not have (harmless, but their hooks do nothing). For yourself only, use --scope local."
        )
    return notes


#: Files for Claude Code itself (slash commands, a skill, an agent), by the plugin that needs them.
#: The plugin route ships the same bytes at the repository root (commands/, skills/, agents/).
CLAUDE_FILES = {
    "persistent-mode": (
        "commands/ralph-loop.md",
        "commands/ultrawork.md",
        "commands/ultrawork-ralph.md",
        "commands/cancel-ralph.md",
        "commands/cancel-ultrawork.md",
    ),
    "memory-rotation": ("skills/memory-rotate/SKILL.md", "agents/memory-summarizer.md"),
}
CLAUDE_FILES_DIR = Path(__file__).resolve().parent / "claude_files"


def claude_files_for(plugins: set[str]) -> list[str]:
    return [name for plugin, names in CLAUDE_FILES.items() if plugin in plugins for name in names]


def install_files(home: Path, settings: Path, names: list[str]) -> dict[str, list[str]]:
    """Copy ``names`` (from :data:`CLAUDE_FILES_DIR`) beside ``settings`` (``.claude/commands/…``).

    A file already there with other bytes is the user's: kept, and said. What is
    written is recorded (path, sha256) in the settings file's manifest, so that
    ``uninstall`` removes exactly those, if unchanged.
    """
    manifest_file = _manifest_path(home, settings)
    manifest = json.loads(manifest_file.read_text()) if manifest_file.exists() else None
    if manifest is None:
        raise InstallError(f"no install manifest for {settings}: run `omcm install` first")
    recorded = {f["path"]: f for f in manifest.get("files", [])}
    written, kept = [], []
    for name in names:
        data = (CLAUDE_FILES_DIR / name).read_bytes()
        target = settings.parent / name
        digest = hashlib.sha256(data).hexdigest()
        if not _stays_inside(target, settings.parent):
            kept.append(str(target))  # a folder on the way is a link out (a cloned repo can plant one)
            continue
        if target.is_symlink() or target.exists():
            current = target.read_bytes() if target.is_file() and not target.is_symlink() else None
            if current == data:
                continue  # already these bytes
            record = recorded.get(str(target))
            if current is None or record is None or hashlib.sha256(current).hexdigest() != record["sha256"]:
                kept.append(str(target))  # the user's file, or ours edited: theirs now
                continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data, 0o644)
        recorded[str(target)] = {"path": str(target), "sha256": digest}
        written.append(str(target))
    if written:
        manifest["files"] = list(recorded.values())
        atomic_write_json(manifest_file, manifest)
    return {"written": written, "kept": kept}


def _stays_inside(target: Path, base: Path) -> bool:
    """No folder between ``base`` and ``target`` is a link (``base`` itself may be: dotfiles link ~/.claude)."""
    return not any(folder.is_symlink() for folder in target.parents if folder.is_relative_to(base) and folder != base)


def uninstall_files(home: Path, settings: Path) -> dict[str, list[str]]:
    """Remove the files :func:`install_files` wrote for ``settings`` that are still as written; keep the rest."""
    manifest_file = _manifest_path(home, settings)
    if not manifest_file.exists():
        return {"removed": [], "kept": []}
    manifest = json.loads(manifest_file.read_text())
    removed, kept = [], []
    for record in manifest.get("files", []):
        target = Path(record["path"])
        try:
            unchanged = not target.is_symlink() and hashlib.sha256(target.read_bytes()).hexdigest() == record["sha256"]
        except OSError:
            continue  # gone already
        if not unchanged:
            kept.append(str(target))
            continue
        target.unlink()
        removed.append(str(target))
        for folder in target.parents:  # the folders it made, if now empty (never .claude itself)
            if folder == settings.parent or not folder.is_relative_to(settings.parent):
                break
            try:
                folder.rmdir()
            except OSError:
                break
    if manifest.get("files"):
        manifest["files"] = []
        atomic_write_json(manifest_file, manifest)
    return {"removed": removed, "kept": kept}
