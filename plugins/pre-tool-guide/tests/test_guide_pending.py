"""Which failure a success resolves: the pending one of the same tool, and only the latest.

A session keeps one pending error per tool. A later failure of the same tool
replaces the earlier one (which stays unresolved); a success resolves the
pending error of its own tool, never one of another tool.
"""

import json

import omcm_pre_tool_guide

from omcm_core.store import Store
from omcm_core.testing import post_tool_payload, pre_tool_payload


def test_success_resolves_the_latest_pending_failure_of_its_own_tool(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"pre-tool-guide": omcm_pre_tool_guide}, env={"LANG": "en_US.UTF-8"})

    def post(tool, tool_input, error=None):
        dispatch(post_tool_payload(tool, tool_input, {} if error is None else None, error=error, session_id="s"))

    post("Edit", {"file_path": "/p/a.py"}, error="E-a: old_string not found")
    post("Bash", {"command": "make"}, error="Exit code 2\nE-bash: no rule to make target")
    post("Edit", {"file_path": "/p/b.py"}, error="E-b: old_string not unique")
    post("Read", {"file_path": "/p/b.py"})
    post("Edit", {"file_path": "/p/b.py"})
    post("Bash", {"command": "make all"})

    rows = Store(omcm_home).query("SELECT file_key, tool, error_normalized, resolution FROM error_kb ORDER BY id")
    lessons = {(key, tool): json.loads(resolution) if resolution else None for key, tool, _, resolution in rows}
    assert lessons == {
        ("a.py", "Edit"): None,  # replaced as the pending Edit error by b.py's: nothing resolved it
        ("b.py", "Edit"): {"resolvedBy": "Edit /p/b.py", "tool": "Edit", "toolSequence": ["Edit", "Read", "Edit"]},
        ("", "Bash"): {
            "resolvedBy": "make all",
            "tool": "Bash",
            "toolSequence": ["Bash", "Edit", "Read", "Edit", "Bash"],
        },
    }
    assert Store(omcm_home).query("SELECT count(*) FROM guide_pending") == [(0,)]
    assert dispatch(pre_tool_payload("Edit", {"file_path": "/p/a.py"}, session_id="t")) is None
    guidance = dispatch(pre_tool_payload("Edit", {"file_path": "/p/b.py"}, session_id="t"))
    assert "E-b: old_string not unique" in guidance["hookSpecificOutput"]["additionalContext"]
