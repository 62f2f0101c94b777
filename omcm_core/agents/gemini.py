"""Gemini CLI (0.61): its own event names, its own deny form.

Measured with 0.61.0 against a fake model (tests/e2e/test_gemini_e2e.py, issue 37):

- Events: ``BeforeTool`` -> PreToolUse, ``AfterTool`` -> PostToolUse,
  ``BeforeAgent`` -> UserPromptSubmit, ``AfterAgent`` -> Stop, ``PreCompress`` ->
  PreCompact; SessionStart, SessionEnd and Notification keep their names.
  Answers name Gemini's event in ``hookEventName``.
- ``tool_response`` is an object with ``llmContent``: its text becomes Claude's
  ``{"output": text}``; the raw value stays readable as ``extra["gemini_tool_response"]``.
- Tool calls carry no id: ``extra["agent_call"]`` (``base.call_key``, a digest of
  the tool and its input) keys the context held between BeforeTool and AfterTool;
  AfterTool carries the input the call ran with, so a plugin's rewrite moves the
  key (``agents._hold``). ``tool_use_id`` stays None, as Gemini sends none.
- In a headless run SessionStart's context is prepended to the prompt as
  ``<hook_context>…</hook_context>``: BeforeAgent's ``prompt`` is the user's own
  text without it (the whole as ``extra["gemini_prompt"]``), so a keyword in
  omcm's own context never reads as the user's.
- Only ``{"decision": "deny"|"block", "reason"}`` denies quietly (Claude's
  ``permissionDecision`` is ignored; exit 2 shows as a failed hook), so a deny or
  ask is rendered that way, always with exit 0. ``updatedInput`` becomes
  ``hookSpecificOutput.tool_input`` (merged into the call's arguments).
- AfterTool's ``decision: deny`` *replaces* the tool's result, while Claude's
  PostToolUse ``block`` only adds its reason: rendered as additionalContext.
- BeforeTool context does not reach the model (AfterTool's does, appended to
  the tool's result): held for the same call's AfterTool (``context_moves``).
"""

from __future__ import annotations

import json
import re

from omcm_core.agents.base import Agent, Answer, call_key, with_output

EVENTS = {
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "BeforeAgent": "UserPromptSubmit",
    "AfterAgent": "Stop",
    "PreCompress": "PreCompact",
}
#: Events both agents name alike.
SAME = ("SessionStart", "SessionEnd", "Notification")
#: omcm's (Claude's) event name -> Gemini CLI's, for the events Gemini CLI has.
GEMINI_NAMES = {**{claude: gemini for gemini, claude in EVENTS.items()}, **{name: name for name in SAME}}

_HOOK_CONTEXT = re.compile(r"\A(?:<hook_context>.*?</hook_context>\s*)+", re.DOTALL)


def normalize(payload: dict) -> dict | None:
    out = dict(payload)
    name = out.get("hook_event_name")
    if isinstance(name, str):
        out["hook_event_name"] = EVENTS.get(name, name)
    if "tool_name" in out and "tool_use_id" not in out:
        out["agent_call"] = call_key(out.get("tool_name"), out.get("tool_input"))
    prompt = out.get("prompt")
    if out.get("hook_event_name") == "UserPromptSubmit" and isinstance(prompt, str):
        own = _HOOK_CONTEXT.sub("", prompt, count=1)
        if own != prompt:
            out["prompt"], out["gemini_prompt"] = own, prompt
    return with_output(out, "gemini_tool_response")


def render(event_name: str, response: dict | None) -> Answer:
    if response is None:
        return b"", 0
    answer = dict(response)
    specific = answer.get("hookSpecificOutput")
    specific = dict(specific) if isinstance(specific, dict) else None
    if event_name == "PreToolUse" and specific is not None:
        decision = specific.pop("permissionDecision", None)
        reason = specific.pop("permissionDecisionReason", None)
        if decision in ("deny", "ask"):  # no "ask" in Gemini: a guard that asks must still stop the call
            answer["decision"] = "deny"
            answer["reason"] = reason or "denied by an omcm plugin"
        if "updatedInput" in specific:
            specific["tool_input"] = specific.pop("updatedInput")
    if event_name in ("PostToolUse", "PostToolUseFailure") and answer.get("decision") == "block":
        del answer["decision"]
        reason = answer.pop("reason", None)
        if reason:
            specific = specific or {}
            earlier = specific.get("additionalContext")
            specific["additionalContext"] = str(reason) + ("\n\n" + earlier if earlier else "")
    if specific is not None:
        specific["hookEventName"] = GEMINI_NAMES.get(event_name, event_name)
        if set(specific) == {"hookEventName"}:
            answer.pop("hookSpecificOutput", None)
        else:
            answer["hookSpecificOutput"] = specific
    return json.dumps(answer).encode("ascii"), 0


AGENT = Agent(
    name="gemini",
    events=EVENTS,
    normalize=normalize,
    render=render,
    context_moves={"PreToolUse": "PostToolUse"},
)
