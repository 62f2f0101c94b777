"""Hook latency through the registered command before and after `omcm plugins install` (issue 33 item 3).

    python bench/after_plugins_install.py [--calls 8]

Builds a venv in a temporary folder from a copy of this checkout (omcm-core and
tool-counter), runs `omcm install` (the native client when a C compiler is
here), times PreToolUse calls through the registered command, installs notepad
with `omcm plugins install`, and times them again, then once more 5 s later.
Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=8)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory(prefix="omcm-bench-") as scratch:
        base = Path(scratch)
        src = base / "omcm"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, src / name)
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "tests")
        shutil.copytree(ROOT / "omcm_core", src / "omcm_core", ignore=ignore)
        for plugin in ("tool-counter", "notepad"):
            shutil.copytree(ROOT / "plugins" / plugin, src / "plugins" / plugin, ignore=ignore)
        venv.EnvBuilder(with_pip=True).create(base / "venv")
        python, omcm, home = base / "venv/bin/python", base / "venv/bin/omcm", base / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env = {k: v for k, v in env.items() if not k.startswith("OMCM")}
        env.update(HOME=str(home), PATH=f"{base / 'venv/bin'}:/usr/bin:/bin")
        subprocess.run([python, "-m", "pip", "install", "-q", src, src / "plugins/tool-counter"], env=env, check=True)
        subprocess.run([omcm, "install"], env=env, check=True, capture_output=True)
        settings = home / ".claude/settings.json"
        payload = json.dumps(
            {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Read", "tool_input": {"file_path": "/x"}}
        )

        def timing(label: str) -> None:
            command = json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                subprocess.run(shlex.split(command), input=payload, capture_output=True, text=True, env=env)
                times.append(round((time.perf_counter() - start) * 1000))
            print(f"{label:<28} {times}  ({command.split()[0]})")

        timing("after omcm install")
        subprocess.run([omcm, "plugins", "install", src / "plugins/notepad"], env=env, check=True, capture_output=True)
        timing("after plugins install")
        time.sleep(5)
        timing("5 s later")
        subprocess.run([omcm, "daemon", "stop"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
