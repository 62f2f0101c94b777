"""Gemini CLI (0.61): its own event names, its own deny form.

- Events: ``BeforeTool`` -> PreToolUse, ``AfterTool`` -> PostToolUse,
  ``BeforeAgent`` -> UserPromptSubmit, ``AfterAgent`` -> Stop, ``PreCompress`` ->
  PreCompact; SessionStart and SessionEnd keep their names.
- ``tool_response`` is an object with ``llmContent``: its text becomes Claude's
  ``{"output": text}``; the raw value stays readable as ``extra["gemini_tool_response"]``.
- Only ``{"decision": "deny"|"block", "reason"}`` denies quietly (Claude's
  ``permissionDecision`` is ignored; exit 2 shows as a failed hook), so a deny or
  ask is rendered that way, always with exit 0.
- BeforeTool context does not reach the model (AfterTool's does): held for the
  same call's AfterTool (``context_moves``; AfterTool's delivery not yet verified in the CLI).
"""

from __future__ import annotations

import json

from omcm_core.agents.base import Agent, Answer, with_output

EVENTS = {
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "BeforeAgent": "UserPromptSubmit",
    "AfterAgent": "Stop",
    "PreCompress": "PreCompact",
}


def normalize(payload: dict) -> dict | None:
    out = dict(payload)
    name = out.get("hook_event_name")
    if isinstance(name, str):
        out["hook_event_name"] = EVENTS.get(name, name)
    return with_output(out, "gemini_tool_response")


def render(event_name: str, response: dict | None) -> Answer:
    if response is None:
        return b"", 0
    answer = dict(response)
    specific = answer.get("hookSpecificOutput")
    if event_name == "PreToolUse" and isinstance(specific, dict):
        decision = specific.get("permissionDecision")
        if decision in ("deny", "ask"):  # no "ask" in Gemini: a guard that asks must still stop the call
            answer["decision"] = "deny"
            answer["reason"] = specific.get("permissionDecisionReason") or "denied by an omcm plugin"
        specific = {k: v for k, v in specific.items() if k not in ("permissionDecision", "permissionDecisionReason")}
        answer["hookSpecificOutput"] = {**specific, "hookEventName": "BeforeTool"}
        if len(answer["hookSpecificOutput"]) == 1:
            del answer["hookSpecificOutput"]
    return json.dumps(answer).encode("ascii"), 0


AGENT = Agent(
    name="gemini",
    events=EVENTS,
    normalize=normalize,
    render=render,
    context_moves={"PreToolUse": "PostToolUse"},
)
