"""A plugin author's fix reaches the warm dispatcher (issue 24 item 10).

An editable install keeps the plugin's module outside site-packages (here: a
source folder on the path, as ``pip install -e`` arranges). Its import fails; the
user has it in ``[core] fail_closed``, so every tool is denied, and ``omcm plugins``
and ``omcm doctor`` say why. The author fixes the module: the next call, through the
same warm dispatcher, loads the fixed plugin, and ``ls`` is allowed again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from reliability_harness import log_entries, run_hook

from omcm_core._runtime import daemon
from omcm_core.testing import pre_tool_payload

BROKEN = "raise ImportError('the author is half way through an edit')\n"
FIXED = """
from omcm_core import Result, hookimpl


@hookimpl
def pre_tool(event):
    if "rm -rf" in event.tool_input.get("command", ""):
        return Result(permission="deny", reason="edguard says no")
    return None
"""


def _omcm(env, *args):
    return subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env)


def _decision(env, project, command):
    payload = json.dumps(pre_tool_payload("Bash", {"command": command}, cwd=str(project))).encode()
    proc = run_hook(payload, env, cwd=project)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] if proc.stdout else None


def test_a_fixed_editable_plugin_is_loaded_by_the_warm_dispatcher(tmp_path):
    site, source, home, project = tmp_path / "site", tmp_path / "src", tmp_path / "home", tmp_path / "project"
    for folder in (site / "omcm_edguard-0.1.dist-info", source, home, project):
        folder.mkdir(parents=True)
    (site / "omcm_edguard-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: omcm-edguard\nVersion: 0.1\n"
    )
    (site / "omcm_edguard-0.1.dist-info" / "entry_points.txt").write_text("[omcm]\nedguard = omcm_edguard\n")
    module = source / "omcm_edguard.py"
    module.write_text(BROKEN)
    (home / "config.toml").write_text('[core]\nfail_closed = ["edguard"]\n')
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OMCM")},
        "OMCM_HOME": str(home),
        "OMCM_LOAD_PLUGINS": "edguard",
        "PYTHONPATH": f"{site}{os.pathsep}{source}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMCM_DAEMON": "1",
        "OMCM_DAEMON_IDLE_S": "120",
        "CLAUDE_PROJECT_DIR": str(project),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "omcm_core", "daemon", "run"],
        env=env,
        cwd="/",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while daemon.status(env) is None:
            assert proc.poll() is None and time.monotonic() < deadline, "the daemon did not start"
            time.sleep(0.05)
        assert _decision(env, project, "ls") == "deny"  # the guard did not load: fail closed
        row = {r["name"]: r for r in json.loads(_omcm(env, "plugins", "--json").stdout)}["edguard"]
        assert row["status"].startswith("disabled (import failed: ImportError")
        doctor = _omcm(env, "doctor")
        assert doctor.returncode == 1 and "the author is half way through an edit" in doctor.stdout

        module.write_text(FIXED)
        later = time.time() + 2  # an edit after the failed import, whatever the clock's resolution
        os.utime(module, (later, later))
        assert _decision(env, project, "ls") is None  # the fixed guard loaded and allows ls
        assert _decision(env, project, "rm -rf ~/work") == "deny"
        proc.wait(timeout=30)  # the stale dispatcher has gone
    finally:
        daemon.stop(env)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    entries = log_entries(home)
    assert any(e["event"] == "daemon_code_changed_exit" and str(module) in e["changed"] for e in entries)
    failed = [e for e in entries if e["event"] == "plugin_import_failed"]
    assert failed and all("omcm_edguard.py" in json.dumps(e["exception"]) for e in failed)  # item 13: where
