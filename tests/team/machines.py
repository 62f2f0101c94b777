"""Simulated machines for the team-store tests: each its own OMCM_HOME and project clone, one shared server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from omcm_core.testing import run_hook

REMOTES = ("https://ci-token-123@github.com/Acme/shop.git", "git@github.com:acme/shop.git")


class Machine:
    def __init__(self, root: Path, name: str, url: str, remote: str = REMOTES[0], share: bool = True) -> None:
        self.name = name
        self.home = root / name / "omcm-home"
        self.project = root / name / "src" / "shop"
        (self.project / ".git").mkdir(parents=True)
        (self.project / ".git" / "config").write_text(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {remote}\n')
        (self.project / "settings.py").write_text("DEBUG = True\n")
        self.env = {
            **os.environ,
            "OMCM_HOME": str(self.home),
            "OMCM_LOAD_PLUGINS": "pre-tool-guide,team-store",
            "LANG": "en_US.UTF-8",
            "CLAUDE_PROJECT_DIR": str(self.project),
            "OMCM__CORE__TEAM_STORE": url,
            "OMCM__PRE_TOOL_GUIDE__SHARE": "true" if share else "false",
            # Tests sync by hand: a hook starts one background sync at most (its first PreToolUse).
            "OMCM__CORE__TEAM_SYNC_INTERVAL_S": "86400",
            # Not a budget test: on a loaded machine a call over 1.5 s would be abandoned by design.
            "OMCM__CORE__PLUGIN_BUDGET_MS": "60000",
        }

    def path(self, name: str) -> str:
        return str(self.project / name)

    def hook(self, payload: dict) -> dict | None:
        payload = {**payload, "cwd": str(self.project)}
        proc = run_hook(payload, env=self.env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    def omcm(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "-m", "omcm_core", *args],
            env=self.env,
            cwd=str(self.project),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check:
            assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    def status(self) -> dict:
        return json.loads(self.omcm("team", "status", "--json", check=False).stdout)


def context_of(out: dict | None) -> str:
    return out["hookSpecificOutput"]["additionalContext"] if out else ""
