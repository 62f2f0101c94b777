"""Files for Claude Code itself (slash commands, a skill, an agent) that ``omcm install`` puts beside settings.json."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from omcm_core._cli.settings_file import InstallError, _manifest_path
from omcm_core.files import atomic_write_bytes, atomic_write_json

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
    written, kept, adopted = [], [], False
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
                if str(target) not in recorded:
                    # omcm's bytes with no record: an older omcm's re-registration dropped it. Ours to remove.
                    recorded[str(target)] = {"path": str(target), "sha256": digest}
                    adopted = True
                continue  # already these bytes
            record = recorded.get(str(target))
            if current is None or record is None or hashlib.sha256(current).hexdigest() != record["sha256"]:
                kept.append(str(target))  # the user's file, or ours edited: theirs now
                continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data, 0o644)
        recorded[str(target)] = {"path": str(target), "sha256": digest}
        written.append(str(target))
    if written or adopted:
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
