"""Each plugin is called on its own, timed and isolated; answers merge in name order."""

import json
import time

from omcm_core import Result, hookimpl
from omcm_core.testing import post_tool_payload, pre_tool_payload, session_end_payload


class Context:
    @hookimpl
    def pre_tool(self, event):
        return Result(additional_context=f"ctx:{event.tool_name}")


class Denier:
    @hookimpl
    def pre_tool(self, event):
        return Result(permission="deny", reason="no")


class Raiser:
    @hookimpl
    def pre_tool(self, event):
        raise RuntimeError("boom")


class Hanger:
    @hookimpl
    def pre_tool(self, event):
        time.sleep(3)
        return Result(permission="allow")


class Garbage:
    @hookimpl
    def pre_tool(self, event):
        return {"permissionDecision": "allow"}


class Exiter:
    @hookimpl
    def pre_tool(self, event):
        raise SystemExit(3)


def test_answers_merge_in_plugin_name_order(omcm_dispatch):
    dispatch = omcm_dispatch(names={"b-ctx": Context(), "a-deny": Denier(), "c-ctx": Context()})
    out = dispatch(pre_tool_payload("Edit"))
    assert out["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no",
        "additionalContext": "ctx:Edit\n\nctx:Edit",
    }


def test_failing_plugins_change_nothing_for_the_others(omcm_dispatch):
    good = omcm_dispatch(names={"ctx": Context(), "deny": Denier()})
    env = {"OMCM__CORE__PLUGIN_BUDGET_MS": "300"}
    noisy = omcm_dispatch(
        names={
            "ctx": Context(),
            "deny": Denier(),
            "raise": Raiser(),
            "hang": Hanger(),
            "garbage": Garbage(),
            "exit": Exiter(),
        },
        env=env,
        strict=False,  # the isolation under test
    )
    payload = pre_tool_payload("Bash")
    started = time.monotonic()
    assert noisy(payload) == good(payload)
    assert time.monotonic() - started < 2.5  # the hanging plugin was abandoned at its budget


def test_failures_are_logged_with_plugin_name_and_kind(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"raise": Raiser(), "garbage": Garbage()}, strict=False)
    assert dispatch(pre_tool_payload("Bash")) is None
    entries = [json.loads(line) for line in (omcm_home / "logs" / "omcm.jsonl").read_text().splitlines()]
    failed = {e["plugin"]: e for e in entries if e["event"] == "plugin_failed"}
    assert failed["raise"]["kind"] == "raised" and "boom" in failed["raise"]["error"]
    assert failed["garbage"]["kind"] == "garbage"


def test_breaker_opens_after_three_failures_and_recovers(omcm_dispatch, omcm_home):
    from omcm_core._runtime.breaker import Breaker
    from omcm_core.store import Store

    calls = []

    class Flaky:
        broken = True

        @hookimpl
        def pre_tool(self, event):
            calls.append(1)
            if Flaky.broken:
                raise ValueError("flaky")
            return Result(additional_context="back")

    dispatch = omcm_dispatch(names={"flaky": Flaky()}, env={"OMCM__CORE__BREAKER_COOLDOWN_S": "1"}, strict=False)
    for _ in range(5):
        dispatch(pre_tool_payload("Bash"))
    assert len(calls) == 3  # the 4th and 5th call were kept away
    rows = Breaker(Store(omcm_home)).rows()
    assert (
        (rows[0]["plugin"], rows[0]["hook"]) == ("flaky", "pre_tool") and rows[0]["open"] and rows[0]["failures"] == 3
    )
    Flaky.broken = False
    time.sleep(1.1)
    assert dispatch(pre_tool_payload("Bash"))["hookSpecificOutput"]["additionalContext"] == "back"
    assert Breaker(Store(omcm_home)).rows() == []


def test_fail_closed_plugins_deny_when_they_crash(omcm_dispatch, omcm_home):
    omcm_home.mkdir(parents=True)
    (omcm_home / "config.toml").write_text('[core]\nfail_closed = ["guard"]\n')
    out = omcm_dispatch(names={"guard": Raiser()}, strict=False)(pre_tool_payload("Bash"))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "guard" in out["hookSpecificOutput"]["permissionDecisionReason"]


def test_post_tool_gets_success_and_failure_records(omcm_dispatch):
    seen = []

    class Observer:
        @hookimpl
        def post_tool(self, event):
            seen.append((event.hook_event_name, event.succeeded, event.error))

    dispatch = omcm_dispatch(names={"observer": Observer()})
    dispatch(post_tool_payload("Bash", {"command": "ls"}, {"stdout": "a"}))
    dispatch(post_tool_payload("Bash", {"command": "false"}, error="Exit code 1"))
    assert seen == [("PostToolUse", True, None), ("PostToolUseFailure", False, "Exit code 1")]


def test_fields_invalid_for_the_event_are_dropped_and_logged(omcm_dispatch, omcm_home):
    class WrongEvent:
        @hookimpl
        def session_end(self, event):
            return Result(additional_context="nobody reads this")

    assert omcm_dispatch(names={"wrong": WrongEvent()})(session_end_payload()) is None
    assert "result_fields_dropped" in (omcm_home / "logs" / "omcm.jsonl").read_text()


def test_plugins_get_a_safe_project_dir(omcm_dispatch, tmp_path):
    seen = []

    class Looker:
        @hookimpl
        def pre_tool(self, ctx):
            seen.append(ctx.project_dir)

    dispatch = omcm_dispatch(names={"looker": Looker()}, env={"CLAUDE_PROJECT_DIR": ""})
    dispatch(pre_tool_payload("Read", cwd=str(tmp_path)))
    dispatch(pre_tool_payload("Read", cwd="C:\\Users\\someone\\Project"))  # a Windows path replayed here
    dispatch(pre_tool_payload("Read", cwd=str(tmp_path / "missing")))
    assert seen == [tmp_path, None, None]


def test_a_breaker_closes_when_the_plugin_code_changes(omcm_dispatch, omcm_home, tmp_path, monkeypatch):
    import importlib
    import os

    source = tmp_path / "omcm_flaky_guard.py"
    source.write_text(
        "from omcm_core import Result, hookimpl\n\nCALLS = []\n\n@hookimpl\ndef pre_tool(event):\n"
        "    CALLS.append(1)\n    raise ValueError('broken')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("omcm_flaky_guard")
    dispatch = omcm_dispatch(names={"flaky-guard": module}, strict=False)
    for _ in range(4):
        dispatch(pre_tool_payload("Bash"))
    assert len(module.CALLS) == 3  # the 4th call was kept out by the open breaker
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a fix was saved
    dispatch(pre_tool_payload("Bash"))
    assert len(module.CALLS) == 4
    assert "breaker_reset_code_changed" in (omcm_home / "logs" / "omcm.jsonl").read_text()


def test_a_fail_closed_guard_kept_out_by_its_breaker_still_denies(omcm_dispatch, omcm_home):
    omcm_home.mkdir(parents=True)
    (omcm_home / "config.toml").write_text('[core]\nfail_closed = ["guard"]\n')
    dispatch = omcm_dispatch(names={"guard": Raiser(), "ctx": Context()}, strict=False)
    decisions = [dispatch(pre_tool_payload("Bash"))["hookSpecificOutput"]["permissionDecision"] for _ in range(5)]
    assert decisions == ["deny"] * 5
    from omcm_core._runtime.breaker import reset_breaker

    assert reset_breaker(omcm_home, "guard") and not reset_breaker(omcm_home, "guard")


def test_tryfirst_and_trylast_order_the_answers(omcm_dispatch):
    class First:
        @hookimpl(tryfirst=True)
        def pre_tool(self, event):
            return Result(additional_context="first")

    class Last:
        @hookimpl(trylast=True)
        def pre_tool(self, event):
            return Result(additional_context="last")

    dispatch = omcm_dispatch(names={"a-last": Last(), "m-ctx": Context(), "z-first": First()})
    assert dispatch(pre_tool_payload("Edit"))["hookSpecificOutput"]["additionalContext"] == "first\n\nctx:Edit\n\nlast"


def test_a_hook_wrapper_is_refused_loudly():
    import pytest

    from omcm_core._runtime.manager import Manager

    class Wrapper:
        @hookimpl(wrapper=True)
        def pre_tool(self, event):
            return (yield)

    manager = Manager()
    info = manager.register(Wrapper(), name="wrapper")
    assert not info.enabled and "hook wrappers are not supported (pre_tool)" in info.why
    assert manager.implementations("pre_tool") == [] and "wrapper" in manager.broken()
    with pytest.raises(ValueError, match="wrapper"):
        from omcm_core.testing import Dispatcher

        Dispatcher({"wrapper": Wrapper()}, {})


def test_listing_or_resetting_breakers_creates_no_store(tmp_path):
    from omcm_core._runtime.breaker import open_breakers, reset_breaker

    home = tmp_path / "fresh-home"
    assert open_breakers(home, None, {"OMCM_HOME": str(home)}) == set()
    assert reset_breaker(home, "anything") is False
    assert not home.exists()


def test_a_plugin_exception_is_logged_with_its_traceback(omcm_dispatch, omcm_home):
    class Deep:
        @hookimpl
        def pre_tool(self, event):
            return self.inner(event)

        def inner(self, event):
            raise KeyError("token=ghp_" + "a" * 36)

    omcm_dispatch(names={"deep": Deep()}, strict=False)(pre_tool_payload("Bash"))
    entries = [json.loads(line) for line in (omcm_home / "logs" / "omcm.jsonl").read_text().splitlines()]
    (failed,) = [e for e in entries if e["event"] == "plugin_failed"]
    trace = failed["traceback"]
    assert "Traceback (most recent call last)" in trace
    assert "in inner" in trace and "in pre_tool" in trace and "KeyError" in trace
    assert "ghp_" + "a" * 36 not in trace  # masked like the error text
