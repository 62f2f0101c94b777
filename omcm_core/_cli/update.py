"""``omcm update [SOURCE]``: a new omcm-core and every installed plugin together, then registered again.

Into omcm's own environment, whatever made it (pipx, uv tool, a plain venv):
the interpreter running this command is the one that gets the new code, as
with ``omcm plugins install``. SOURCE is a checkout folder, an archive (a
local file or an http(s) URL of a ``.tar.gz``/``.zip``), a git URL
(``git+https://…[@REF]``, ``…​.git``), or nothing: where omcm-core came from
the last time (PEP 610's ``direct_url.json``: the folder, the repository
without its pinned commit, the archive), else the package index.

From a source tree, each installed plugin that the tree bundles
(``plugins/*/pyproject.toml`` with the same distribution name) is installed
from it too, so core and plugins always come from the same revision; an
editable one stays editable. Plugins the tree does not bundle (third-party
ones) are left installed as they are. Then every settings file omcm was
registered in is registered again, which also rebuilds the native client.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from omcm_core._cli.invocation import Invocation

HELP = "upgrade omcm-core and every installed plugin together (from a checkout, archive, git URL or the index)"
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("update", help=HELP, description=HELP + "; then registers omcm again where it was.")
    p.add_argument(
        "source",
        nargs="?",
        metavar="SOURCE",
        help="a checkout folder, an archive, a git URL; default: where omcm-core was installed from",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be installed, change nothing")
    p.set_defaults(run=run)


def default_source() -> str | None:
    """Where omcm-core came from (its folder, repository or archive URL), None for the index."""
    from omcm_core._cli.plugin_install import CORE, source_of

    origin, _editable = source_of(CORE)
    if origin == CORE:
        return None
    return re.sub(r"@[0-9a-f]{40}$", "", origin)  # a pinned commit: the repository's newest instead


def _tree(source: str, work: Path, env: dict[str, str]) -> Path | None:
    """A source tree for ``source``: the folder itself, or an archive unpacked / a repository cloned into ``work``."""
    folder = Path(source).expanduser()
    if folder.is_dir():
        return folder.resolve()
    git = git_source(source)
    if git is not None:
        url, ref = git
        command = ["git", "clone", "--quiet", "--depth", "1", *(["--branch", ref] if ref else []), url, str(work)]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        if done.returncode != 0:
            print(f"omcm update: git clone failed: {done.stderr.strip()[-500:]}", file=sys.stderr)
            return None
        return work
    if source.endswith(ARCHIVES):
        archive = Path(source).expanduser()
        if re.match(r"^https?://", source):
            import urllib.request

            archive = work.parent / ("download" + next(s for s in ARCHIVES if source.endswith(s)))
            with urllib.request.urlopen(source, timeout=120) as response, archive.open("wb") as out:  # noqa: S310
                shutil.copyfileobj(response, out)
        if not archive.is_file():
            print(f"omcm update: {source}: no such file", file=sys.stderr)
            return None
        return _unpacked(archive, work)
    return None


def git_source(source: str) -> tuple[str, str | None] | None:
    """(repository URL, ref or None) for a git source (``git+URL[@REF]``, ``….git[@REF]``, ``ssh://``), else None."""
    bare = source.removeprefix("git+")
    head, _, last = bare.rpartition("/")
    name, _, ref = last.partition("@")  # an @ in the last segment names a ref; one in the host part is a user
    url = f"{head}/{name}" if head else bare
    if source.startswith("git+") or name.endswith(".git") or re.match(r"^(?:ssh|git)://", bare):
        return url, ref or None
    return None


def _unpacked(archive: Path, work: Path) -> Path | None:
    """``archive`` unpacked into ``work`` (members that would land outside it are refused); its one top folder."""
    import tarfile
    import zipfile

    try:
        try:
            shutil.unpack_archive(str(archive), str(work), filter="data")
        except TypeError:  # Python before 3.12 (and before the 3.10/3.11 backports): check the members ourselves
            _unpack_checked(archive, work)
    except (OSError, ValueError, shutil.ReadError, tarfile.TarError, zipfile.BadZipFile) as exc:
        print(f"omcm update: cannot unpack {archive}: {exc}", file=sys.stderr)
        return None
    entries = [p for p in work.iterdir() if not p.name.startswith(".")]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else work


def _unpack_checked(archive: Path, work: Path) -> None:
    import tarfile
    import zipfile

    root = work.resolve()
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if not (root / name).resolve().is_relative_to(root):
                    raise ValueError(f"{name} would land outside the folder")
            z.extractall(root)
        return
    with tarfile.open(archive) as t:
        members = t.getmembers()
        for m in members:
            if not (root / m.name).resolve().is_relative_to(root) or m.issym() or m.islnk() or m.isdev():
                raise ValueError(f"{m.name}: a link, a device or a path outside the folder")
        t.extractall(root, members)  # noqa: S202  (checked above)


def bundled(tree: Path) -> dict[str, Path]:
    """Normalised distribution name -> folder, for the plugins a source tree bundles (``plugins/*``)."""
    from omcm_core._cli.plugin_install import _normal

    found = {}
    for project in sorted((tree / "plugins").glob("*/pyproject.toml")):
        match = re.search(r'^name\s*=\s*"([^"]+)"', project.read_text(encoding="utf-8", errors="replace"), re.M)
        if match:
            found[_normal(match.group(1))] = project.parent
    return found


def plan(tree: Path | None, source: str | None, rows: dict[str, dict]) -> tuple[list[str], list[str], list[str]]:
    """(specs, editable folders, third-party plugins kept as they are) for this environment's plugins."""
    from omcm_core._cli.plugin_install import CORE, _normal, source_of

    specs: list[str] = []
    editable: list[str] = []
    kept: list[str] = []
    core_editable = source_of(CORE)[1]
    if tree is None:  # the index
        specs.append(CORE)
    else:
        (editable if core_editable else specs).append(str(tree))
    inside = bundled(tree) if tree is not None else {}
    for row in rows.values():
        dist = _normal(row.get("distribution") or "")
        if dist in ("", CORE):
            continue
        origin, is_editable = source_of(dist)
        if dist in inside and not (is_editable and not _within(origin, tree)):
            (editable if is_editable else specs).append(str(inside[dist]))
        elif tree is None and origin == dist:
            specs.append(dist)  # from the index, like the core
        else:
            kept.append(f"{row['name']} ({row.get('distribution')})")
    return list(dict.fromkeys(specs)), list(dict.fromkeys(editable)), kept


def _within(origin: str, tree: Path | None) -> bool:
    return tree is not None and Path(origin).is_absolute() and Path(origin).resolve().is_relative_to(tree)


def run(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._cli import plugin_install

    if inv.env.get("CLAUDE_PLUGIN_ROOT"):
        print("omcm update: on the Claude Code plugin route, update with `claude plugin update omcm`.")
        return 0
    source = args.source or default_source()
    rows = plugin_install.installed(inv.env)
    with tempfile.TemporaryDirectory(prefix="omcm-update-") as scratch:
        work = Path(scratch, "src")
        work.mkdir()
        tree = None
        if source is not None:
            tree = _tree(source, work, inv.env)
            if tree is None:
                if not Path(source).expanduser().exists() and "://" not in source:
                    print(f"omcm update: {source}: not a folder, an archive or a git URL", file=sys.stderr)
                return 1
            if not (tree / "pyproject.toml").is_file() or not (tree / "omcm_core").is_dir():
                print(
                    f"omcm update: {source} is not an omcm source tree (no pyproject.toml and omcm_core/)",
                    file=sys.stderr,
                )
                return 1
        specs, editable, kept = plan(tree, source, rows)
        where = source or "the package index"
        print(f"omcm update: from {where} into {sys.prefix}")
        for spec in specs + [f"-e {e}" for e in editable]:
            print(f"  {spec}")
        for name in kept:
            print(f"  kept as installed (not in {where}): {name}")
        if args.dry_run:
            return 0
        flags = plugin_install.Flags(editable=editable, reinstall=tree is not None, upgrade=tree is None)
        return plugin_install.install(specs, flags, inv)
