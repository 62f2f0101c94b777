"""A plugin refuses a task in the real client: TaskCreated and TaskCompleted answered with ``Result.block``.

The plugin is tests/events/plugin (every-event): it refuses a task created
without a description and every completion ("run the tests first"). omcm
renders the refusal as ``decision: "block"`` with the reason, the form the
client honours (it logs a ``continue: false`` here and goes on). The Task*
tools are offered in ``-p`` only with ``CLAUDE_CODE_ENABLE_TODO_TOOLS=1``
(docs/e2e.md).
"""

from __future__ import annotations

import json
import os

import pytest
from api_messages import text, tool_use

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(e2e_factory, every_event_site, claude_binary):
    harness = e2e_factory(
        extra_env={
            "PATH": f"{claude_binary.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": str(every_event_site),
            "OMCM_LOAD_PLUGINS": "every-event",
            "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1",
        }
    )
    registered = json.loads(harness.settings_path.read_text())["hooks"]
    assert {"TaskCreated", "TaskCompleted"} <= set(registered), sorted(registered)
    return harness


def test_a_refused_task_is_not_created_and_a_refused_completion_leaves_it_open(world):
    bare = tool_use(
        "TaskCreate", {"subject": "Write the parser", "description": "", "activeForm": "Writing"}, id="toolu_bare"
    )
    real = tool_use(
        "TaskCreate",
        {"subject": "Write the tests", "description": "for the parser", "activeForm": "Writing"},
        id="toolu_real",
    )
    listed = tool_use("TaskList", {}, id="toolu_list")
    script = [[bare], [real], [listed], [text("Stopping.")]]
    run = world.session(script, prompt="plan the parser")
    assert run.returncode == 0 and not run.timed_out, run.explain()

    # The model gets the reason as the call's error (2.1.330 and 2.1.332 word it the same).
    assert run.tool_result("toolu_bare") == ("TaskCreated hook feedback:\ntask 1 needs a description", True)
    created, created_error = run.tool_result("toolu_real")
    assert not created_error and "created" in created, created
    task_id = created.split("#", 1)[1].split()[0]
    # Only the task with a description exists.
    tasks, _ = run.tool_result("toolu_list")
    assert "Write the tests" in tasks and "Write the parser" not in tasks, tasks

    done = tool_use("TaskUpdate", {"taskId": task_id, "status": "completed"}, id="toolu_done")
    got = tool_use("TaskGet", {"taskId": task_id}, id="toolu_get")
    again = world.session([[done], [got], [text("Not done yet.")]], prompt="finish", resume=run.session_id)
    assert again.returncode == 0 and not again.timed_out, again.explain()
    answer, _ = again.tool_result("toolu_done")  # not flagged as an error, but the task stays open
    assert answer == "TaskCompleted hook feedback:\nWrite the tests: run the tests first", (answer, again.explain())
    status, _ = again.tool_result("toolu_get")
    assert "completed" not in status.lower(), status
