"""A throw-away PostgreSQL server in a temporary folder, for tests and bench/.

initdb, then pg_ctl with only a Unix socket in that folder (no TCP port, so
parallel runs never collide), fsync off (the data is thrown away). PostgreSQL
refuses to run as root: as root the server runs as ``nobody`` and the folder
is handed to that user; as anyone else it runs as the caller.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

INSTALL_HINT = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's package "
    "(`sudo apt-get install postgresql`) or run `python3 dev.py setup` as root; elsewhere, point "
    "OMCM_PG_BINDIR at the folder that has them"
)


def find_bin(name: str) -> str | None:
    """``name`` in ``$OMCM_PG_BINDIR`` if set (and only there), else on PATH, else in Debian's versioned
    folder (``/usr/lib/postgresql/<v>/bin``), newest first."""
    chosen = os.environ.get("OMCM_PG_BINDIR")
    if chosen:
        return shutil.which(name, path=chosen)
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=_version_key, reverse=True)
    return candidates[0] if candidates else None


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parents[1].name
    return tuple(int(p) for p in version.split(".") if p.isdigit())


class PgServer:
    """One server: :attr:`url` connects to it over its socket; ``stop``/``start`` simulate an outage."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.data = base / "data"
        self.socket_dir = base / "socket"
        self.logfile = base / "server.log"
        self.port = 5432  # only names the socket file: no TCP listener
        self.user = "omcm"
        self.url = f"postgresql://{self.user}@/postgres?host={self.socket_dir}&port={self.port}"
        self._as = _unprivileged_prefix()

    def _run(self, *argv: str) -> None:
        result = subprocess.run([*self._as, *argv], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({result.returncode}): {result.stderr.strip() or result.stdout}")

    def init(self) -> PgServer:
        self.socket_dir.mkdir()
        if self._as:  # the server's user must own its folder
            subprocess.run(["chown", "-R", "nobody:", str(self.base)], check=True)
        initdb = find_bin("initdb")
        assert initdb, INSTALL_HINT
        self._run(initdb, "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync")
        return self

    def start(self) -> None:
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket_dir}' -c port={self.port} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
        )
        self._run(str(find_bin("pg_ctl")), "-D", str(self.data), "-l", str(self.logfile), "-w", "-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(str(find_bin("pg_ctl")), "-D", str(self.data), "-m", mode, "-w", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def destroy(self) -> None:
        if self.running():
            try:
                self.stop("immediate")
            except RuntimeError:
                pass
        shutil.rmtree(self.base, ignore_errors=True)


def _unprivileged_prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv:
        return [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
    return ["runuser", "-u", "nobody", "--"]


def start_server() -> PgServer:
    """A fresh server, started. Its folder is in the system temp dir: pytest's is root-only when run as root."""
    base = Path(tempfile.mkdtemp(prefix="omcm-pg-"))
    server = PgServer(base)
    try:
        server.init().start()
    except BaseException:
        server.destroy()
        raise
    return server


def missing() -> str | None:
    """Why a server cannot be started here, or None."""
    if not (find_bin("initdb") and find_bin("pg_ctl")):
        return INSTALL_HINT
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install omcm-team-store (python3 dev.py setup does it)"
    return None
