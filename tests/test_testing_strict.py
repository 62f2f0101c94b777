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
    with pytest.raises(PluginFailed, match="returns-dict.*returned dict.*, at .*test_testing_strict.py:2[0-9]: return"):
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


class Loud:
    @hookimpl
    def pre_tool(self, event):
        return Result(additional_context="a line of context\n" * 60_000)  # about 1 MB


def test_strict_fails_when_the_budget_cut_a_plugins_context(omcm_dispatch):
    from omcm_core.testing import ContextCut

    dispatch = omcm_dispatch(names={"loud": Loud()})
    with pytest.raises(ContextCut) as info:
        dispatch(pre_tool_payload("Bash", {"command": "ls"}))
    message = str(info.value)
    assert message.startswith("omcm plugin 'loud' gave 1,080,000 characters of additional_context on PreToolUse; ")
    assert "[core] context_budget = 10000 (shared by the plugins giving context) kept 9,9" in message
    # The same call isolated, as production runs it: the head is kept, with the marker line.
    context = omcm_dispatch(names={"loud": Loud()}, strict=False)(pre_tool_payload("Bash", {"command": "ls"}))
    text = context["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 10_000 and text.endswith("cut to fit the context budget]")


def test_strict_names_the_cap_that_cut_a_context(omcm_dispatch, omcm_home):
    omcm_home.mkdir()
    (omcm_home / "config.toml").write_text("[core]\ncontext_caps = { loud = 500 }\n")

    class Chatty:
        @hookimpl
        def pre_tool(self, event):
            return Result(additional_context="x " * 400)

    with pytest.raises(PluginFailed, match=r"gave 800 characters .* \[core\] context_caps.loud = 500 kept"):
        omcm_dispatch(names={"loud": Chatty()})(pre_tool_payload("Bash", {"command": "ls"}))


def test_production_warns_of_a_cut_and_run_hook_strict_fails_on_it(tmp_path, omcm_home):
    import json
    import os

    from omcm_core.testing import ContextCut, run_hook

    site = tmp_path / "site"
    install_plugin_module(
        site,
        "loud",
        "from omcm_core import Result, hookimpl\n\n\n@hookimpl\n"
        "def pre_tool(event):\n    return Result(additional_context='y' * 1_000_000)\n",
    )
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]), "OMCM_LOAD_PLUGINS": "loud"}
    payload = pre_tool_payload("Bash", {"command": "ls"})
    with pytest.raises(ContextCut, match="'loud' gave 1,000,000 characters"):
        run_hook(payload, env=env)
    lines = [json.loads(line) for line in (omcm_home / "logs" / "omcm.jsonl").read_text().splitlines()]
    (cut,) = [line for line in lines if line["event"] == "context_cut"]
    assert cut["level"] == "warning" and cut["plugin"] == "loud" and cut["asked"] == 1_000_000
    assert cut["setting"].startswith("[core] context_budget = 10000")
    proc = run_hook(payload, env=env, strict=False)
    assert len(json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]) <= 10_000


class ReturnsUnrenderable:
    @hookimpl
    def pre_tool(self, event):
        if event.tool_name == "Bash":
            return Result(permission="deny", updated_input="rm -rf x")  # the author's mistake, on this line
        return None


def test_strict_names_the_return_line_of_a_result_that_cannot_be_rendered(omcm_dispatch):
    dispatch = omcm_dispatch(names={"unrenderable": ReturnsUnrenderable()})
    with pytest.raises(PluginFailed) as info:
        dispatch(pre_tool_payload("Bash", {"command": "ls"}))
    message = str(info.value)
    assert "updated_input must be a dict, got str, at " in message
    assert f"{__file__}:" in message and "# the author's mistake, on this line" in message
    assert "_failure_capture.py" not in message


def test_a_timeout_shows_where_the_hook_was_stuck(omcm_dispatch, omcm_home):
    import threading

    omcm_home.mkdir()
    (omcm_home / "config.toml").write_text("[core]\nplugin_budget_ms = 300\n")
    release = threading.Event()

    def wait_for_the_lock():
        release.wait(30)  # the line the hook is stuck on

    class Hangs:
        @hookimpl
        def pre_tool(self, event):
            wait_for_the_lock()

    try:
        with pytest.raises(PluginFailed) as info:
            omcm_dispatch(names={"hangs": Hangs()})(pre_tool_payload("Bash", {"command": "ls"}))
    finally:
        release.set()
    message = str(info.value)
    assert "'hangs' failed in its pre_tool hook: timeout: overran its 300 ms budget; stuck at:" in message
    assert "in pre_tool\n    wait_for_the_lock()" in message
    assert message.endswith("in wait_for_the_lock\n    release.wait(30)  # the line the hook is stuck on")
    assert "budget.py" not in message and "_failure_capture.py" not in message
