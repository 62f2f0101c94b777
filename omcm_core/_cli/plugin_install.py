"""``omcm plugins install`` / ``omcm plugins uninstall``: change which plugins omcm's own environment holds.

Like ``llm install``: whatever route omcm came by (pipx, uv tool, a plain venv,
the Claude Code plugin's data folder), the plugin goes into the environment of
the interpreter running this command, so the user never has to find it. Then
every settings file ``omcm install`` registered omcm in is registered again,
so events only the new plugin answers start reaching it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import attrs

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
        from omcm_core._cli.settings_file import reinstall_argv  # another agent's file keeps its --agent

        proc = subprocess.run([sys.executable, "-m", "omcm_core", *reinstall_argv(inv.home, path)], env=inv.env)
        worst = max(worst, proc.returncode)
    return worst


@attrs.frozen
class Flags:
    editable: list[str] = attrs.field(factory=list)  # folders installed editable (pip's -e PATH)
    upgrade: bool = False
    reinstall: bool = False
    no_deps: bool = False


def install(specs: list[str], flags: Flags, inv: Invocation) -> int:
    before = installed(inv.env)
    targets = [*specs, *(a for path in flags.editable for a in ("-e", path))]
    options = [*(["--upgrade"] if flags.upgrade else []), *(["--no-deps"] if flags.no_deps else [])]
    passes = [options + targets]
    touched: set[str] = set()
    if flags.reinstall:
        # Force only the named distributions (forcing all would fetch omcm-core, which no index has), then
        # an ordinary pass for a dependency that went missing.
        passes.insert(0, ["--force-reinstall", "--no-deps", *targets])
    for extra in passes:
        argv = _pip(inv.env, "install", *extra)
        if argv is None:
            print("omcm: this environment has no pip, uv is not on PATH and ensurepip failed", file=sys.stderr)
            return 1
        print(f"omcm: installing into {sys.prefix}: {shlex.join(argv)}", file=sys.stderr, flush=True)
        done = _quietly(argv, inv)
        if done is None:
            print("omcm: the install failed (see above); nothing was registered", file=sys.stderr)
            return 1
        touched |= done
    after = installed(inv.env)
    changed = [row for name, row in after.items() if before.get(name, {}).get("version") != row["version"]]
    redone = [
        row for name, row in after.items() if row not in changed and _normal(row["distribution"] or "") in touched
    ]
    for row in changed:
        print(f"{row['name']} {row['version']} ({row['distribution']}): hooks {', '.join(row['hooks']) or '-'}")
    for row in redone:
        print(f"{row['name']} {row['version']} ({row['distribution']}): reinstalled")
    if not changed and not redone:
        print("no omcm plugin was added or changed (an extra's packages, or it was installed already)")
    if note := _reinstall_forgets():
        print(note)
    return reregister(inv)


def _quietly(argv: list[str], inv: Invocation) -> set[str] | None:
    """Run the installer; its output only when it fails (pip says "already satisfied" dozens of times).

    Returns the distributions it installed (normalised names), or None on failure.
    """
    proc = subprocess.run(argv, cwd=inv.cwd, env=inv.env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        return None
    names = installed_names(proc.stdout + "\n" + proc.stderr)
    shown = ", ".join(sorted(names)) or "nothing new (all requirements were already satisfied)"
    print(f"omcm: installed {shown}", file=sys.stderr)
    return names


def installed_names(output: str) -> set[str]:
    """The distributions pip's or uv's output says it installed: "Successfully installed a-1.0 b-2.0"; " + a==1.0"."""
    import re

    names: set[str] = set()
    for line in output.splitlines():
        if line.startswith("Successfully installed "):
            names |= {_normal(item.rpartition("-")[0]) for item in line.split()[2:] if "-" in item}
        elif match := re.match(r"^\s*[+~]\s+([A-Za-z0-9][A-Za-z0-9._-]*)==", line):
            names.add(_normal(match.group(1)))
    return names


def _reinstall_forgets() -> str | None:
    """Tool managers rebuild their environments from their own records, which this install is not in."""
    prefix = Path(sys.prefix)
    if (prefix / "pipx_metadata.json").exists():
        return f"note: `pipx reinstall` rebuilds {prefix} without it; `pipx inject {prefix.name} ...` is the pipx way to keep it"
    if (prefix / "uv-receipt.toml").exists():
        return "note: `uv tool install --reinstall`/`upgrade` rebuild the tool without it; list it with --with there to keep it"
    return None


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


def source_of(distribution: str) -> tuple[str, bool]:
    """Where ``distribution`` was installed from (a folder, a URL) and whether editably; else its name.

    pip and uv record a local or URL install in ``direct_url.json`` (PEP 610):
    the only spec that reinstalls omcm's own plugins, which no index holds.
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import distribution as find
    from urllib.parse import unquote, urlparse

    try:
        raw = find(distribution).read_text("direct_url.json")
        info = json.loads(raw) if raw else None
    except (PackageNotFoundError, ValueError):
        info = None
    if not isinstance(info, dict) or not isinstance(info.get("url"), str):
        return distribution, False
    url = info["url"]
    if url.startswith("file://"):
        url = unquote(urlparse(url).path)
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        url = f"{vcs['vcs']}+{url}" + (f"@{vcs['commit_id']}" if vcs.get("commit_id") else "")
    editable = isinstance(info.get("dir_info"), dict) and bool(info["dir_info"].get("editable"))
    return url, editable


def omcm_command(env: dict[str, str]) -> str:
    """How a person runs this installation's omcm: ``omcm`` when PATH finds this one, else its full path."""
    own = Path(sys.executable).parent / "omcm"
    if not own.exists():
        return f"{shlex.quote(sys.executable)} -m omcm_core"
    found = shutil.which("omcm", path=env.get("PATH"))
    return "omcm" if found and Path(found).resolve() == own.resolve() else shlex.quote(str(own))


def reinstall_hint(distribution: str, env: dict[str, str]) -> str:
    """The command that installs ``distribution`` again from where it came (its folder, URL or index)."""
    source, editable = source_of(distribution)
    return f"{omcm_command(env)} plugins install --reinstall {'-e ' if editable else ''}{shlex.quote(source)}"
