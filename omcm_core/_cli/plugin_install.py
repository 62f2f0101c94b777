"""``omcm plugins install`` / ``omcm plugins uninstall``: change which plugins omcm's own environment holds.

Like ``llm install``: whatever route omcm came by (pipx, uv tool, a plain venv,
the Claude Code plugin's data folder), the plugin goes into the environment of
the interpreter running this command, so the user never has to find it. Then
every settings file ``omcm install`` registered omcm in is registered again,
so events only the new plugin answers start reaching it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from omcm_core._cli.invocation import Invocation

CORE = "omcm-core"


def installer(env: dict[str, str]) -> tuple[str, list[str]] | None:
    """The start of a command that installs into this interpreter's environment, or None when nothing can.

    pip when the environment has it (venvs, pipx's); uv's pip aimed at this
    interpreter when it has none (``uv tool`` environments); else pip made by
    ensurepip.
    """
    import importlib.util

    pip = ("pip", [sys.executable, "-m", "pip"])
    if importlib.util.find_spec("pip") is not None:
        return pip
    uv = env.get("UV") or shutil.which("uv", path=env.get("PATH"))
    if uv:
        return ("uv", [uv, "pip"])
    made = subprocess.run([sys.executable, "-m", "ensurepip", "--default-pip"], capture_output=True, env=env)
    return pip if made.returncode == 0 else None


def _pip(env: dict[str, str], verb: str, *args: str) -> list[str] | None:
    found = installer(env)
    if found is None:
        return None
    kind, base = found
    if kind == "uv":  # uv pip VERB --python THIS: uv aims at an environment by its interpreter
        return [*base, verb, "--python", sys.executable, *args]
    return [*base, verb, *(("-y",) if verb == "uninstall" else ()), *args]


def installed(env: dict[str, str]) -> dict[str, dict]:
    """name -> its ``omcm plugins --json`` row, read by a fresh process: it sees what was installed just now."""
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "plugins", "--json"], capture_output=True, text=True, env=env
    )
    try:
        return {row["name"]: row for row in json.loads(proc.stdout)}
    except (ValueError, TypeError, KeyError):
        return {}


def registered_settings(home: Path) -> list[Path]:
    """The settings files ``omcm install`` recorded (each has a manifest in OMCM_HOME/installs)."""
    found = []
    for manifest in sorted((home / "installs").glob("*.json")):
        try:
            path = Path(json.loads(manifest.read_text(encoding="utf-8"))["settings"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if path.exists() and path not in found:
            found.append(path)
    return found


def reregister(inv: Invocation) -> int:
    """``omcm install --settings PATH`` again for every settings file omcm is installed in (adds new events only)."""
    paths = registered_settings(inv.home)
    if not paths:
        print(
            "omcm is not registered in any settings file yet: run `omcm install` "
            "(not needed on the Claude Code plugin route, whose hooks.json names every event)"
        )
        return 0
    worst = 0
    for path in paths:
        proc = subprocess.run([sys.executable, "-m", "omcm_core", "install", "--settings", str(path)], env=inv.env)
        worst = max(worst, proc.returncode)
    return worst


def install(specs: list[str], editable: bool, upgrade: bool, inv: Invocation) -> int:
    before = installed(inv.env)
    targets = [a for spec in specs for a in (("-e", spec) if editable else (spec,))]
    argv = _pip(inv.env, "install", *(("--upgrade",) if upgrade else ()), *targets)
    if argv is None:
        print("omcm: this environment has no pip, uv is not on PATH and ensurepip failed", file=sys.stderr)
        return 1
    print(f"omcm: installing into {sys.prefix}: {' '.join(argv)}", file=sys.stderr, flush=True)
    if subprocess.run(argv, cwd=inv.cwd, env=inv.env).returncode != 0:
        print("omcm: the install failed (see above); nothing was registered", file=sys.stderr)
        return 1
    after = installed(inv.env)
    changed = [row for name, row in after.items() if before.get(name, {}).get("version") != row["version"]]
    for row in changed:
        print(f"{row['name']} {row['version']} ({row['distribution']}): hooks {', '.join(row['hooks']) or '-'}")
    if not changed:
        print("no omcm plugin was added or changed (an extra's packages, or it was installed already)")
    return reregister(inv)


def uninstall(names: list[str], inv: Invocation) -> int:
    rows = installed(inv.env)
    dists = []
    for name in names:
        key = _normal(name)
        row = next((r for r in rows.values() if key in (_normal(r["name"]), _normal(r["distribution"] or ""))), None)
        if row is None:
            print(f"omcm: no installed plugin {name!r} (`omcm plugins` lists them)", file=sys.stderr)
            return 1
        if _normal(row["distribution"] or "") in ("", CORE):
            print(f"omcm: {name} comes with omcm-core; turn it off with OMCM_DISABLE_PLUGINS", file=sys.stderr)
            return 1
        dists.append(row["distribution"])
    argv = _pip(inv.env, "uninstall", *dict.fromkeys(dists))
    if argv is None:
        print("omcm: this environment has no pip, uv is not on PATH and ensurepip failed", file=sys.stderr)
        return 1
    if subprocess.run(argv, cwd=inv.cwd, env=inv.env).returncode != 0:
        return 1
    gone = sorted(set(rows) - set(installed(inv.env)))
    print(
        f"removed: {', '.join(gone) or 'nothing'} (events it alone answered stay registered; omcm answers them with nothing)"
    )
    return 0


def _normal(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()
