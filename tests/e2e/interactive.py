"""The real Claude Code client, interactive, in a tmux pane: type into it, read its screen.

    with Interactive(harness, api) as tui:      # api: a running FakeAnthropic
        tui.type("/ralph-loop fix the tests")
        tui.wait_for(lambda screen: "Done." in screen)

Each pane runs on a private tmux server (its own socket under the harness's
root), so nothing is shared with the user's tmux or with another test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

TMUX = shutil.which("tmux") or "/usr/bin/tmux"
PROMPT = "\u276f"  # the client's input prompt


class Interactive:
    def __init__(self, harness, api, args: tuple[str, ...] = ("--dangerously-skip-permissions",), name: str = "tui"):
        self.harness = harness
        self.socket = str(Path(harness.root) / f"tmux-{name}.sock")
        self.name = name
        self.api = api
        self.args = args
        self.debug_log = Path(harness.root) / f"debug-{name}.txt"

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([TMUX, "-S", self.socket, *args], capture_output=True, text=True, check=check, timeout=30)

    def __enter__(self) -> Interactive:
        env = self.harness.env(self.api.base_url)
        approve_api_key(self.harness.home, env["ANTHROPIC_API_KEY"])
        argv = [str(self.harness.claude), "--debug-file", str(self.debug_log), *self.args]
        exports = [f"{k}={v}" for k, v in {**env, "TERM": "xterm-256color"}.items()]
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            str(self.harness.project),
            "env",
            "-i",
            *exports,
            *argv,
        )
        return self

    def __exit__(self, *exc) -> None:
        self._tmux("kill-server", check=False)

    def ready(self, timeout: float = 90.0) -> str:
        """Wait for the input prompt, accepting the bypass-permissions warning if the client shows it."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if "Yes, I accept" in screen:
                self.keys("Down")
                time.sleep(0.2)
                self.keys("Enter")
            elif PROMPT in screen and "bypass permissions" in screen:
                return screen
            time.sleep(0.25)
        raise AssertionError(f"the client never showed its input prompt; the screen:\n{screen}")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name, "-S", "-200", check=False).stdout

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def type(self, line: str, settle: float = 0.3) -> None:
        """Type ``line`` as literal text, then Enter (the client may show a menu as one types a slash command)."""
        self._tmux("send-keys", "-t", self.name, "-l", line)
        time.sleep(settle)
        self.keys("Enter")

    def wait_for(self, ready: Callable[[str], bool], timeout: float = 60.0, what: str = "") -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.25)
        raise AssertionError(f"timed out waiting for {what or ready}; the screen:\n{screen}")


def wait_until(ready: Callable[[], object], timeout: float, what: str, tui: Interactive | None = None):
    """Poll ``ready`` until it returns something truthy and return that; on timeout say what was awaited
    (and, given the client, its screen)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ready()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(
        f"timed out after {timeout} s waiting for {what}" + (f"; the screen:\n{tui.screen()}" if tui else "")
    )


def approve_api_key(home: Path, key: str) -> None:
    """Mark ``key`` approved in ``~/.claude.json``: the interactive client asks about a custom API key once."""
    config_file = home / ".claude.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    responses = config.setdefault("customApiKeyResponses", {"approved": [], "rejected": []})
    if key[-20:] not in responses.setdefault("approved", []):
        responses["approved"].append(key[-20:])
    config["bypassPermissionsModeAccepted"] = True
    config_file.write_text(json.dumps(config, indent=2))
