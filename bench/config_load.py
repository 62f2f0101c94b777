"""What reading the config costs each hook call: ``Config.load`` and two sections, with and without a project file.

    python bench/config_load.py [--rounds 150] [--against REV]

CPU time (``time.process_time``), best batch of 50 of ``--rounds``: a shared machine's scheduling noise
does not enter it. ``--against`` also times ``omcm_core/config.py`` as it was at git revision REV (a file of
its own, imported beside this one), interleaved batch by batch with the current code.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from omcm_persistent_mode import PersistentModeConfig

from omcm_core import config as current

USER = '[core]\nfail_closed = ["g"]\nlanguage = "en"\n[persistent-mode]\nmax_iterations = 3\n'
PROJECT = (
    "[core]\nfail-closed = []\nplugin_budget_ms = 0\n[persistent-mode]\nmax-iterations = 50\ntodo_continuation = true\n"
)


def _old(rev: str) -> object:
    source = subprocess.run(["git", "show", f"{rev}:omcm_core/config.py"], capture_output=True, text=True, check=True)
    path = Path(tempfile.mkdtemp()) / "config_at_rev.py"
    path.write_text(source.stdout)
    spec = importlib.util.spec_from_file_location("config_at_rev", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--against", default=None)
    args = parser.parse_args()
    modules = {"now": current} | ({args.against: _old(args.against)} if args.against else {})
    quiet = type("Quiet", (), {"warning": lambda *a, **k: None, "error": lambda *a, **k: None})()
    for module in modules.values():
        module._log = quiet  # type: ignore[attr-defined]
    for label, project_text in (("no project file", None), ("a project file of 5 keys", PROJECT)):
        home, project = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
        (home / "config.toml").write_text(USER)
        if project_text:
            (project / ".claude").mkdir()
            (project / ".claude" / "omcm.toml").write_text(project_text)
        best = dict.fromkeys(modules, float("inf"))
        for _ in range(args.rounds):
            for name, module in modules.items():
                started = time.process_time()
                for _ in range(50):
                    config = module.Config.load(home, project, {})  # type: ignore[attr-defined]
                    config.section("core", module.CoreConfig)  # type: ignore[attr-defined]
                    config.section("persistent-mode", PersistentModeConfig)
                best[name] = min(best[name], (time.process_time() - started) / 50 * 1e6)
        print(f"{label}: " + ", ".join(f"{name} {us:.0f} µs" for name, us in best.items()))


if __name__ == "__main__":
    sys.exit(main())
