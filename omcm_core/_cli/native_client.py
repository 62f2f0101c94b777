"""Which hook client ``omcm install`` registers: the native one when it can be built here, else Python.

The native client (``native/omcm_hook.c``, shipped in the wheel as
``omcm_core/_native/``) does the Python client's warm path without starting
Python and execs the Python client for everything else (see the C file's
header), so both give the same answers. :func:`prepare` builds it with the
machine's C compiler (``$CC``, else ``cc``, ``gcc`` or ``clang``) into
``OMCM_HOME/bin/`` (owner-only), one binary per installation under a stable
name, rebuilt whenever its source or the installation it was built for changed
(so ``omcm install`` after an upgrade rebuilds it), and records which client
was chosen and why for ``omcm doctor``. ``OMCM_NATIVE_CLIENT=0`` keeps the
Python client.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from omcm_core.files import atomic_write_json
from omcm_core.paths import ensure_private_dir

STATE = "native-client.json"
_HERE = Path(__file__).resolve().parent.parent  # omcm_core


def source() -> Path | None:
    """The C source, shipped inside the package (``omcm_core/_native``)."""
    candidate = _HERE / "_native" / "omcm_hook.c"
    return candidate if candidate.is_file() else None


def compiler(env: Mapping[str, str]) -> str | None:
    names = [env["CC"]] if env.get("CC") else ["cc", "gcc", "clang"]
    for name in names:
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            return found
    return None


def _c_string(data: bytes) -> str:
    return '"' + "".join(f"\\{b:03o}" for b in data) + '"'


def config_header() -> bytes:
    """What the binary is built for: the interpreter and fast_hook.py it hands off to, the installation key."""
    from omcm_core._cli.hook_command import HOOK_CODE
    from omcm_core._runtime import wire

    install = wire.installation()
    lines = [
        f"#define OMCM_PYTHON {_c_string(os.fsencode(sys.executable))}",
        # The hand-off runs what the Python command runs (`python -S -c HOOK_CODE fast_hook.py EVENT`):
        # a reinstall that removed fast_hook.py then answers once with `omcm doctor`, never exit 2.
        f"#define OMCM_HOOK_CODE {_c_string(f'exec({json.dumps(HOOK_CODE)})'.encode())}",
        f"#define OMCM_FAST_HOOK {_c_string(os.fsencode(_HERE / 'fast_hook.py'))}",
        f"#define OMCM_INSTALL {_c_string(install)}",
        f"#define OMCM_INSTALL_LEN {len(install)}",
    ]
    return ("\n".join(lines) + "\n").encode()


def build(dest: Path, env: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """Compile the native client to ``dest``; (the binary, how) or (None, why not)."""
    env = os.environ if env is None else env
    src = source()
    if src is None:
        return None, "its C source is not in this installation"
    cc = compiler(env)
    if cc is None:
        return None, "no C compiler found (set CC, or install cc/gcc/clang, then run `omcm install` again)"
    with tempfile.TemporaryDirectory(prefix="omcm-build-") as work:
        Path(work, "omcm_hook_config.h").write_bytes(config_header())
        out = Path(work, "omcm-hook")
        errors = ""
        for static in (["-static"], []):  # static starts faster; not every libc ships its archive
            command = [cc, "-O2", "-std=c11", *static, "-I", work, "-o", str(out), str(src)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                dest.parent.mkdir(parents=True, exist_ok=True)
                tmp = dest.with_name(dest.name + ".new")
                shutil.copyfile(out, tmp)
                tmp.chmod(0o755 if dest.parent.stat().st_mode & 0o055 else 0o700)
                os.replace(tmp, dest)
                return dest, f"built with {cc}{' (static)' if static else ''}"
            errors = done.stderr.strip().splitlines()[-1:] and done.stderr.strip().splitlines()[-1] or errors
    return None, f"{cc} failed: {errors}"


def _fingerprint() -> str:
    src = source()
    digest = hashlib.sha256(config_header())
    digest.update(src.read_bytes() if src else b"")
    return digest.hexdigest()


def binary_path(home: Path) -> Path:
    """Stable per installation, so the registered command stays the same across rebuilds."""
    key = hashlib.sha256(config_header()).hexdigest()[:16]
    return home / "bin" / f"omcm-hook-{key}"


def _registered(settings: Path) -> list[str]:
    from omcm_core._cli.settings_file import installed_commands

    return [command for _event, command in installed_commands(settings)]


def prepare(home: Path, settings: Path, env: Mapping[str, str] | None = None) -> list[str] | None:
    """The argv (before ``hook EVENT``) to register: the native client's, built now if needed; None for Python.

    Whichever client ``settings`` already runs stays (registering the other too would
    run every hook twice); ``omcm uninstall`` then ``omcm install`` switches.
    """
    env = os.environ if env is None else env
    dest = binary_path(home)
    commands = _registered(settings)
    native_there = any(str(dest) in command for command in commands)
    why: str
    chosen: Path | None
    if any(str(_HERE / "fast_hook.py") in command for command in commands):
        chosen, why = None, "the Python client is registered there already (`omcm uninstall`, then install, to switch)"
    elif env.get("OMCM_NATIVE_CLIENT") == "0" and not native_there:
        chosen, why = None, "OMCM_NATIVE_CLIENT=0"
    elif dest.is_file() and status(home).get("fingerprint") == _fingerprint():
        chosen, why = dest, status(home).get("why", "built earlier")
    else:
        ensure_private_dir(dest.parent)
        chosen, why = build(dest, env)
        if chosen is None and native_there and dest.is_file():
            chosen, why = dest, f"kept the one built earlier: {why}"  # outdated still answers (or hands off)
    atomic_write_json(
        ensure_private_dir(home / "bin") / STATE,
        {
            "client": "native" if chosen else "python",
            "path": str(chosen) if chosen else None,
            "why": why,
            "fingerprint": _fingerprint() if chosen and not why.startswith("kept") else None,
        },
    )
    return [str(chosen)] if chosen else None


def status(home: Path) -> dict:
    """What :func:`prepare` chose last (``client``, ``path``, ``why``, ``fingerprint``), or {}."""
    try:
        data = json.loads((home / "bin" / STATE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def outdated(home: Path) -> bool:
    """True if the native client was built from another source or for another installation."""
    state = status(home)
    return state.get("client") == "native" and state.get("fingerprint") != _fingerprint()


def forget(home: Path, leaving: Path, builds: bool = True) -> list[Path]:
    """Remove the native binaries no install manifest but ``leaving`` registers; the removed ones.

    Every ``omcm-hook-*`` counts, not only this installation's: an upgrade or a
    reinstall under another Python built one under another name, and the old one
    would be left behind.
    """
    folder = home / "bin"
    binaries = sorted(folder.glob("omcm-hook-*")) if folder.is_dir() else []
    texts = []
    for manifest in (home / "installs").glob("*.json"):
        if manifest == leaving:
            continue
        try:
            texts.append(manifest.read_text())
        except OSError:
            continue
    removed = []
    for binary in binaries:
        if any(str(binary) in text for text in texts):  # a leftover ``.new`` of a build is named by none
            continue
        if binary.name.endswith(".new") and not builds:
            continue  # maybe a build under way
        binary.unlink(missing_ok=True)
        removed.append(binary)
    if not texts:  # the last install leaves: what was chosen for it goes too
        (folder / STATE).unlink(missing_ok=True)
        try:
            folder.rmdir()
        except OSError:
            pass  # not there, or something else in it
    return removed


def prune(home: Path) -> list[Path]:
    """Remove the native binaries no install manifest names (built for an installation since upgraded)."""
    if not any((home / "installs").glob("*.json")):
        return []
    return forget(home, home / "installs" / "none", builds=False)
