"""``omcm install --agent codex``: omcm's hooks in Codex CLI's ``hooks.json``, trusted, and ``omcm mcp`` registered.

- ``$CODEX_HOME/hooks.json`` (``~/.codex`` when unset), Claude Code's shape: written by the
  same ``install.install`` as Claude's settings.json, so the same manifest in
  ``OMCM_HOME/installs/`` makes ``uninstall`` exact (original bytes back when nothing
  else changed). Each command is the one ``omcm install`` writes with ``OMCM_AGENT=codex``
  in front; timeouts whole seconds, SessionEnd at most 3; only events Codex runs.
- ``config.toml``: ``codex exec`` silently skips a hook nobody trusted, so omcm writes the
  record Codex's own review writes for each of its handlers (``[hooks.state."KEY"]
  trusted_hash``, key and hash as ``codex app-server``'s ``hooks/list`` reports them,
  :mod:`.codex_toml`), refreshed whenever omcm rewrites its entries; ``[mcp_servers.omcm]``
  when a plugin serves MCP tools. What it wrote is kept in the same manifest
  (``codex_config``) and removed at uninstall; the rest of the file is kept byte for byte.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from omcm_core._cli.agent_setup import codex_toml as toml
from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning
from omcm_core._cli.invocation import Invocation

AGENT = "codex"
FIX = "omcm install --agent codex"


def codex_home(env: Mapping[str, str]) -> Path:
    """The folder Codex reads, named as Codex names it in its trust keys.

    ``CODEX_HOME`` is resolved (Codex canonicalises it); ``~/.codex`` is taken as the
    path reads, links and all (Codex keys ``$HOME/.codex/hooks.json`` unresolved).
    """
    named = (env.get("CODEX_HOME") or "").strip()
    if named:
        return Path(os.path.realpath(named))
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".codex"


def hooks_file(env: Mapping[str, str]) -> Path:
    return codex_home(env) / "hooks.json"


def config_file(env: Mapping[str, str]) -> Path:
    return codex_home(env) / "config.toml"


def shape(event: str, entry: dict) -> dict:
    """An entry as Codex reads it: whole seconds (its ``timeout`` is an integer), SessionEnd within its 3 s."""
    from omcm_core.agents.codex import SESSION_END_MAX_S

    out = {k: v for k, v in entry.items() if k != "onFailure"}  # Claude Code's key; Codex has none
    seconds = max(1, math.ceil(float(entry.get("timeout", toml.DEFAULT_TIMEOUT_S))))
    out["timeout"] = min(seconds, SESSION_END_MAX_S) if event == "SessionEnd" else seconds
    return out


def install(args: argparse.Namespace, inv: Invocation, hooks: set[str]) -> int:
    from omcm_core._cli import install as settings
    from omcm_core.agents.codex import HOOK_EVENTS
    from omcm_core.config import CoreConfig

    if getattr(args, "scope", "user") != "user" and not getattr(args, "settings", None):
        print(
            "omcm: --agent codex installs for the user ($CODEX_HOME, else ~/.codex), not per --scope", file=sys.stderr
        )
        return 2
    events = [e for e in settings.events_for_hooks(hooks, "999.0.0") if e in HOOK_EVENTS]
    if not events:
        print("omcm: no installed plugin implements a hook Codex runs; nothing to register.", file=sys.stderr)
        return 1
    path = _hooks_path(args, inv)
    mcp = _mcp_entry() if inv.manager.implementations("mcp_tools") else None
    try:
        _editable(path.parent / "config.toml", mcp)  # a config.toml omcm cannot edit stops it before any write
        guard = bool(inv.config.section("core", CoreConfig).fail_closed)
        result = settings.install(inv.home, path, events, guard=guard, agent=AGENT, shape=shape)
        trust = write_config(inv.home, path, path.parent / "config.toml", mcp)
    except (settings.InstallError, toml.TomlEditError, OSError) as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    if result.get("already"):
        print(f"omcm is already installed in {path}")
    if result.get("added"):
        print(f"omcm installed in {path} for: {', '.join(a['event'] for a in result['added'])}")
    if result.get("rewritten"):
        print(f"omcm updated in {path} for: {', '.join(a['event'] for a in result['rewritten'])}")
    print(f"omcm trusted its {trust['trusted']} hook(s) in {trust['config']} (as Codex's own review would)")
    if trust.get("mcp") == "kept":
        print(f"omcm: kept your own [mcp_servers.omcm] in {trust['config']}")
    elif trust.get("mcp"):
        print(f"omcm mcp registered with Codex in {trust['config']} ([mcp_servers.omcm])")
    return 0


def uninstall(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._cli import install as settings

    path = _hooks_path(args, inv)
    try:
        recorded = _manifest(inv.home, path).get("codex_config")
        created = settings.created_paths(inv.home, path)
        result = settings.uninstall(inv.home, path)
        config = remove_config(recorded) if recorded else None
    except (settings.InstallError, toml.TomlEditError, OSError) as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: {settings.uninstall_note(result, 'your other hooks kept')}")
    if config and recorded:
        print(f"{recorded['path']}: {config}")
    for gone in settings.remove_created(created):
        print(f"removed {gone} (omcm had created it; nothing is left in it)")
    return 0


def _hooks_path(args: argparse.Namespace, inv: Invocation) -> Path:
    """The hooks.json to change: ``--settings PATH`` (how repair and plugin installs name it again), else Codex's.

    Codex keys its trust records by the path it reads: the file Codex reads is named as Codex names it even
    when given by another name (a manifest records the resolved one), any other file as written.
    """
    named = getattr(args, "settings", None)
    ours = hooks_file(inv.env)
    if not named:
        return ours
    given = Path(os.path.abspath(Path(inv.cwd, named)))
    return ours if os.path.realpath(given) == os.path.realpath(ours) else given


def _mcp_entry() -> dict[str, Any]:
    from omcm_core._cli import mcp_registration

    entry = mcp_registration.server_entry()
    return {"command": entry["command"], "args": list(entry["args"])}


def _manifest(home: Path, hooks: Path) -> dict[str, Any]:
    from omcm_core._cli.settings_file import _manifest_path, _through_links

    try:
        data = json.loads(_manifest_path(home, _through_links(hooks)).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _config_text(config: Path) -> str:
    """config.toml's text ("" when absent), bounded, UTF-8 and valid TOML, or TomlEditError."""
    real = Path(os.path.realpath(config))
    if not real.exists():
        return ""
    if real.stat().st_size > toml.MAX_BYTES:
        raise toml.TomlEditError(f"{config} is over {toml.MAX_BYTES >> 20} MB; omcm will not edit it")
    try:
        text = real.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise toml.TomlEditError(f"{config} is not UTF-8 text; fix it first, omcm will not touch it") from None
    try:
        toml.parse(text)
    except toml.TomlEditError as exc:
        raise toml.TomlEditError(f"{config} is {exc}; fix it first, omcm will not touch it") from None
    return text


def _editable(config: Path, mcp: Mapping[str, Any] | None) -> None:
    """TomlEditError unless omcm's tables could be added to ``config`` as it is now (tried on its text only)."""
    text = _config_text(config)
    tables = [toml.state_table("omcm:probe:0:0", "sha256:0")]
    if mcp is not None and "omcm" not in (toml.parse(text).get("mcp_servers") or {}):
        tables.append(toml.mcp_table(str(mcp["command"]), mcp["args"]))
    try:
        toml.checked(text, toml.append_tables(text, tables), ["omcm:probe:0:0"], len(tables) > 1)
    except toml.TomlEditError as exc:
        raise toml.TomlEditError(f"{config}: {exc}") from None


def our_handlers(hooks: Path, key_path: Path, added: Iterable[Mapping[str, str]]) -> list[tuple[str, str, dict]]:
    """``(key, event, handler)`` for each of omcm's handlers in ``hooks`` (the commands its manifest added)."""
    ours = {(a["event"], a["command"]) for a in added}
    try:
        data = json.loads(Path(os.path.realpath(hooks)).read_bytes())
    except (OSError, ValueError):
        return []
    found = []
    events = data.get("hooks") if isinstance(data, dict) else None
    for event, groups in (events if isinstance(events, dict) else {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(handler, dict) and (event, handler.get("command")) in ours:
                    entry = {**handler, "_matcher": group.get("matcher")}
                    found.append((toml.hook_key(str(key_path), event, g, h), event, entry))
    return found


def expected_hash(event: str, entry: Mapping[str, Any]) -> str:
    matcher = entry.get("_matcher")
    return toml.trusted_hash(event, entry, matcher if isinstance(matcher, str) else None)


def write_config(home: Path, hooks: Path, config: Path, mcp: Mapping[str, Any] | None) -> dict[str, Any]:
    """Trust omcm's handlers (and register ``omcm mcp``) in ``config``; what was written goes in the manifest."""
    from omcm_core._cli.settings_file import _manifest_path, _through_links
    from omcm_core.files import atomic_write_bytes, atomic_write_json

    manifest_file = _manifest_path(home, _through_links(hooks))
    manifest = json.loads(manifest_file.read_text())
    previous = manifest.get("codex_config") or {}
    real = Path(os.path.realpath(config))
    text = _config_text(config)
    existed = real.exists()
    old_keys = list(previous.get("keys", []))
    new = text
    for header in previous.get("tables", []):  # omcm's earlier records: rewritten below
        new, _ = toml.remove_table(new, header)
    tables, headers, keys = [], [], []
    replaced = dict(previous.get("replaced", {}))
    for key, event, entry in our_handlers(hooks, hooks, manifest.get("added", [])):
        header = toml.state_header(key)
        new, stale = toml.remove_table(new, header)  # a record left by a hook once at this position
        if stale is not None and header not in replaced:
            replaced[header] = stale
        tables.append(toml.state_table(key, expected_hash(event, entry)))
        headers.append(header)
        keys.append(key)
    mcp_state = None
    if mcp is not None:
        theirs = toml.find_table(new, toml.MCP_HEADER) is not None or "omcm" in (
            toml.parse(new).get("mcp_servers") or {}
        )
        if theirs and toml.MCP_HEADER not in previous.get("tables", []):
            mcp_state = "kept"
        else:
            tables.append(toml.mcp_table(str(mcp["command"]), mcp["args"]))
            headers.append(toml.MCP_HEADER)
            mcp_state = "registered"
    new = toml.append_tables(new, tables)
    owns_mcp = mcp_state == "registered" or toml.MCP_HEADER in previous.get("tables", [])
    toml.checked(text, new, old_keys + keys, owns_mcp)
    edited = bool(previous) and (
        previous.get("edited") or hashlib.sha256(text.encode("utf-8")).hexdigest() != previous.get("installed_sha256")
    )
    if previous:
        original = previous.get("original")
    else:
        original = base64.b64encode(real.read_bytes()).decode() if existed else None
    if new != text or not previous:
        mode = real.stat().st_mode & 0o777 if existed else 0o600  # config.toml may hold tokens: owner-only
        real.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(real, new.encode("utf-8"), mode)
    manifest["codex_config"] = {
        "path": str(real),
        "original": original,
        "installed_sha256": hashlib.sha256(new.encode("utf-8")).hexdigest(),
        "tables": headers,
        "keys": keys,
        "replaced": replaced,
        "edited": edited,  # changed by someone since: uninstall must not put the original bytes back
    }
    atomic_write_json(manifest_file, manifest)
    return {"config": str(config), "trusted": len(keys), "mcp": mcp_state}


def remove_config(recorded: Mapping[str, Any]) -> str:
    """Undo :func:`write_config`: the original bytes when nothing else changed, else only omcm's tables."""
    from omcm_core.files import atomic_write_bytes

    real = Path(recorded["path"])
    if not real.exists():
        return "gone already"
    current = real.read_bytes()
    mode = real.stat().st_mode & 0o777
    original = base64.b64decode(recorded["original"]) if recorded.get("original") is not None else None
    if not recorded.get("edited") and hashlib.sha256(current).hexdigest() == recorded.get("installed_sha256"):
        if original is None:
            real.unlink()
            return "removed (omcm had created it)"
        atomic_write_bytes(real, original, mode)
        return "restored as it was before omcm"
    text = _config_text(real)
    new = text
    for header in recorded.get("tables", []):
        new, _ = toml.remove_table(new, header)
    new = toml.append_tables(new, [t for h, t in recorded.get("replaced", {}).items() if h not in new])
    toml.checked(text, new, list(recorded.get("keys", [])), toml.MCP_HEADER in recorded.get("tables", []))
    if original is None and not toml.parse(new):
        real.unlink()
        return "removed (omcm had created it; nothing else is in it)"
    atomic_write_bytes(real, new.encode("utf-8"), mode)
    return "omcm's trust records removed, your other settings kept"


def installed(probe: Probe) -> bool:
    """omcm is registered with Codex (its section then shows in a plain `omcm doctor`)."""
    return bool(_manifest(probe.home, hooks_file(probe.env)).get("added"))


def doctor(probe: Probe) -> Iterable[Check]:
    path = hooks_file(probe.env)
    manifest = _manifest(probe.home, path)
    if not manifest.get("added"):
        yield info("codex.registered", "omcm is not registered with Codex CLI", fix=FIX)
        return
    handlers = our_handlers(path, path, manifest["added"])
    yield ok("codex.registered", f"omcm is registered with Codex CLI in {probe.tilde(path)} ({len(handlers)} hook(s))")
    missing = {(a["event"], a["command"]) for a in manifest["added"]} - {(e, h["command"]) for _k, e, h in handlers}
    if missing:
        yield warning(
            "codex.missing",
            f"{len(missing)} of omcm's hooks were removed from {probe.tilde(path)}: "
            + ", ".join(sorted(e for e, _c in missing)),
            fix=FIX,
        )
    yield from _stale(handlers)
    yield from _trust(probe, handlers)


def _stale(handlers: list[tuple[str, str, dict]]) -> Iterable[Check]:
    from omcm_core._cli.repair import _client_paths

    gone = sorted({p for _k, _e, h in handlers for p in _client_paths(str(h["command"])) if not os.path.exists(p)})
    if gone:
        yield error(
            "codex.stale",
            f"Codex runs an omcm client that is gone ({gone[0]}): omcm was upgraded, moved or removed",
            fix=FIX,
        )


def _trust(probe: Probe, handlers: list[tuple[str, str, dict]]) -> Iterable[Check]:
    config = config_file(probe.env)
    try:
        state = toml.parse(_config_text(config)).get("hooks", {}).get("state", {})
    except (toml.TomlEditError, OSError, AttributeError) as exc:
        yield error("codex.config", f"{probe.tilde(config)} cannot be read: {exc}", fix=f"fix {probe.tilde(config)}")
        return
    untrusted, disabled = [], []
    for key, event, entry in handlers:
        record = state.get(key) if isinstance(state, dict) else None
        record = record if isinstance(record, dict) else {}
        if record.get("enabled") is False:
            disabled.append(event)
        if record.get("trusted_hash") != expected_hash(event, entry):
            untrusted.append(f"{event} ({'modified' if record.get('trusted_hash') else 'untrusted'})")
    if untrusted:
        yield error(
            "codex.untrusted",
            f"Codex skips {len(untrusted)} of omcm's hooks without a word: not trusted in {probe.tilde(config)}",
            fix=FIX,
            details=tuple(untrusted),
        )
    elif handlers:
        yield ok("codex.trusted", f"Codex trusts omcm's {len(handlers)} hook(s) ({probe.tilde(config)})")
    if disabled:
        yield warning(
            "codex.disabled",
            f"you turned off omcm's {', '.join(disabled)} hook(s) in Codex (enabled = false in {probe.tilde(config)})",
        )
