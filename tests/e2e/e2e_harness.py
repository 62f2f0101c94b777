"""Run the real Claude Code client with omcm's hooks installed, against the fake API.

    e2e = Harness(tmp_path, claude_binary)      # or the ``e2e`` fixture
    run = e2e.session(script=[[bash("false")], [text("ok")]], prompt="go")
    run.main_requests[1].tool_results()          # what the model saw
    run.hook_events("PreToolUse")                # hook events from the stream
    run.hook_durations()                         # what the client timed

Each harness has its own HOME (``~/.claude.json`` with onboarding done and the
project trusted, ``~/.claude/settings.json`` with omcm installed the way a
user does it) and its own OMCM_HOME, shared by all its sessions.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
from fake_anthropic import FakeAnthropic, Request, Turn
from hook_timing import HookTiming, hook_timings

#: Seconds one ``claude -p`` may take before it is killed.
SESSION_TIMEOUT = 120

#: The environment that gives 2.1.330 the TodoWrite tool. By default it offers
#: neither TodoWrite nor the Task* tools; CLAUDE_CODE_ENABLE_TODO_TOOLS=1 alone
#: gives TaskCreate/TaskGet/TaskList/TaskUpdate instead.
TODO_WRITE_ENV = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1", "CLAUDE_CODE_ENABLE_TASKS": "false"}

#: OMCM_HOME/config.toml unless a test gives its own. The machine running the
#: suite is shared: no background embedding worker (full-text search is tested),
#: and a plugin budget a loaded machine cannot reach (under Claude Code's 10 s):
#: these tests are about what plugins say, and a plugin past its budget is skipped.
DEFAULT_CONFIG = """\
[core]
plugin_budget_ms = 8000

[post-tool-observer]
embeddings = false
"""


@attrs.frozen
class Session:
    """One finished ``claude -p`` run: what it printed and what it asked the model."""

    returncode: int | None
    timed_out: bool
    events: list
    stdout: str
    stderr: str
    requests: list
    unknown_paths: list
    api_errors: list
    turns_served: int
    debug_log: Path
    session_id: str | None

    @property
    def main_requests(self) -> list[Request]:
        """The agent loop's requests to the model, in order (side requests left out)."""
        return [r for r in self.requests if r.main_loop]

    @property
    def result(self) -> dict | None:
        """The stream's final ``result`` event."""
        return next((e for e in reversed(self.events) if e.get("type") == "result"), None)

    def hook_events(self, hook: str | None = None, subtype: str | None = None) -> list[dict]:
        """The stream's hook events (subtypes ``hook_started``, ``hook_response``), in order.

        ``hook`` keeps one event (``PreToolUse``) or one label (``PreToolUse:Bash``,
        ``SessionStart:compact``).
        """
        found = [e for e in self.events if e.get("type") == "system" and str(e.get("subtype", "")).startswith("hook_")]
        if hook:
            found = [e for e in found if hook in (e.get("hook_event"), e.get("hook_name"))]
        if subtype:
            found = [e for e in found if e.get("subtype") == subtype]
        return found

    @property
    def compactions(self) -> list[dict]:
        """The stream's ``compact_boundary`` events (``compact_metadata.trigger`` is manual or auto)."""
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") == "compact_boundary"]

    def tool_result(self, tool_use_id: str) -> tuple[str, bool]:
        """(text, is_error) of the tool result the model got for ``tool_use_id``."""
        for request in self.main_requests:
            results = request.tool_results()
            if tool_use_id in results:
                return results[tool_use_id]
        raise KeyError(f"no tool_result for {tool_use_id} reached the model")

    def hook_durations(self) -> list[HookTiming]:
        """Each hook run the client timed in its debug log."""
        return hook_timings(self.debug_log.read_text(errors="replace"))

    def explain(self) -> str:
        """A summary for assertion messages."""
        tail = self.debug_log.read_text(errors="replace")[-3000:] if self.debug_log.exists() else ""
        return (
            f"returncode={self.returncode} timed_out={self.timed_out} main_requests={len(self.main_requests)} "
            f"unknown={self.unknown_paths} api_errors={self.api_errors}\nstderr: {self.stderr[-1500:]}\ndebug tail:\n{tail}"
        )


class Harness:
    """A private HOME, OMCM_HOME and project, and the client binary to run in them."""

    def __init__(
        self,
        root: Path,
        claude: Path,
        extra_env: dict | None = None,
        install_hooks: bool = True,
        config: str = DEFAULT_CONFIG,
        mcp: bool = False,
    ):
        self.root = Path(root)
        self.claude = Path(claude)
        self.home = self.root / "home"
        self.omcm_home = self.root / "omcm-home"
        self.project = self.root / "project"
        self.extra_env = dict(extra_env or {})
        self._runs = 0
        for folder in (self.home / ".claude", self.project):
            folder.mkdir(parents=True, exist_ok=True)
        self.trust(self.project)
        self.omcm_home.mkdir(mode=0o700, exist_ok=True)
        (self.omcm_home / "config.toml").write_text(config)
        if install_hooks:
            self.omcm("install", "--settings", str(self.settings_path))
            if not mcp:  # every session would start `omcm mcp` (pydantic and all) for tests that never call it
                self.forget_mcp_server()

    @property
    def settings_path(self) -> Path:
        return self.home / ".claude" / "settings.json"

    def add_hook(self, event: str, command: str, matcher: str = "", timeout: float = 10) -> None:
        """Register one more command hook in ``~/.claude/settings.json`` (e.g. a bare one to compare with omcm)."""
        settings = json.loads(self.settings_path.read_text()) if self.settings_path.exists() else {}
        entry = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
        if matcher:
            entry["matcher"] = matcher
        settings.setdefault("hooks", {}).setdefault(event, []).append(entry)
        self.settings_path.write_text(json.dumps(settings, indent=2))

    def forget_mcp_server(self) -> None:
        """Drop the MCP server `omcm install` registered in ``~/.claude.json`` (the ``mcp=True`` harness keeps it)."""
        config_file = self.home / ".claude.json"
        config = json.loads(config_file.read_text())
        config.get("mcpServers", {}).pop("omcm", None)
        config_file.write_text(json.dumps(config, indent=2))

    def trust(self, project: Path) -> None:
        """Mark onboarding done and ``project`` trusted in ``~/.claude.json``."""
        config_file = self.home / ".claude.json"
        config = json.loads(config_file.read_text()) if config_file.exists() else {}
        config["hasCompletedOnboarding"] = True
        entry = config.setdefault("projects", {}).setdefault(str(project), {})
        entry.update(hasTrustDialogAccepted=True, hasCompletedProjectOnboarding=True)
        config_file.write_text(json.dumps(config, indent=2))

    def env(self, base_url: str = "http://127.0.0.1:9") -> dict:
        """The environment of the client, and so of every hook it runs."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "OMCM_HOME": str(self.omcm_home),
            "OMCM_DAEMON_IDLE_S": "120",  # a daemon outliving a killed test goes away by itself
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",  # we may be root: --dangerously-skip-permissions needs it
        }
        env.update(self.extra_env)
        return env

    def omcm(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """``omcm ARGS`` with this harness's HOME and OMCM_HOME (the installation the tests run)."""
        cmd = [sys.executable, "-m", "omcm_core", *args]
        return subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=self.env(),
            cwd=self.project,
            check=check,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    def session(
        self,
        script: Iterable[Turn] = (),
        prompt: str = "Go on.",
        *,
        project: Path | None = None,
        args: Sequence[str] = (),
        resume: str | None = None,
        timeout: float = SESSION_TIMEOUT,
        final_text: str = "Done.",
        permission_mode: str | None = None,
    ) -> Session:
        """Run ``claude -p PROMPT`` to the end with the fake API answering ``script``.

        ``resume`` continues an earlier session (its ``session_id``); with the
        prompt ``/compact`` the client compacts it and stops. ``permission_mode``
        (e.g. ``default``) replaces ``--dangerously-skip-permissions``.
        """
        project = Path(project or self.project)
        if resume:
            args = ["--resume", resume, *args]
        self._runs += 1
        debug_log = self.root / f"debug-{self._runs}.txt"
        cmd = [
            str(self.claude),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
            "--debug-file",
            str(debug_log),
            *(["--permission-mode", permission_mode] if permission_mode else ["--dangerously-skip-permissions"]),
            *args,
        ]
        with FakeAnthropic(script, final_text=final_text) as api:
            proc = subprocess.Popen(
                cmd,
                cwd=project,
                env=self.env(api.base_url),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            timed_out = False
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)  # its own process group: the client and its children
                stdout, stderr = proc.communicate()
        events = _json_lines(stdout)
        session_id = next((e.get("session_id") for e in events if e.get("session_id")), None)
        return Session(
            proc.returncode,
            timed_out,
            events,
            stdout,
            stderr,
            list(api.requests),
            list(api.unknown_paths),
            list(api.errors),
            api.turns_served,
            debug_log,
            session_id,
        )

    def close(self) -> None:
        """Stop the warm dispatcher the hooks started, if any."""
        self.omcm("daemon", "stop", check=False)


def _json_lines(text: str) -> list[dict]:
    events = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def every_event_calls(harness, event: str) -> list[dict]:
    """The calls of ``event`` the every-event plugin noted in ``harness.log``."""
    if not harness.log.exists():
        return []
    return [c for c in map(json.loads, harness.log.read_text().splitlines()) if c["event"] == event]
