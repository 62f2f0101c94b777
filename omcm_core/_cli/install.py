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


def fast_hook_argv(event: str) -> list[str]:
    """The quickest way to run ``omcm hook EVENT`` with this installation.

    ``python -S fast_hook.py`` skips the site-packages scan at start-up (the
    client turns it on itself only if it must answer in process).
    """
    return [sys.executable, "-S", str(Path(__file__).resolve().parent.parent / "fast_hook.py"), event]


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


def hook_command(event: str, base: list[str] | None = None) -> str:
    """The command string for settings.json; ``base`` replaces the fast form (``base hook EVENT``)."""
    parts = base + ["hook", event] if base else fast_hook_argv(event)
    if os.name == "nt":  # pragma: no cover
        return " ".join(f'"{p}"' if " " in p else p for p in parts)
    return " ".join(shlex.quote(p) for p in parts)


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


def install(home: Path, settings: Path, events: list[str], base: list[str] | None = None) -> dict[str, Any]:
    """Add one omcm hook entry per event; idempotent. Returns what was added."""
    settings = _through_links(settings)
    original, data = _load(settings)
    manifest_file = _manifest_path(home, settings)
    previous = json.loads(manifest_file.read_text()) if manifest_file.exists() else None
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{settings}: 'hooks' is not an object; omcm will not touch it")
    added = list(previous["added"]) if previous else []
    if not base:
        compile_client()
        base = native_client.prepare(home, settings)  # the native client's argv, or None: the Python one
    for event in events:
        command = hook_command(event, base)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f"{settings}: hooks.{event} is not a list; omcm will not touch it")
        present = any(
            isinstance(g, dict) and any(isinstance(h, dict) and h.get("command") == command for h in g.get("hooks", []))
            for g in groups
        )
        if present:
            continue
        groups.append({"hooks": [{"type": "command", "command": command, "timeout": _timeout(event)}]})
        added.append({"event": event, "command": command})
    if not added or (previous and len(added) == len(previous["added"])):
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
    return {"settings": str(settings), "added": added[len(previous["added"]) if previous else 0 :]}


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
