"""The interactive client (tmux) fires Notification and PermissionRequest at omcm; a third party's plugin has its effect.

Notification never fires in ``-p`` mode (see test_events_e2e.py); here the real
client, in default permission mode, sends both kinds it can be made to send
quickly: ``idle_prompt`` (``messageIdleNotifThresholdMs`` in ``~/.claude.json``
lowered from 60 s) and ``permission_prompt`` (a dialog left open 6 s). The
plugin is tests/events/plugin, the only plugin loaded; a bare ``cat`` hook next
to omcm's records what the client sent, to compare with what the plugin got.
Both the pinned and the latest client, every time.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from api_messages import bash, text
from claude_client import CLIENT_VERSION
from conftest import LATEST_CLIENT, client_or_skip
from e2e_harness import Harness
from fake_anthropic import FakeAnthropic
from interactive import PROMPT, Interactive, wait_until

from omcm_core._cli.doctor.events import client_events
from omcm_core.events import EVENTS

pytestmark = pytest.mark.e2e

DIALOG = "Do you want to proceed?"
#: The client's own words (2.1.330 and 2.1.332).
IDLE_MESSAGE = "Claude is waiting for your input"
PERMISSION_MESSAGE = "Claude needs your permission"
VERSIONS = pytest.mark.parametrize("version", [CLIENT_VERSION, LATEST_CLIENT])


@pytest.fixture(autouse=True)
def _tmux(request):
    if "interactive" not in request.node.name:
        return
    if shutil.which("tmux") is None and not Path("/usr/bin/tmux").exists():
        if os.environ.get("CI"):
            pytest.fail("tmux is not installed (CI is set, so this fails): apt-get install tmux")
        pytest.skip("tmux is not installed (apt-get install tmux)")


@pytest.fixture
def world(tmp_path, every_event_site, request):
    """A harness on the parametrised client, omcm installed with it on PATH, and a raw Notification recorder."""
    claude = client_or_skip(request.node.callspec.params["version"])
    log = tmp_path / "calls.jsonl"
    harness = Harness(
        tmp_path / "world",
        claude,
        extra_env={
            "PATH": f"{claude.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": str(every_event_site),
            "OMCM_LOAD_PLUGINS": "every-event",
            "OMCM_PASS_ENV": "EVERY_EVENT_*",
            "EVERY_EVENT_LOG": str(log),
        },
    )
    harness.log = log
    harness.raw = tmp_path / "raw-notifications.jsonl"
    harness.add_hook("Notification", f"{{ cat; echo; }} >> {harness.raw}")
    try:
        yield harness
    finally:
        harness.close()


def calls(harness, event: str) -> list[dict]:
    lines = harness.log.read_text().splitlines() if harness.log.exists() else []
    return [c for c in map(json.loads, lines) if c["event"] == event]


def sent(harness) -> list[dict]:
    """The Notification payloads exactly as the client sent them."""
    lines = harness.raw.read_text().splitlines() if harness.raw.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def idle_after(harness, ms: int) -> None:
    """Make the client send ``idle_prompt`` ``ms`` after a turn ends (``~/.claude.json``; 60000 by default)."""
    config_file = harness.home / ".claude.json"
    config = json.loads(config_file.read_text())
    config["messageIdleNotifThresholdMs"] = ms
    config_file.write_text(json.dumps(config, indent=2))


def start(tui: Interactive) -> None:
    """Default permission mode: no bypass warning to accept, the input prompt is the sign of readiness."""
    tui.wait_for(lambda s: PROMPT in s, 90, "the input prompt")


def assert_through_omcm(harness, tui: Interactive, payload: dict, kind: str) -> None:
    """The plugin got the payload the client sent, as a NotificationEvent, through `omcm hook Notification`."""
    assert payload["hook_event_name"] == "Notification" and payload["notification_type"] == kind, payload
    assert payload["session_id"] and payload["cwd"] == str(harness.project), payload
    assert Path(payload["transcript_path"]).name == f"{payload['session_id']}.jsonl", payload
    noted = [c for c in calls(harness, "Notification") if c["kind"] == kind]
    assert noted == [
        {"event": "Notification", "record": "NotificationEvent", "kind": kind, "message": payload["message"]}
    ], harness.log.read_text()
    ran = f"Notification:{kind} [{harness.omcm_home}/bin/"

    def finished() -> str | None:  # the client logs the hook's end a moment after the plugin wrote its note
        debug = tui.debug_log.read_text(errors="replace")
        done = any(ran in line and "hook Notification] completed with status 0" in line for line in debug.splitlines())
        return debug if done else None

    debug = wait_until(finished, 10, f"the client's log of {ran}...] completed")
    # omcm answered in the event's shape (the client parses it; see below for where it goes).
    answer = {"hookSpecificOutput": {"hookEventName": "Notification", "additionalContext": f"noted {kind}"}}
    assert f"Parsed initial response: {json.dumps(answer, separators=(',', ':'))}" in debug


@VERSIONS
def test_interactive_permission_request_decides_without_a_dialog_then_idle_prompt(world, version):
    idle_after(world, 1500)
    made, refused = bash("echo allowed > made.txt", id="toolu_made"), bash("rm -rf gone", id="toolu_refused")
    (world.project / "gone").mkdir()
    script = [[made, refused], [text("all done here")]]
    with (
        FakeAnthropic(script, final_text="Done.") as api,
        Interactive(world, api, args=("--permission-mode", "default"), name="decide") as tui,
    ):
        start(tui)
        tui.type("make a file")
        screen = tui.wait_for(lambda s: "all done here" in s, 60, "the end of the turn")
        # PermissionRequest: the plugin decided both calls; nobody answered a dialog.
        assert "Allowed by PermissionRequest hook" in screen and "Denied by PermissionRequest hook" in screen, screen
        assert DIALOG not in screen
        assert [c["input"]["command"] for c in calls(world, "PermissionRequest")] == [
            "echo allowed > made.txt",
            "rm -rf gone",
        ]
        assert (world.project / "made.txt").read_text() == "allowed\n" and (world.project / "gone").is_dir()
        results = api.main_requests[-1].tool_results()
        assert results["toolu_made"] == ("(Bash completed with no output)", False)
        assert results["toolu_refused"] == ("every-event: no 'rm -rf gone'", True)
        # The `updated_permissions` the plugin answered (the dialog's own suggestion) took effect in the client.
        assert f"Additional working directories added:\n  - {world.project}" in api.main_requests[-1].all_text()

        # Notification: the client, idle 1.5 s after the turn, tells the hooks it waits for the user.
        (payload,) = wait_until(lambda: sent(world), 30, "the idle_prompt Notification")
        assert payload["message"] == IDLE_MESSAGE
        wait_until(lambda: calls(world, "Notification"), 10, "the plugin's note")
        assert_through_omcm(world, tui, payload, "idle_prompt")
        # No dialog was ever open, so no permission_prompt was sent.
        assert [p["notification_type"] for p in sent(world)] == ["idle_prompt"]

        # Measured on 2.1.330 and 2.1.332: the interactive client drops a Notification's
        # additionalContext; the next request does not carry it (docs/e2e.md).
        tui.type("and now?")
        tui.wait_for(lambda s: "Done." in s, 60, "the second turn")
        assert len(api.main_requests) == 3
        assert "noted idle_prompt" not in api.main_requests[-1].all_text()


@VERSIONS
def test_interactive_permission_dialog_left_open_sends_permission_prompt(world, version):
    # This user answers dialogs themselves: omcm is registered for Notification but not PermissionRequest.
    settings = json.loads(world.settings_path.read_text())
    del settings["hooks"]["PermissionRequest"]
    world.settings_path.write_text(json.dumps(settings, indent=2))
    script = [[bash("echo asked > asked.txt", id="toolu_asked")], [text("all done here")]]
    with (
        FakeAnthropic(script, final_text="Done.") as api,
        Interactive(world, api, args=("--permission-mode", "default"), name="dialog") as tui,
    ):
        start(tui)
        tui.type("make a file")
        tui.wait_for(lambda s: DIALOG in s and "echo asked > asked.txt" in s, 60, "the permission dialog")
        # The client waits 6 s for an answer before it notifies.
        (payload,) = wait_until(lambda: sent(world), 30, "the permission_prompt Notification")
        assert payload["message"] == PERMISSION_MESSAGE
        wait_until(lambda: calls(world, "Notification"), 10, "the plugin's note")
        assert_through_omcm(world, tui, payload, "permission_prompt")
        # Still waiting for the user: the command has not run, the dialog is open.
        assert DIALOG in tui.screen() and not (world.project / "asked.txt").exists()
        tui.keys("Enter")  # 1. Yes
        tui.wait_for(lambda s: "all done here" in s, 60, "the end of the turn")
        assert (world.project / "asked.txt").read_text() == "asked\n"
        assert api.main_requests[-1].tool_results()["toolu_asked"] == ("(Bash completed with no output)", False)


@VERSIONS
def test_doctor_reads_the_event_list_of_the_client_on_path(tmp_path, version):
    """`omcm doctor` finds the client through npm's launcher on PATH and compares its events with omcm's."""
    claude = client_or_skip(version)
    harness = Harness(
        tmp_path / "world",
        claude,
        install_hooks=False,
        extra_env={"PATH": f"{claude.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"},
    )
    names = client_events(claude.resolve())
    assert names is not None and ("PreSkillShellCommand" in names) == (_parts(version) >= (2, 1, 332)), names
    report = json.loads(harness.omcm("doctor", "--json", check=False).stdout)
    checks = {c["id"]: c for section in report["sections"] for c in section["checks"]}
    unknown = [name for name in names if name not in EVENTS]
    if unknown:  # a newer client than this omcm: the doctor names what is missing
        assert (
            checks["events.unknown"]["level"] == "warning" and ", ".join(unknown) in checks["events.unknown"]["message"]
        )
    else:
        assert (
            checks["events.client"]["message"]
            == f"omcm knows all {len(names)} hook events of the installed Claude Code"
        )
    # Measured: omcm knows every event of 2.1.330 (33) and 2.1.332 (34).
    assert not unknown, f"Claude Code {version} has events omcm lacks a row for: {unknown}"


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))
