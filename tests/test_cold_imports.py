"""A cold hook call (no dispatcher, answered in process) imports only what its event needs.

The real fast command's client, in process (``OMCM_DAEMON=0``), fed a real
payload; ``sys.modules`` is read after the answer. No timing: the imports are
the behaviour (benchmarks under bench/ measure the time).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core.testing import post_tool_payload, pre_tool_payload

CLIENT_DIR = Path(__file__).resolve().parents[1] / "omcm_core" / "_runtime"
#: Never on a hook's path: the MCP SDK (``omcm mcp`` only).
NEVER = {"mcp", "mcp_types", "pydantic", "anyio"}
#: The entropy detectors: only for masking what is recorded (PostToolUse), never to answer a PreToolUse.
DETECTORS = {"detect_secrets"}
#: A few records of each family: the turn's (SessionStart, Stop, ...) and the less frequent events'.
SESSION = {"SessionStartEvent", "StopEvent", "UserPromptEvent"}
RARE = {"StopFailureEvent", "ElicitationEvent", "TaskEvent", "PermissionRequestEvent"}


def modules_after_cold_call(home: Path, payload: dict) -> tuple[set[str], set[str]]:
    """(the modules imported, the event record classes built) after one cold call."""
    code = (
        "import sys; del sys.path[0]; sys.path.insert(0, sys.argv[1]); import client; del sys.path[0];"
        "code, out, err = client.answer([], sys.stdin.buffer.read()); client.run_later();"
        "import attr; records = [v for k, v in sys.modules.items() if k.startswith('omcm_core') and 'records' in k];"
        "built = sorted({n for m in records for n, v in vars(m).items() if isinstance(v, type) and attr.has(v)});"
        "sys.stderr.write(repr({'out': out, 'modules': sorted(sys.modules), 'built': built}))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMCM_LOAD_PLUGINS", "OMCM_DISABLE_PLUGINS")}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, str(CLIENT_DIR)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**env, "OMCM_DAEMON": "0", "OMCM_HOME": str(home), "OMCM__CORE__PLUGIN_BUDGET_MS": "60000"},
        check=True,
    )
    found = ast.literal_eval(proc.stderr.decode().strip().splitlines()[-1])
    return set(found["modules"]), set(found["built"])


def session_start_payload(tmp_path: Path) -> dict:
    return {
        "hook_event_name": "SessionStart",
        "session_id": "cold-s",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "source": "startup",
    }


@pytest.mark.parametrize(
    ("event", "own", "others", "never"),
    [
        ("PreToolUse", "PreToolEvent", SESSION | RARE, NEVER | DETECTORS),
        ("PostToolUse", "PostToolEvent", SESSION | RARE, NEVER),
        ("SessionStart", "SessionStartEvent", RARE, NEVER | DETECTORS),
    ],
)
def test_cold_call_builds_only_its_event_family(tmp_path, event, own, others, never):
    payload = {
        "PreToolUse": pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path)),
        "PostToolUse": post_tool_payload("Bash", {"command": "ls"}, {"stdout": "a", "stderr": "", "exitCode": 0}),
        "SessionStart": session_start_payload(tmp_path),
    }[event]
    home = tmp_path / "home"
    modules_after_cold_call(home, payload)  # the first call discovers the plugins and writes their cache
    modules, built = modules_after_cold_call(home, {**payload, "tool_use_id": "toolu_cold_2"})
    assert own in built and "omcm_core._runtime.dispatch" in modules  # really dispatched
    roots = {name.split(".")[0] for name in modules}
    assert roots & never == set()
    assert built & others == set()  # another family's records are not built


def test_every_family_record_is_reachable_from_records():
    import importlib

    import attrs

    from omcm_core import events, records

    for module, names in records._FAMILIES.items():
        defined = {
            n for n, v in vars(importlib.import_module(module)).items() if attrs.has(v) and v.__module__ == module
        }
        assert defined == set(names), module  # a class missing from the table would be unreachable
        for name in names:
            assert getattr(records, name).__name__ == name
    assert all(attrs.has(spec.record) for spec in events.EVENTS.values())
