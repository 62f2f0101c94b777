"""pre-tool-guide learns a resolution only from a related call, and never from another plugin's refusal."""

import contextlib
import sqlite3
from pathlib import Path

import omcm_pre_tool_guide
import pytest
from omcm_pre_tool_guide.normalize import is_mistake, related, subject

from omcm_core.store import DB_NAME
from omcm_core.testing import post_tool_payload, pre_tool_payload

IMPORT_ERROR = "Exit code 1\nModuleNotFoundError: No module named 'nonexistent_mod_zz'"


def guide(omcm_dispatch):
    return omcm_dispatch(names={"pre-tool-guide": omcm_pre_tool_guide}, env={"LANG": "en_US.UTF-8"})


def context(out):
    return out["hookSpecificOutput"]["additionalContext"] if out else None


def test_an_unrelated_success_is_not_the_fix_and_the_related_one_is(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    failing = {"command": "python3 -c 'import nonexistent_mod_zz'"}
    dispatch(post_tool_payload("Bash", failing, error=IMPORT_ERROR, session_id="s"))
    dispatch(
        post_tool_payload("Bash", {"command": "echo unrelated-hello"}, {"stdout": "unrelated-hello"}, session_id="s")
    )
    dispatch(post_tool_payload("Bash", {"command": "git status"}, {"stdout": "clean"}, session_id="s"))
    # Nothing resolved yet: the same error in a new session brings no "Resolved by".
    dispatch(post_tool_payload("Bash", failing, error=IMPORT_ERROR, session_id="t"))
    assert dispatch(pre_tool_payload("Bash", failing, session_id="t")) is None
    # The related call (the module installed) is the fix, with the calls on the way.
    dispatch(post_tool_payload("Bash", {"command": "pip install nonexistent_mod_zz"}, {"stdout": "ok"}, session_id="s"))
    dispatch(post_tool_payload("Bash", failing, error=IMPORT_ERROR, session_id="u"))
    lines = context(dispatch(pre_tool_payload("Bash", failing, session_id="u"))).split("\n")
    assert "Resolved by: pip install nonexistent_mod_zz (Bash)" in lines
    assert not any("echo unrelated-hello" in line or "git status" in line for line in lines)


def test_an_edit_of_another_file_does_not_resolve_an_edit_error(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    bad = {"file_path": "/p/app/server.py", "old_string": "a", "new_string": "b"}
    dispatch(post_tool_payload("Edit", bad, error="String to replace not found in file.", session_id="s"))
    other = {"file_path": "/p/app/other.py", "old_string": "a", "new_string": "b"}
    dispatch(post_tool_payload("Edit", other, {"filePath": "/p/app/other.py"}, session_id="s"))
    assert dispatch(pre_tool_payload("Edit", {"file_path": "/p/app/server.py"}, session_id="s2")) is None
    dispatch(post_tool_payload("Edit", bad, {"filePath": "/p/app/server.py"}, session_id="s"))
    lines = context(dispatch(pre_tool_payload("Edit", {"file_path": "/p/app/server.py"}, session_id="s2"))).split("\n")
    assert "Resolved by: Edit /p/app/server.py (Edit)" in lines


@pytest.mark.parametrize(
    "error",
    [
        "PreToolUse:Bash hook error: bash-guard: no 'rm -rf ~/work'",
        "<tool_use_error>PreToolUse:Bash hook error: [guard] refused</tool_use_error>",
        "TaskCreated hook feedback:\ntask 1 needs a description",
        "Stop hook blocking error from command: x",
    ],
)
def test_another_plugins_refusal_is_not_a_tool_error(omcm_dispatch, error):
    assert not is_mistake(error)
    dispatch = guide(omcm_dispatch)
    dispatch(post_tool_payload("Bash", {"command": "rm -rf ~/work"}, error=error, session_id="s"))
    dispatch(post_tool_payload("Bash", {"command": "rm -rf ~/work/tmp"}, {"stdout": ""}, session_id="s"))
    assert dispatch(pre_tool_payload("Bash", {"command": "rm -rf ~/work"}, session_id="s")) is None
    with contextlib.closing(
        sqlite3.connect(Path(dispatch.env["OMCM_HOME"]) / DB_NAME)
    ) as conn:  # 3.13 warns of an unclosed one
        assert conn.execute("SELECT count(*) FROM error_kb").fetchone() == (0,)


@pytest.mark.parametrize(
    ("failed", "fix", "is_related"),
    [
        (("python3 -c 'import zz_mod'", "No module named 'zz_mod'"), "pip install zz_mod", True),
        (("python3 -c 'import zz_mod'", "No module named 'zz_mod'"), "echo unrelated-hello", False),
        (("python3 -c 'import zz_mod'", "No module named 'zz_mod'"), "python3.11 -c 'import zz_mod'", True),
        (("pytest -q", "Exit code 1\n1 failed"), "cd app && pytest -q", True),
        (("pytest -q", "Exit code 1\n1 failed"), "cd app", False),
        (("npm test", "Cannot find module 'left-pad'"), "npm install left-pad", True),
        (("cat conf.yaml", "No such file: conf.yaml"), "ls && cp conf.example.yaml conf.yaml", True),
        (("make", "Exit code 2"), "git pull", False),
    ],
)
def test_subject_keys_relate_a_fix_to_its_failure(failed, fix, is_related):
    command, error = failed
    assert related(subject("Bash", {"command": command}, error), subject("Bash", {"command": fix})) is is_related
