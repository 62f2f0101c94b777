"""Build the Claude Code plugin's own Python environment: ``python3 bin/omcm_setup.py ROOT DATA STAMP``.

The plugin's launcher (bin/omcm-hook) starts this in the background on the
first hook call, when the plugin is updated (its folder or version changes),
and at a SessionStart that finds a source newer than the environment's stamp
(a ``git pull`` of a local marketplace, same version). Unless the sources hash
to what the current environment was built from, it copies omcm and its plugins
from the plugin's folder, makes a new virtualenv ``DATA/venv-<id>`` under DATA
(``${CLAUDE_PLUGIN_DATA}``, private), installs them with their dependencies from
the package index (uv if on PATH, else pip), installs again the plugins the user
added to the previous environment (``omcm plugins install``, which the plugin's
sources do not list), then switches the link ``DATA/venv`` to it in one rename.
Until then the previous environment answers every hook (a guard keeps guarding);
it is kept until the next build, for the processes (an MCP server, a warm
dispatcher) still running from it. Only a first install has no environment to
answer meanwhile; then ``DATA/ready.notice`` tells the launcher to say, once,
that omcm is ready. Standard library only; runs on the Python that started it
(3.10 or later).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

SOURCES = ("pyproject.toml", "README.md", "omcm_core", "plugins")
JUNK = shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build", ".venv", ".tox", "*.pyc")


def sources_hash(root: Path) -> str:
    """What the environment is built from, by content: omcm_core, plugins/*, the pyproject files."""
    digest = hashlib.sha256()
    for name in SOURCES:
        top = root / name
        files = [top] if top.is_file() else []
        if top.is_dir():
            for folder, dirs, names in os.walk(top):
                skip = set(JUNK(folder, dirs + names))
                dirs[:] = sorted(d for d in dirs if d not in skip)
                files += [Path(folder, n) for n in sorted(names) if n not in skip]
        for path in files:
            if path.is_file():  # as copytree copies it: a link's target
                digest.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def unchanged(root: Path, data: Path, want: str, since: float) -> bool:
    """The current environment was built from these very sources: note that they were checked."""
    env = data / "venv"
    try:
        same = (env / ".omcm-stamp").read_text().strip() == want
        same = same and os.access((env / ".omcm-python").read_text().strip(), os.X_OK)  # not a broken one
        same = same and (env / ".omcm-sources").read_text().strip() == sources_hash(root)
    except OSError:
        return False
    if same:  # the launcher's next SessionStart compares the sources' times with this one
        os.utime(env / ".omcm-stamp", (since, since))
    return same


def build(root: Path, data: Path, want: str) -> Path:
    stamp = f"{int(time.time() * 1000)}-{os.getpid()}"
    dest = data / f"venv-{stamp}"
    src = data / f"src-{stamp}"
    started = time.time()  # a source changed after this is newer than the stamp: checked again
    src.mkdir(parents=True)
    for name in SOURCES:
        item = root / name
        if item.is_dir():
            shutil.copytree(item, src / name, ignore=JUNK)
        elif item.exists():
            shutil.copy2(item, src / name)
    content = sources_hash(src)
    targets = [str(src)] + sorted(str(p.parent) for p in (src / "plugins").glob("*/pyproject.toml"))
    added = user_plugins(data / "venv" / "bin" / "python", bundled_names(src))
    try:
        install(dest, targets, shutil.which("uv"))
    except subprocess.CalledProcessError:
        if not shutil.which("uv"):
            raise
        print("uv failed; trying again with pip", flush=True)
        shutil.rmtree(dest, ignore_errors=True)
        install(dest, targets, None)
    for requirement in added:  # one by one: a plugin that no longer installs costs only itself
        try:
            install_more(dest, requirement, shutil.which("uv"))
        except subprocess.CalledProcessError:
            print(f"omcm setup: could not install {' '.join(requirement)} again; the rest is ready", flush=True)
    fast_hook = subprocess.run(
        [str(dest / "bin" / "python"), "-c", "import omcm_core, os; print(os.path.dirname(omcm_core.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (dest / ".omcm-sources").write_text(f"{content}\n")
    (dest / ".omcm-stamp").write_text(f"{want}\n")  # what the launcher compares: a new version rebuilds
    os.utime(dest / ".omcm-stamp", (started, started))
    (dest / ".omcm-fast-hook").write_text(os.path.realpath(f"{fast_hook}/fast_hook.py") + "\n")
    # Without symlinks (DATA/venv is one): the hook client names its warm dispatcher after its
    # interpreter's folder as spelt, the dispatcher after the resolved one; they must agree.
    (dest / ".omcm-python").write_text(os.path.realpath(dest / "bin") + "/python\n")
    shutil.rmtree(src, ignore_errors=True)
    link = data / "venv"
    previous = os.path.realpath(link) if link.is_dir() else None
    try:  # none, or one whose Python is gone: the hooks did nothing until now
        answered = os.access((link / ".omcm-python").read_text().strip(), os.X_OK)
    except OSError:
        answered = False
    tmp = data / f"venv.{stamp}.link"
    os.symlink(dest.name, tmp)
    os.replace(tmp, link)  # one rename: a hook sees the old environment or the new one, never half of one
    if not answered:
        # A first install (or a repair): its hooks did nothing until now. The launcher says so once.
        notice = data / f"ready.notice.{stamp}"
        notice.write_text(f"omcm is ready: its hooks work from now on (set up in {time.time() - started:.0f} s).\n")
        os.replace(notice, data / "ready.notice")
    for old in data.glob("venv-*"):
        # The previous environment stays until the next build: a hook that read its paths just
        # before the switch, the MCP server and the warm dispatcher still run from it.
        if old != dest and os.path.realpath(old) != previous:
            shutil.rmtree(old, ignore_errors=True)
    for old in data.glob("src-*"):
        shutil.rmtree(old, ignore_errors=True)
    return dest


def install(dest: Path, targets: list[str], uv: str | None) -> None:
    """A virtualenv at ``dest`` with ``targets`` and their dependencies from the package index."""
    if uv:
        run([uv, "venv", "--quiet", "--python", sys.executable, str(dest)])
        # Compiled now, in the background, as pip does: else the first hook and the first MCP
        # server after the switch compile omcm and its dependencies (10 s under load, measured).
        python = str(dest / "bin" / "python")
        run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", python, *targets])
        return
    run([sys.executable, "-m", "venv", str(dest)])
    pip = [str(dest / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    run([*pip, "install", *targets])


def install_more(dest: Path, requirement: list[str], uv: str | None) -> None:
    python = str(dest / "bin" / "python")
    run(
        [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", python, *requirement]
        if uv
        else [python, "-m", "pip", "install", "--disable-pip-version-check", "--quiet", *requirement]
    )


#: Run by the previous environment's Python: its distributions that have an ``omcm`` entry point,
#: with where each came from (PEP 610's direct_url.json: a folder, an archive, a VCS checkout).
_LIST_PLUGINS = """
import json, importlib.metadata as md
found = []
for d in md.distributions():
    if any(ep.group == "omcm" for ep in d.entry_points):
        try:
            origin = json.loads(d.read_text("direct_url.json") or "null")
        except ValueError:
            origin = None
        found.append({"name": d.metadata["Name"], "version": d.version, "origin": origin})
print(json.dumps(found))
"""


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def bundled_names(src: Path) -> set[str]:
    """omcm-core and the plugins that come with it (their pyproject names)."""
    names = {"omcm-core"}
    for pyproject in (src / "plugins").glob("*/pyproject.toml"):
        found = re.search(r'^name\s*=\s*"([^"]+)"', pyproject.read_text(encoding="utf-8"), re.M)
        if found:
            names.add(_normal(found.group(1)))
    return names


def user_plugins(python: Path, bundled: set[str]) -> list[list[str]]:
    """What to install again: the previous environment's omcm plugins that did not come with omcm.

    Each as pip arguments: ``-e FOLDER`` or ``FOLDER`` for a local install whose folder still
    exists, ``vcs+URL@COMMIT`` or the archive's URL, else ``NAME==VERSION`` from the index.
    """
    if not python.exists():
        return []
    try:
        listed = subprocess.run([str(python), "-c", _LIST_PLUGINS], capture_output=True, text=True, timeout=60)
        rows = json.loads(listed.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    wanted = []
    for row in rows:
        if not isinstance(row, dict) or _normal(str(row.get("name", ""))) in bundled:
            continue
        wanted.append(requirement(row))
    return wanted


def requirement(row: dict) -> list[str]:
    origin = row.get("origin") if isinstance(row.get("origin"), dict) else {}
    url = str(origin.get("url") or "")
    local = unquote(urlparse(url).path) if url.startswith("file://") else ""
    if local and Path(local).exists():  # a folder, or a wheel or sdist file
        return ["-e", local] if (origin.get("dir_info") or {}).get("editable") else [local]
    vcs = origin.get("vcs_info") or {}
    if url and vcs.get("vcs") and vcs.get("commit_id"):
        return [f"{row['name']} @ {vcs['vcs']}+{url}@{vcs['commit_id']}"]
    if url and "archive_info" in origin:
        return [f"{row['name']} @ {url}"]
    return [f"{row['name']}=={row['version']}"]


def run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)


def private(data: Path) -> None:
    """DATA is ours and only ours: the launcher runs what it holds on every hook."""
    data.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = data.stat()
    if info.st_uid != os.getuid():
        raise PermissionError(f"{data} is not owned by you")
    if info.st_mode & 0o022:
        raise PermissionError(f"{data} is writable by other users (chmod 700 it, then remove setup.failed)")
    os.chmod(data, 0o700)


def main(argv: list[str]) -> int:
    root, data, want = Path(argv[0]), Path(argv[1]), argv[2]
    os.umask(0o077)  # everything under DATA is ours alone: the launcher runs it on every hook
    checked = time.time()
    failed = data / "setup.failed"
    try:
        private(data)
        if unchanged(root, data, want, checked):
            print(f"omcm: the sources are those {data / 'venv'} was built from; nothing to do")
            return 0
        dest = build(root, data, want)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"omcm setup failed: {exc}", file=sys.stderr)
        try:
            failed.write_text(f"{want}\n{exc}\n")  # the launcher tries again once this is removed
            if (data / "venv" / ".omcm-python").exists():  # an update failed: the previous omcm goes on
                (data / "ready.notice").write_text(
                    f"omcm could not update its environment ({data}/setup.log); the previous version goes on "
                    f"answering. Remove {failed} to try again.\n"
                )
        except OSError:
            pass
        return 1
    finally:
        shutil.rmtree(data / ".building", ignore_errors=True)
    failed.unlink(missing_ok=True)
    print(f"omcm is ready: {dest}; from a shell: {data / 'venv' / 'bin' / 'omcm'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
