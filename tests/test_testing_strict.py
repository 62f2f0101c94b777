"""omcm_dispatch, the plugin author's helper: strict by default, isolating on request."""

from __future__ import annotations

import traceback

import pytest

from omcm_core import Result, hookimpl
from omcm_core.testing import PluginFailed, install_plugin_module, pre_tool_payload


class Crashes:
    @hookimpl
    def pre_tool(self, event):
        return event.tool_input["missing"]["deeper"]  # KeyError, as an author's typo would


class ReturnsDict:
    @hookimpl
    def pre_tool(self, event):
        return {"permission": "deny"}


class Denies:
    @hookimpl
    def pre_tool(self, event):
        return Result(permission="deny", reason="no")


def test_strict_reraises_the_plugin_exception_with_its_traceback(omcm_dispatch):
    dispatch = omcm_dispatch(names={"crashes": Crashes(), "denies": Denies()})
    with pytest.raises(KeyError) as info:
        dispatch(pre_tool_payload("Bash", {"command": "ls"}))
    frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert "pre_tool" in frames  # the plugin's own line is in the traceback
    notes = getattr(info.value, "__notes__", None)
    if notes is not None:  # Python 3.11+
        assert "omcm plugin 'crashes'" in notes[-1]


def test_strict_fails_on_a_result_that_is_not_a_result(omcm_dispatch):
    dispatch = omcm_dispatch(names={"returns-dict": ReturnsDict()})
    with pytest.raises(PluginFailed, match="returns-dict.*returned dict"):
        dispatch(pre_tool_payload("Bash", {"command": "ls"}))


def test_strict_false_keeps_production_isolation(omcm_dispatch):
    dispatch = omcm_dispatch(names={"crashes": Crashes(), "denies": Denies()}, strict=False)
    out = dispatch(pre_tool_payload("Bash", {"command": "ls"}))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_strict_dispatcher_answers_normally_when_nothing_fails(omcm_dispatch):
    dispatch = omcm_dispatch(names={"denies": Denies()})
    first = dispatch(pre_tool_payload("Bash", {"command": "ls"}))
    assert first["hookSpecificOutput"]["permissionDecision"] == "deny"
    # problems do not leak from one call into the next
    assert dispatch(pre_tool_payload("Bash", {"command": "ls"})) == first


def crashy_site(tmp_path):
    """A distribution with an ``omcm`` entry point whose pre_tool raises, installed into a folder for PYTHONPATH."""
    site = tmp_path / "site"
    install_plugin_module(
        site,
        "crashy",
        "from omcm_core import hookimpl\n\n\n@hookimpl\ndef pre_tool(event):\n    return event.tool_input['missing']\n",
    )
    return site


def test_run_hook_is_strict_too(tmp_path, omcm_home):
    import os

    from omcm_core.testing import run_hook

    path = os.pathsep.join([str(crashy_site(tmp_path)), os.environ.get("PYTHONPATH", "")])
    env = {"PYTHONPATH": path, "OMCM_LOAD_PLUGINS": "crashy"}
    payload = pre_tool_payload("Bash", {"command": "ls"})
    with pytest.raises(PluginFailed, match=r"'crashy' failed in its pre_tool hook \(raised\): KeyError: 'missing'"):
        run_hook(payload, env=env)
    proc = run_hook(payload, env=env, strict=False)  # the session itself never broke
    assert (proc.returncode, proc.stdout) == (0, b"")
