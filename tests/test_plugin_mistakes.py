"""A mistake in a plugin's code is refused at load, and ``omcm plugins`` / doctor name the change that fixes it.

Each plugin here is a real installed distribution (``install_plugin_module``) run
through real ``omcm`` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from omcm_core import Result, hookimpl
from omcm_core._runtime import hook_checks
from omcm_core.testing import install_plugin_module, pre_tool_payload, run_hook


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "omcm"
    home.mkdir(mode=0o700)
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "OMCM_HOME": str(home),
        "PYTHONPATH": str(tmp_path / "site"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMCM_LOAD_PLUGINS": "pguard",
        "OMCM_DAEMON": "0",
        "CLAUDE_PROJECT_DIR": str(tmp_path),
        "NO_COLOR": "1",
    }


def omcm(env, *args):
    return subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env)


def row(env) -> dict:
    proc = omcm(env, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    return {r["name"]: r for r in json.loads(proc.stdout)}["pguard"]


HEADER = "from omcm_core import Result, hookimpl\n\n\n"


def test_a_hook_argument_with_a_default_is_refused_at_load_naming_plugin_hook_and_argument(env, tmp_path):
    module = install_plugin_module(
        tmp_path / "site",
        "pguard",
        HEADER + "@hookimpl\ndef pre_tool(event, ctx=None):\n    return Result(reason=ctx.plugin_name)\n",
    )
    proc = run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env, strict=False)
    assert proc.returncode == 0 and proc.stdout == b""
    found = row(env)
    assert not found["enabled"]
    assert found["why"] == "invalid plugin: hook pre_tool's argument 'ctx' has a default value; omcm never passes it"
    assert found["fix"] == f"remove the default of ctx in pre_tool ({module}:4)"
    listing = omcm(env, "plugins").stdout
    assert f"fix: remove the default of ctx in pre_tool ({module}:4)" in listing
    doctor = omcm(env, "doctor")
    assert doctor.returncode == 1 and "pguard 0.1: invalid plugin: hook pre_tool's argument 'ctx'" in doctor.stdout
    assert f"fix: remove the default of ctx in pre_tool ({module}:4)" in doctor.stdout
    assert "--reinstall" not in doctor.stdout.split("pguard 0.1:")[1].split("\n\n")[0]


def test_the_strict_harness_refuses_a_defaulted_argument_too(omcm_dispatch):
    plugin = types.ModuleType("omcm_pguard")

    @hookimpl
    def pre_tool(event, ctx=None):
        return Result(reason="never")

    plugin.pre_tool = pre_tool
    with pytest.raises(ValueError, match=r"pre_tool's argument 'ctx' has a default value.*fix: remove the default"):
        omcm_dispatch(plugin)


def test_a_misspelt_hook_gets_the_rename(env, tmp_path):
    module = install_plugin_module(
        tmp_path / "site", "pguard", HEADER + "@hookimpl\ndef pre_tol(event):\n    return None\n"
    )
    found = row(env)
    assert found["why"] == "invalid plugin: unknown hook(s) pre_tol"
    assert found["fix"] == f"rename pre_tol → pre_tool ({module}:4)"
    assert f"fix: rename pre_tol → pre_tool ({module}:4)" in omcm(env, "doctor").stdout


def test_a_wrong_argument_gets_the_argument_to_change_on_one_line(env, tmp_path):
    install_plugin_module(
        tmp_path / "site", "pguard", HEADER + "@hookimpl\ndef pre_tool(evnt, ctx):\n    return None\n"
    )
    found = row(env)
    assert found["why"] == "invalid plugin: hook pre_tool takes evnt, which its hookspec does not give"
    assert found["fix"] == "rename evnt → event in pre_tool (it may take: event, ctx)"
    listing = omcm(env, "plugins").stdout.splitlines()
    # pluggy's three-line message would have broken the table: one line of status, one of hooks, one fix.
    (status,) = [line for line in listing if line.startswith("pguard")]
    assert status.endswith("disabled (invalid plugin: hook pre_tool takes evnt, which its hookspec does not give)")
    doctor = omcm(env, "doctor").stdout
    assert "fix: rename evnt → event in pre_tool" in doctor and "hookimpl definition" not in doctor


def test_an_import_error_points_at_the_plugins_failing_line(env, tmp_path):
    source = HEADER + "import json\nimport nonexistent_mod_zz  # the mistake\n"
    module = install_plugin_module(tmp_path / "site", "pguard", source)
    found = row(env)
    assert found["why"] == "import failed: ModuleNotFoundError: No module named 'nonexistent_mod_zz'"
    assert found["fix"] == f"fix {module}:5: import nonexistent_mod_zz  # the mistake"
    assert f"fix: fix {module}:5: import nonexistent_mod_zz" in omcm(env, "doctor").stdout


def test_a_syntax_error_points_at_its_line(env, tmp_path):
    module = install_plugin_module(tmp_path / "site", "pguard", HEADER + "def pre_tool(event:\n    pass\n")
    found = row(env)
    assert found["why"].startswith("import failed: SyntaxError")
    assert found["fix"].startswith(f"fix {module}:4: def pre_tool(event:"), found["fix"]


def test_a_fail_closed_plugin_that_cannot_load_is_said_loudly_to_deny_every_tool_call(env, tmp_path):
    install_plugin_module(tmp_path / "site", "pguard", HEADER + "raise RuntimeError('boom')\n")
    (Path(env["OMCM_HOME"]) / "config.toml").write_text('[core]\nfail_closed = ["pguard"]\n')
    proc = run_hook(pre_tool_payload("Bash", {"command": "ls"}), env=env, strict=False)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    doctor = omcm(env, "doctor").stdout
    assert "IT IS IN [core] fail_closed, SO EVERY TOOL CALL IS DENIED until pguard loads" in doctor
    assert "EVERY TOOL CALL IS DENIED until it loads" in omcm(env, "plugins").stdout
    assert row(env)["denying_every_tool_call"] is True


def test_a_plugin_that_loads_is_not_said_to_deny(env, tmp_path):
    install_plugin_module(tmp_path / "site", "pguard", HEADER + "@hookimpl\ndef pre_tool(event):\n    return None\n")
    (Path(env["OMCM_HOME"]) / "config.toml").write_text('[core]\nfail_closed = ["pguard"]\n')
    found = row(env)
    assert found["enabled"] and found["fix"] == "" and found["denying_every_tool_call"] is False
    assert "DENIED" not in omcm(env, "doctor").stdout


def test_mistyped_names_get_did_you_mean(env, tmp_path):
    install_plugin_module(tmp_path / "site", "pguard", HEADER + "@hookimpl\ndef pre_tool(event):\n    return None\n")
    reset = omcm(env, "plugins", "reset", "pgaurd")
    assert reset.returncode == 1 and "no plugin named 'pgaurd': did you mean pguard?" in reset.stderr
    nothing = omcm(env, "plugins", "reset", "zzzz")
    assert nothing.returncode == 1 and "no plugin named 'zzzz' (installed: " in nothing.stderr
    assert "pguard" in nothing.stderr.split("installed: ")[1]
    fine = omcm(env, "plugins", "reset", "pguard")
    assert fine.returncode == 0 and "pguard: no breaker was open or counting" in fine.stdout
    selected = omcm({**env, "OMCM_LOAD_PLUGINS": "pgaurd"}, "plugins")
    assert "OMCM_LOAD_PLUGINS names 'pgaurd', which is not an installed plugin: did you mean pguard?" in selected.stderr
    command = omcm(env, "plugns")
    assert command.returncode == 2 and "'plugns' is not an omcm command: did you mean `omcm plugins`?" in command.stderr
    assert command.stdout == ""


@pytest.mark.parametrize(
    ("name", "close"),
    [("pre_tol", "pre_tool"), ("session_strat", "session_start"), ("subagent_strat", "subagent_start"), ("zz", None)],
)
def test_did_you_mean_hook_names(name, close):
    from omcm_core._cli.new_plugin import ALL_HOOKS

    assert hook_checks.did_you_mean(name, ALL_HOOKS) == close


def test_a_multi_line_doctor_problem_keeps_the_layout(omcm_plugin):
    class Reports:
        @hookimpl
        def doctor_report(self):
            return {"problems": ["the index is stale\n  (3 files changed)\nrebuild it; run omcm reindex"]}

    lines = omcm_plugin(Reports(), name="reports").doctor()
    assert lines == [
        "ok: reports",
        "error: reports: the index is stale (3 files changed) rebuild it",
        "  fix: omcm reindex",
    ]
