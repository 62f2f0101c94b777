"""Build the Claude Code plugin's own Python environment: ``python3 bin/omcm_setup.py ROOT DATA STAMP``.

The plugin's launcher (bin/omcm-hook) starts this in the background on the
first hook call, and again when the plugin is updated (its root folder
changes): it copies omcm and its six plugins from the plugin's folder, makes a
virtualenv under DATA (``${CLAUDE_PLUGIN_DATA}``), installs them with their
dependencies from the package index (uv if on PATH, else pip), installs again
the plugins the user added to the previous environment (``omcm plugins install``,
which the plugin's sources do not list), then switches ``DATA/venv`` to it in
one rename. Until then hooks answer nothing. Standard
library only; runs on the Python that started it (3.10 or later).
"""

from __future__ import annotations

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


def build(root: Path, data: Path, want: str) -> Path:
    stamp = f"{int(time.time() * 1000)}-{os.getpid()}"
    dest = data / f"venv-{stamp}"
    src = data / f"src-{stamp}"
    src.mkdir(parents=True)
    for name in SOURCES:
        item = root / name
        if item.is_dir():
            shutil.copytree(item, src / name, ignore=JUNK)
        elif item.exists():
            shutil.copy2(item, src / name)
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
    (dest / ".omcm-stamp").write_text(f"{want}\n")  # what the launcher compares: a new version rebuilds
    (dest / ".omcm-fast-hook").write_text(os.path.realpath(f"{fast_hook}/fast_hook.py") + "\n")
    # Without symlinks (DATA/venv is one): the hook client names its warm dispatcher after its
    # interpreter's folder as spelt, the dispatcher after the resolved one; they must agree.
    (dest / ".omcm-python").write_text(os.path.realpath(dest / "bin") + "/python\n")
    shutil.rmtree(src, ignore_errors=True)
    link = data / "venv"
    tmp = data / f"venv.{stamp}.link"
    os.symlink(dest.name, tmp)
    os.replace(tmp, link)  # one rename: a hook sees the old environment or the new one, never half of one
    for old in data.glob("venv-*"):
        if old != dest:
            shutil.rmtree(old, ignore_errors=True)
    for old in data.glob("src-*"):
        shutil.rmtree(old, ignore_errors=True)
    return dest


def install(dest: Path, targets: list[str], uv: str | None) -> None:
    """A virtualenv at ``dest`` with ``targets`` and their dependencies from the package index."""
    if uv:
        run([uv, "venv", "--quiet", "--python", sys.executable, str(dest)])
        run([uv, "pip", "install", "--quiet", "--python", str(dest / "bin" / "python"), *targets])
        return
    run([sys.executable, "-m", "venv", str(dest)])
    pip = [str(dest / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    run([*pip, "install", *targets])


def install_more(dest: Path, requirement: list[str], uv: str | None) -> None:
    python = str(dest / "bin" / "python")
    run(
        [uv, "pip", "install", "--quiet", "--python", python, *requirement]
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


def main(argv: list[str]) -> int:
    root, data, want = Path(argv[0]), Path(argv[1]), argv[2]
    data.mkdir(parents=True, exist_ok=True)
    failed = data / "setup.failed"
    try:
        dest = build(root, data, want)
    except (OSError, subprocess.SubprocessError) as exc:
        failed.write_text(f"{want}\n{exc}\n")
        print(f"omcm setup failed: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(data / ".building", ignore_errors=True)
    failed.unlink(missing_ok=True)
    print(f"omcm is ready: {dest}; from a shell: {data / 'venv' / 'bin' / 'omcm'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
