"""Codex CLI (0.171): Claude Code's hook format and event names; a narrower answer contract.

Measured with 0.171.0 against a fake model (tests/e2e/test_codex_e2e.py and by hand):

- The shell tool arrives as ``Bash`` with ``tool_input.command``; there is no read
  tool (reads are ``cat``, ``sed -n``, ``head``: the payload says ``agent: codex``
  so tool-counter counts them as reads, ``tool_kinds.run_kind``). ``tool_response``
  is a string, normalised to Claude's object shape ``{"output": text}``.
- Deny works in Claude's form (``permissionDecision: "deny"`` with a reason), and
  ``additionalContext`` from PreToolUse, PostToolUse, SessionStart and
  UserPromptSubmit reaches the model. But a PreToolUse answer with
  ``permissionDecision`` ``allow``, ``ask`` or ``defer``, with ``updatedInput``, or
  with ``continue: false`` makes Codex report the hook as failed and run the tool
  anyway, its context lost. So :func:`render` turns ``ask``, an input rewrite
  Codex cannot apply and a halt into a deny (a guard must keep guarding), and
  drops ``allow``/``defer`` (Codex runs the tool either way).
"""

from __future__ import annotations

import json

from omcm_core.agents.base import Agent, Answer

#: The hook events Codex 0.171 runs, by Claude Code's names (its ``HookEventName`` has these and
#: ``PreModelRequest``, ``PostModelRequest``, ``Interrupt``, which Claude Code has not): ``omcm install
#: --agent codex`` registers no other, since Codex would never call it.
HOOK_EVENTS = (
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
)
#: Codex ends a SessionEnd hook after this many seconds whatever the file says.
SESSION_END_MAX_S = 3
DEFAULT_DENY = "stopped by an omcm plugin"


def normalize(payload: dict) -> dict | None:
    out = {**payload, "agent": "codex"}  # plugins see which agent called (``event.extra["agent"]``)
    response = payload.get("tool_response")
    if isinstance(response, str):
        out["tool_response"] = {"output": response}
    return out


def _deny(reason: str) -> dict:
    return {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}


def render(event_name: str, response: dict | None) -> Answer:
    if response is None:
        return b"", 0
    if event_name != "PreToolUse":
        return json.dumps(response).encode("ascii"), 0
    answer = {k: v for k, v in response.items() if k not in ("continue", "stopReason", "suppressOutput")}
    specific = dict(answer.get("hookSpecificOutput") or {})
    decision = specific.pop("permissionDecision", None)
    reason = specific.pop("permissionDecisionReason", None)
    rewrite = specific.pop("updatedInput", None)
    if response.get("continue") is False:
        specific.update(_deny(str(response.get("stopReason") or reason or DEFAULT_DENY)))
    elif decision == "deny":
        specific.update(_deny(str(reason or DEFAULT_DENY)))
    elif decision == "ask":  # Codex has no ask: the call is stopped, the reason says what to confirm
        specific.update(_deny(f"needs your confirmation, which Codex cannot ask for here: {reason or DEFAULT_DENY}"))
    elif rewrite is not None:  # the plugin made the call safe by changing it; Codex cannot apply that
        specific.update(
            _deny(f"an omcm plugin would change this call's input, which Codex cannot do. {reason or ''}".rstrip())
        )
    if set(specific) - {"hookEventName"}:
        answer["hookSpecificOutput"] = {**specific, "hookEventName": "PreToolUse"}
    else:
        answer.pop("hookSpecificOutput", None)
    return (json.dumps(answer).encode("ascii"), 0) if answer else (b"", 0)


AGENT = Agent(name="codex", events={}, normalize=normalize, render=render)
