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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from omcm_core._cli import native_client

# The pieces install/uninstall are made of, importable from here as before (cli, tests, bench, demo).
from omcm_core._cli.claude_file_install import (  # noqa: F401
    CLAUDE_FILES,
    CLAUDE_FILES_DIR,
    claude_files_for,
    install_files,
    uninstall_files,
)
from omcm_core._cli.hook_command import (  # noqa: F401
    GUARDED_EVENTS,
    HOOK_CODE,
    ON_FAILURE_CLIENT,
    client_version,
    compile_client,
    fast_hook_argv,
    hook_command,
    hook_entry,
    on_failure_known,
)
from omcm_core._cli.matchers import place as place_matcher
from omcm_core._cli.settings_file import (  # noqa: F401
    InstallError,
    _detect_indent,
    _dump,
    _load,
    _manifest_path,
    _recorded_for,
    _through_links,
    installed_commands,
    settings_path,
)
from omcm_core.events import events_for_hooks  # noqa: F401  (cli imports events_for_hooks from here)
from omcm_core.files import atomic_write_bytes, atomic_write_json


def install(
    home: Path,
    settings: Path,
    events: list[str],
    base: list[str] | None = None,
    guard: bool = False,
    on_failure: bool = False,
    matchers: Mapping[str, str] | None = None,
    agent: str | None = None,
    shape: Callable[[str, dict], dict] | None = None,
) -> dict[str, Any]:
    """Add one omcm hook entry per event (``matchers``: its tool matcher, see ``matchers.py``); idempotent. Returns what was added and what was rewritten.

    ``agent``: another coding agent's hooks file in Claude's shape (``OMCM_AGENT`` in each command, the
    agent named in the manifest); ``shape``: that agent's changes to each entry (units, limits).

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
        entry = hook_entry(event, base, guard, on_failure, agent)
        if shape is not None:
            entry = shape(event, entry)
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
    created = list(previous.get("created", [])) if previous else []
    if not settings.parent.exists():  # .claude made for this: uninstall removes it again if empty
        created.append(str(settings.parent))
    settings.parent.mkdir(parents=True, exist_ok=True)
    mode = settings.stat().st_mode & 0o777 if settings.exists() else 0o644
    new_bytes = _dump(data, indent)
    manifest: dict[str, Any] = {
        "settings": str(settings),
        "original": base64.b64encode(original).decode() if original is not None else None,
        "installed_sha256": hashlib.sha256(new_bytes).hexdigest(),
        "added": added,
    }
    if previous:  # keep the bytes from before the very first install, and the files written since
        manifest["original"] = previous["original"]
        current_sha = hashlib.sha256(original or b"").hexdigest()
        if previous.get("edited") or current_sha != previous.get("installed_sha256"):
            manifest["edited"] = True  # changed by someone since: the original bytes would undo their change
        manifest["files"] = previous.get("files", [])
        for key, value in previous.items():  # what an agent's setup keeps there too (Codex: its config.toml)
            manifest.setdefault(key, value)
    if created:
        manifest["created"] = created
    if agent and agent != "claude":
        manifest["agent"] = agent
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
    if not manifest.get("edited") and hashlib.sha256(current).hexdigest() == manifest["installed_sha256"]:
        # Untouched since install: put back the exact original bytes.
        if original is None:
            settings.unlink()
        else:
            atomic_write_bytes(settings, original, mode)
        manifest_file.unlink()
        return {
            "settings": str(settings),
            "removed": manifest["added"],
            "restored": original is not None,
            "deleted": original is None,
        }
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
        if not hooks and (original is None or b'"hooks"' not in original):
            data.pop("hooks", None)
    manifest_file.unlink()
    if original is None and not data:  # omcm made the file and nothing else is in it
        settings.unlink()
        return {"settings": str(settings), "removed": removed, "restored": False, "deleted": True}
    atomic_write_bytes(settings, _dump(data, _detect_indent(current.decode("utf-8", "replace"))), mode)
    return {"settings": str(settings), "removed": removed, "restored": False}


def uninstall_note(result: dict[str, Any], kept: str = "your other settings kept") -> str:
    """What :func:`uninstall` did to the file, in a few words for the person who ran it."""
    if result.get("note"):
        return str(result["note"])
    if result.get("restored"):
        return "restored as it was before omcm"
    if result.get("deleted"):
        return "removed (omcm had created it)"
    return f"omcm entries removed, {kept}"


def created_paths(home: Path, settings: Path) -> list[str]:
    """What ``install`` created for ``settings`` (its .claude folder, an MCP file), read before ``uninstall``."""
    manifest_file = _manifest_path(home, _through_links(settings))
    try:
        return list(json.loads(manifest_file.read_text()).get("created", []))
    except (OSError, ValueError, AttributeError):
        return []


def note_created(home: Path, settings: Path, path: Path) -> None:
    """Record that omcm created ``path`` (an MCP file) for ``settings``, so ``uninstall`` may remove it once empty."""
    manifest_file = _manifest_path(home, _through_links(settings))
    try:
        manifest = json.loads(manifest_file.read_text())
    except (OSError, ValueError):
        return
    created = manifest.setdefault("created", [])
    if str(path) not in created:
        created.append(str(path))
        atomic_write_json(manifest_file, manifest)


def remove_created(paths: list[str]) -> list[str]:
    """Remove what omcm created that holds nothing now: a JSON file with no value left in it, an empty folder."""
    removed = []
    for name in sorted(paths, key=lambda p: (Path(p).is_dir(), -len(Path(p).parts))):  # files, then deepest folders
        path = Path(name)
        try:
            if path.is_symlink():
                continue
            if path.is_file():
                if _empty_json(path.read_bytes()):
                    path.unlink()
                    removed.append(name)
            elif path.is_dir():
                path.rmdir()  # only if empty: OSError otherwise
                removed.append(name)
        except OSError:
            continue
    return removed


def _empty_json(raw: bytes) -> bool:
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return False
    return isinstance(data, dict) and all(value in ({}, [], None) for value in data.values())


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
