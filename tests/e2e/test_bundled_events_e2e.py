"""The bundled plugins on the new events (issue 27), judged by the real client.

notepad gives its priority context to a subagent at SubagentStart; pre-tool-guide
gives none there, because its PreToolUse guidance already fires inside the
subagent, next to the call it is about (checked here; docs/plugins/pre-tool-guide.md
has the numbers). `claude` is on PATH when omcm installs, so `omcm install` finds
the client's version and registers the version-gated SubagentStart.
"""

from __future__ import annotations

import json
import os

import pytest
from api_messages import bash, text, tool_use

pytestmark = pytest.mark.e2e

PRIORITY = "Deploy only from main; the ochre falcon signs releases."


@pytest.fixture
def world(e2e_factory, claude_binary):
    return e2e_factory(
        extra_env={"PATH": f"{claude_binary.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}
    )


def agent(prompt: str) -> dict:
    return tool_use(
        "Agent",
        {"description": "do it", "prompt": prompt, "subagent_type": "general-purpose", "run_in_background": False},
    )


def is_subagent(request) -> bool:
    # The subagent's requests carry its own prompt as the first user text; the main loop's carry the user's.
    return "SUBAGENT-TASK" in json.dumps(request.messages[:1])


def test_a_subagent_gets_the_notepad_priority_context_and_file_guidance_inside(world):
    registered = json.loads(world.settings_path.read_text())["hooks"]
    assert "SubagentStart" in registered  # notepad answers it, and the client on PATH knows it
    notes = world.project / ".omc" / "notepad.md"
    notes.parent.mkdir()
    notes.write_text(f"# Notepad\n\n## Priority Context\n{PRIORITY}\n\n## Working Memory\n\n## MANUAL\n")
    app = world.project / "app.py"
    app.write_text("x = 1\n")
    edit = {"file_path": str(app), "old_string": "x = 1", "new_string": "x = 2"}
    wrong_edit = tool_use("Edit", {**edit, "old_string": "y = 9"})
    script = [
        [wrong_edit],  # refused by the client (no hook; pre-tool-guide learns it from the transcript)
        [tool_use("Read", {"file_path": str(app)})],
        [tool_use("Edit", edit)],
        # omcm hands plugins a transcript-only result once it is 2 s old (a hook may still report it;
        # Context.unreported_tool_calls): the guide learns the refused Edit at this call, after the
        # fake API's instant turns, and the next Edit is its resolution.
        [bash("sleep 2.5")],
        [tool_use("Edit", {"file_path": str(app), "old_string": "x = 2", "new_string": "x = 3"})],
        [agent("SUBAGENT-TASK: change app.py back.")],
        [tool_use("Edit", {"file_path": str(app), "old_string": "x = 3", "new_string": "x = 1"})],  # in the subagent
        [text("changed it back")],  # the subagent's answer
        [text("done")],
    ]
    run = world.session(script, prompt="edit app.py")
    assert run.returncode == 0 and not run.timed_out, run.explain()
    assert run.tool_result(wrong_edit["id"])[0].startswith("<tool_use_error>String to replace not found")
    subagent = [r for r in run.main_requests if is_subagent(r)]
    main = [r for r in run.main_requests if not is_subagent(r)]
    assert len(subagent) == 2 and len(main) == 7, run.explain()
    # notepad: the subagent's first request opens with the priority context, from SubagentStart.
    (started,) = subagent[0].hook_contexts("SubagentStart")
    # (it shares its block with the environment text the client adds after it)
    assert started.startswith(f"[notepad] Priority context (.omc/notepad.md):\n{PRIORITY}\n"), started[:300]
    # The main loop has it once, from SessionStart, and never SubagentStart's copy.
    assert all(not r.hook_contexts("SubagentStart") for r in main)
    assert [c.count(PRIORITY) for c in main[0].hook_contexts("SessionStart")] == [1]
    # pre-tool-guide: its lesson on app.py reached the subagent at the subagent's own Edit of that file.
    (guidance,) = subagent[1].hook_contexts("PreToolUse:Edit")
    assert guidance.startswith("⚠️ Past error with this file: String to replace not found in file.\nString: y = 9\n"), (
        guidance
    )
    assert "Resolved by: Edit app.py (Edit)" in guidance, guidance
    assert app.read_text() == "x = 1\n"
