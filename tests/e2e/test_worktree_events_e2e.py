"""WorktreeCreate and WorktreeRemove in the real client: EnterWorktree, then ExitWorktree with action "remove".

The plugin is tests/events/plugin (every-event): its worktree_create answers a
path (the hook replaces git's own worktree creation) and its worktree_remove
notes the path it is asked to remove.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest
from api_messages import text, tool_use

pytestmark = pytest.mark.e2e


def test_exit_worktree_remove_fires_worktree_remove_with_the_created_path(
    e2e_factory, every_event_site, claude_binary, tmp_path
):
    log = tmp_path / "calls.jsonl"
    world = e2e_factory(
        extra_env={
            "PATH": f"{claude_binary.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "PYTHONPATH": str(every_event_site),
            "OMCM_LOAD_PLUGINS": "every-event",
            "OMCM_PASS_ENV": "EVERY_EVENT_*",
            "EVERY_EVENT_LOG": str(log),
        }
    )
    name = f"probe-{uuid.uuid4().hex[:8]}"
    made = Path("/tmp/every-event-worktrees") / name  # where the plugin says it created the worktree
    made.mkdir(parents=True)
    try:
        enter = tool_use("EnterWorktree", {"name": name}, id="toolu_enter")
        # Without discard_changes the client refuses: it cannot check a hook-made worktree for changes.
        leave = tool_use("ExitWorktree", {"action": "remove", "discard_changes": True}, id="toolu_exit")
        run = world.session([[enter], [leave], [text("ok")]], prompt="try it in a worktree")
    finally:
        shutil.rmtree(made, ignore_errors=True)  # removing it is the hook's job; this plugin only notes it
    assert run.returncode == 0 and not run.timed_out, run.explain()
    # WorktreeCreate: the path the plugin answered (printed as plain text) is the session's worktree.
    entered, failed = run.tool_result("toolu_enter")
    assert not failed and entered.startswith(f"Created worktree at “{made}”"), entered
    # WorktreeRemove: fired with that path, and the client reports the removal.
    left, failed = run.tool_result("toolu_exit")
    assert not failed and left.startswith(f"Exited and removed worktree at “{made}”"), left
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c for c in calls if c["event"] == "WorktreeRemove"] == [
        {"event": "WorktreeRemove", "record": "WorktreeRemoveEvent", "path": str(made)}
    ]
