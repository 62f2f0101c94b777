"""Helpers for driving persistent-mode through real `omcm hook` processes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core.testing import run_hook


class Session:
    """One Claude Code session against a project folder, every call a real `omcm hook` subprocess."""

    def __init__(self, tmp_path: Path, session_id: str = "sess-1", **config: str) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.project.mkdir(exist_ok=True)
        self.transcript = tmp_path / f"{session_id}.jsonl"
        self.session_id = session_id
        self.env = {
            "OMCM_LOAD_PLUGINS": "persistent-mode",
            "OMCM_HOME": str(self.home),
            "CLAUDE_PROJECT_DIR": str(self.project),
            # Several processes per test on a shared two-core machine: the budget is not under test.
            "OMCM__CORE__PLUGIN_BUDGET_MS": "30000",
            **{f"OMCM__PERSISTENT_MODE__{k.upper()}": v for k, v in config.items()},
        }

    def payload(self, event: str, **fields) -> dict:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "hook_event_name": event,
            **fields,
        }

    def hook(self, event: str, strict: bool = True, **fields):
        proc = run_hook(self.payload(event, **fields), env=self.env, strict=strict)
        assert proc.returncode == 0, proc.stderr.decode()
        return json.loads(proc.stdout) if proc.stdout else None

    def prompt(self, text: str, strict: bool = True):
        return self.hook("UserPromptSubmit", strict=strict, prompt=text, permission_mode="default")

    def stop(self, message: str = "I am done for now.", active: bool = False, **fields):
        if message is not None:
            fields["last_assistant_message"] = message
        return self.hook("Stop", stop_hook_active=active, permission_mode="default", **fields)

    def ralph_state(self) -> dict:
        return json.loads((self.project / ".omc" / "ralph" / f"{self.session_id}.json").read_text())

    def write_transcript(self, *records: dict) -> None:
        with self.transcript.open("a") as fh:
            for record in records:
                fh.write(json.dumps(record) + "\n")

    def omcm(self, *args: str) -> subprocess.CompletedProcess:
        env = {**__import__("os").environ, **self.env}
        return subprocess.run(
            [sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env, timeout=60
        )

    def log_lines(self) -> list:
        lines = []
        for path in (self.home / "logs").glob("*.jsonl"):
            lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return lines

    def log_events(self) -> list:
        return [line.get("event") for line in self.log_lines()]


def todo_write(todos, sidechain=False) -> dict:
    """A transcript line as Claude Code writes it for a TodoWrite call."""
    return {
        "type": "assistant",
        "isSidechain": sidechain,
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_x",
                    "name": "TodoWrite",
                    "input": {"todos": [{"content": c, "status": s, "activeForm": c} for c, s in todos]},
                }
            ],
        },
    }


def assistant_text(text) -> dict:
    return {
        "type": "assistant",
        "isSidechain": False,
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


@pytest.fixture
def session(tmp_path):
    def make(**config):
        return Session(tmp_path, **config)

    return make


@pytest.fixture(name="todo_write")
def _todo_write():
    return todo_write


@pytest.fixture(name="assistant_text")
def _assistant_text():
    return assistant_text
