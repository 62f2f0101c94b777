"""pytest helpers for omcm plugin authors (loaded as the ``omcm`` pytest plugin).

Fixtures:

- ``omcm_home``: a private, empty ``OMCM_HOME`` for the test (also set in the env).
- ``omcm_dispatch``: ``omcm_dispatch(plugin, ...)`` returns a :class:`Dispatcher`
  holding only the given plugins (modules or objects with ``@hookimpl``
  functions), registered under their names, no entry points loaded. Call it
  with a payload dict to get Claude Code's response dict (or None). Strict by
  default: a plugin's exception propagates with its traceback (production
  would log it and answer without the plugin); ``strict=False`` isolates it.

Payload builders (plain functions): :func:`pre_tool_payload`,
:func:`post_tool_payload`, :func:`session_start_payload`,
:func:`session_end_payload`, :func:`user_prompt_payload`, and
:func:`hook_payload` for any other event; :func:`event_from`
turns a payload into the event record a hook receives.

- ``omcm_plugin``: ``omcm_plugin(plugin)`` returns the plugin's other surfaces:
  its ``omcm`` subcommands (``.cli``), its MCP tools as ``omcm mcp`` serves them
  (``.mcp``, ``.mcp_tools``), its doctor report (``.doctor``) and its settings as
  a user or a project writes them (``.settings``).

End to end, through a real subprocess as Claude Code would run it:
:func:`run_hook`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from omcm_core._failure_capture import (
    ContextCut as ContextCut,  # re-exported: what a strict test raises when the budget cut a context
)
from omcm_core._failure_capture import (
    PluginFailed,
    logged_failures,
    raise_context_cut,
    raise_first,
    recording_manager,
    size_of,
)

DEFAULT_SESSION = "11111111-2222-4333-8444-555555555555"


def _base(event: str, session_id: str, cwd: str | None, /, **extra: Any) -> dict[str, Any]:
    payload = {
        "session_id": session_id,
        "transcript_path": f"/tmp/omcm-test/{session_id}.jsonl",
        "cwd": cwd or os.getcwd(),
        "hook_event_name": event,
    }
    payload.update(extra)
    return payload


def pre_tool_payload(
    tool_name: str = "Read",
    tool_input: Mapping[str, Any] | None = None,
    session_id: str = DEFAULT_SESSION,
    cwd: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return _base(
        "PreToolUse",
        session_id,
        cwd,
        permission_mode="default",
        tool_name=tool_name,
        tool_input=dict(tool_input or {}),
        tool_use_id=f"toolu_{uuid.uuid4().hex[:24]}",
        **extra,
    )


def post_tool_payload(
    tool_name: str = "Read",
    tool_input: Mapping[str, Any] | None = None,
    tool_response: Any = None,
    session_id: str = DEFAULT_SESSION,
    error: str | None = None,
    cwd: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """PostToolUse, or PostToolUseFailure when ``error`` is given."""
    if error is not None:
        event, outcome = "PostToolUseFailure", {"error": error, "is_interrupt": False}
    else:
        event, outcome = "PostToolUse", {"tool_response": tool_response if tool_response is not None else {}}
    return _base(
        event,
        session_id,
        cwd,
        permission_mode="default",
        tool_name=tool_name,
        tool_input=dict(tool_input or {}),
        tool_use_id=extra.pop("tool_use_id", f"toolu_{uuid.uuid4().hex[:24]}"),
        **outcome,
        **extra,
    )


def session_start_payload(
    source: str = "startup", session_id: str = DEFAULT_SESSION, cwd: str | None = None, **extra: Any
) -> dict:
    return _base("SessionStart", session_id, cwd, source=source, **extra)


def session_end_payload(
    reason: str = "other", session_id: str = DEFAULT_SESSION, cwd: str | None = None, **extra: Any
) -> dict:
    return _base("SessionEnd", session_id, cwd, reason=reason, **extra)


def user_prompt_payload(prompt: str, session_id: str = DEFAULT_SESSION, cwd: str | None = None, **extra: Any) -> dict:
    return _base("UserPromptSubmit", session_id, cwd, permission_mode="default", prompt=prompt, **extra)


def hook_payload(event: str, /, session_id: str = DEFAULT_SESSION, cwd: str | None = None, **fields: Any) -> dict:
    """A payload for any ``hook_event_name`` (Stop, PreCompact, StopFailure...), with the common fields set."""
    return _base(event, session_id, cwd, **fields)


def event_from(payload: Mapping[str, Any]) -> Any:
    """The event record the core would pass to a hook for ``payload`` (a GenericEvent for one omcm does not know)."""
    from omcm_core._runtime.payload import parse_event

    return parse_event(dict(payload))


def assert_valid_response(event_name: str, response: Any) -> None:
    """Fail unless ``response`` is something Claude Code accepts for ``event_name``.

    ``response`` is the parsed stdout (None for empty stdout).
    """
    from omcm_core.events import TEXT_CAP, spec_for

    if response is None:
        return
    assert isinstance(response, dict), f"stdout must be a JSON object, got {type(response).__name__}"
    allowed_top = {
        "continue",
        "stopReason",
        "systemMessage",
        "suppressOutput",
        "decision",
        "reason",
        "hookSpecificOutput",
    }
    assert set(response) <= allowed_top, f"unexpected keys {set(response) - allowed_top}"
    spec = spec_for(event_name)
    if "decision" in response:
        assert spec.block and response["decision"] == "block"
        assert isinstance(response.get("reason"), str) and response["reason"]
    if "continue" in response:
        assert response["continue"] is False and spec.halt
    if "systemMessage" in response:
        assert spec.system_message
        assert isinstance(response["systemMessage"], str) and len(response["systemMessage"]) <= TEXT_CAP
    specific = response.get("hookSpecificOutput")
    if specific is not None:
        assert specific.get("hookEventName") == event_name, "hookSpecificOutput needs hookEventName"
        allowed = {"hookEventName"}
        if spec.context:
            allowed.add("additionalContext")
        if spec.permission:
            allowed |= {"permissionDecision", "permissionDecisionReason"}
            assert specific.get("permissionDecision") in (None, *spec.permissions)
        if spec.rewrite:
            allowed.add("updatedInput")
            if specific.get("permissionDecision") in ("deny", "defer"):
                assert "updatedInput" not in specific
        if spec.decision:
            allowed.add("decision")
            decision = specific.get("decision")
            if decision is not None:
                assert decision.get("behavior") in ("allow", "deny"), f"bad decision {decision!r}"
                keys = (
                    {"behavior", "updatedInput", "updatedPermissions"}
                    if decision["behavior"] == "allow"
                    else {
                        "behavior",
                        "message",
                    }
                )
                assert set(decision) <= keys, f"keys not valid in a {decision['behavior']} decision"
        if spec.retry:
            allowed.add("retry")
            assert specific.get("retry", True) is True
        if spec.watch_paths:
            allowed.add("watchPaths")
            assert all(isinstance(p, str) for p in specific.get("watchPaths", []))
        if spec.worktree_path:
            allowed.add("worktreePath")
        if spec.elicitation:
            allowed |= {"action", "content"}
            assert specific.get("action") in (None, "accept", "decline", "cancel")
        if spec.display:
            allowed.add("displayContent")
        assert set(specific) <= allowed, f"keys not valid for {event_name}: {set(specific) - allowed}"
        assert len(specific.get("additionalContext", "")) <= TEXT_CAP


class Dispatcher:
    """Dispatches payloads through ``omcm_core._runtime.dispatch.handle`` with chosen plugins.

    ``strict`` (the default) re-raises the first plugin exception of a call, with
    its traceback, and raises :class:`PluginFailed` for a plugin that overran or
    returned something not a ``Result``: in production the core skips such a
    plugin and answers without it, which in a test only shows as a missing
    answer. It raises :class:`ContextCut` when the context budget
    (``[core] context_budget``, ``context_caps``) cut a plugin's
    ``additional_context``: production keeps the head and logs a warning, which
    in a test would pass unseen. ``strict=False`` keeps that isolation, for tests of it.

    ``keeper`` (a :class:`omcm_core._runtime.dispatch.StoreKeeper`) keeps the store open
    between calls, as the warm dispatcher does.
    """

    def __init__(
        self, plugins: Mapping[str, Any], env: Mapping[str, str], keeper: Any = None, strict: bool = True
    ) -> None:
        self.env = dict(env)
        self.keeper = keeper
        self.strict = strict
        self.manager = recording_manager()
        for name, plugin in plugins.items():
            info = self.manager.register(plugin, name=name)
            if not info.enabled:
                fix = f" (fix: {info.fix})" if info.fix else ""
                raise ValueError(f"plugin {name} could not be registered: {info.why}{fix}")
        self.last_stdout = b""

    def __call__(self, payload: Any, event: str | None = None) -> dict | None:
        from omcm_core._runtime.dispatch import handle

        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.manager.problems.clear()
        outcome = handle(raw, event, self.env, manager_factory=lambda env: self.manager, keeper=self.keeper)
        self.last_stdout = outcome.stdout
        if self.strict and self.manager.problems:
            raise_first(self.manager.problems[0])
        if self.strict and outcome.cuts:
            raise_context_cut(outcome.cuts[0])
        return json.loads(outcome.stdout) if outcome.stdout else None


def _plugin_name(plugin: Any) -> str:
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return name.rsplit(".", 1)[-1]


def shared_fixtures_dir() -> Path | None:
    """``../shared/fixtures`` beside the checkout (or ``OMCM_SHARED_FIXTURES``), if present.

    Real hook payloads and transcripts written by Claude Code; read in place at
    test time, never copied into the project.
    """
    configured = os.environ.get("OMCM_SHARED_FIXTURES")
    candidates = [Path(configured)] if configured else []
    candidates.append(Path(__file__).resolve().parents[1].parent / "shared" / "fixtures")
    candidates.append(Path.cwd().resolve().parent / "shared" / "fixtures")  # tests run from the checkout
    for candidate in candidates:
        if (candidate / "hook-payloads").is_dir():
            return candidate
    return None


@pytest.fixture
def shared_fixtures() -> Path:
    """The shared fixtures folder; the test is skipped when it is absent."""
    path = shared_fixtures_dir()
    if path is None:
        pytest.skip("../shared/fixtures is not present")
    return path


@pytest.fixture
def omcm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "omcm-home"
    monkeypatch.setenv("OMCM_HOME", str(home))
    monkeypatch.delenv("OMCM_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("OMCM_DISABLE_PLUGINS", raising=False)
    return home


@pytest.fixture
def omcm_dispatch(omcm_home: Path):
    """``omcm_dispatch(plugin, ..., names={name: plugin}, env={...}, keeper=None, strict=True)`` -> Dispatcher.

    Strict (the default): a plugin's exception propagates out of the call, with
    its traceback; ``strict=False`` dispatches as production does, answering
    without a plugin that failed.
    """

    def factory(
        *plugins: Any,
        names: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        keeper: Any = None,
        strict: bool = True,
    ) -> Dispatcher:
        chosen = dict(names or {})
        for plugin in plugins:
            chosen[_plugin_name(plugin)] = plugin
        full_env = {**os.environ, "OMCM_HOME": str(omcm_home), **(env or {})}
        return Dispatcher(chosen, full_env, keeper, strict=strict)

    return factory


@pytest.fixture
def omcm_plugin(omcm_home: Path, tmp_path: Path):
    """``omcm_plugin(plugin, name=None)`` -> the plugin's other surfaces, driven as omcm drives them.

    ``.cli("lessons", "--json")`` runs ``omcm`` (its own subcommands included) and
    returns ``CliRun(code, stdout, stderr)``; ``.mcp("tool", **arguments)`` calls an
    MCP tool through the server ``omcm mcp`` builds and the MCP SDK's client
    (``McpAnswer(text, is_error)``); ``.mcp_tools()`` lists them with their input
    schemas; ``.doctor()`` gives the lines ``omcm doctor`` shows for the plugin;
    ``.settings(Schema, user="k = 1", project="k = 2")`` loads its config section
    as a user's ``config.toml`` and a project's ``.claude/omcm.toml`` set it.
    Only this plugin is registered; the home and the project (``.project``) are private.
    """
    from omcm_core._surfaces import PluginSurfaces

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)

    def factory(plugin: Any, name: str | None = None) -> PluginSurfaces:
        return PluginSurfaces(name or _plugin_name(plugin), plugin, omcm_home, project, os.environ)

    return factory


def install_plugin_module(site: Path, name: str, source: str, version: str = "0.1") -> Path:
    """Install ``source`` as the one-module distribution ``omcm-<name>`` into the folder ``site``.

    A real distribution (a dist-info with METADATA and an ``omcm`` entry point,
    the module ``omcm_<name>.py`` beside it): put ``site`` on ``PYTHONPATH`` and
    ``run_hook`` finds the plugin as an installed one would be found.
    Returns the module's path, to edit it in a test.
    """
    module = site / f"omcm_{name}.py"
    dist = site / f"omcm_{name}-{version}.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    module.write_text(source)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: omcm-{name}\nVersion: {version}\n")
    (dist / "entry_points.txt").write_text(f"[omcm]\n{name} = omcm_{name}\n")
    return module


def run_hook(
    payload: Any,
    env: Mapping[str, str] | None = None,
    event: str | None = None,
    timeout: float = 60,
    cwd: str | None = None,
    strict: bool = True,
) -> subprocess.CompletedProcess:
    """Run ``python -m omcm_core hook [event]`` with ``payload`` on stdin, as Claude Code does.

    The warm dispatcher is off (``OMCM_DAEMON=0``) unless ``env`` turns it on,
    so a test leaves no background process behind; tests of the daemon path pass
    ``OMCM_DAEMON=1`` and stop it with ``omcm_core._runtime.daemon.stop``.

    ``strict`` (the default): when a plugin raised or returned something not a
    ``Result`` during the call, raise :class:`PluginFailed` with the error the
    core logged (the subprocess still answered without it); when the context
    budget cut a plugin's ``additional_context``, raise :class:`ContextCut`. It reads the log of
    the ``OMCM_HOME`` the hook ran with, so only when one is set; a plugin that
    overran is not reported here (a loaded test machine would make that flaky).
    ``strict=False`` returns the process whatever the plugins did.
    """
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    argv = [sys.executable, "-m", "omcm_core", "hook"] + ([event] if event else [])
    full_env = {**os.environ, "OMCM_DAEMON": "0", **(env or {})}
    log = Path(full_env["OMCM_HOME"]) / "logs" / "omcm.jsonl" if strict and full_env.get("OMCM_HOME") else None
    start = size_of(log)
    proc = subprocess.run(argv, input=raw, capture_output=True, env=full_env, timeout=timeout, cwd=cwd)
    if log is not None:
        for line in logged_failures(log, start):
            if line.get("event") == "context_cut":
                raise_context_cut(line)
            raise PluginFailed(
                f"omcm plugin {line.get('plugin')!r} failed in its {line.get('hook')} hook ({line.get('kind')}): "
                f"{line.get('error')} (omcm_dispatch shows the traceback; run_hook(..., strict=False) isolates it)"
            )
    return proc
