"""Qwen Code (0.24): Claude Code's hook format, event names and answers.

Differences (measured with 0.24.4 against a fake model, issue 37):

- ``tool_response`` is ``{"llmContent": text, "returnDisplay": ...}``: its text
  becomes Claude's ``{"output": text}``, the raw value ``extra["qwen_tool_response"]``.
- UserPromptSubmit also fires before every later model request of a turn with
  ``prompt: ""``. That is a model-request tick, not a prompt: dropped at the
  edge (no plugin sees it, the answer is empty), so prompt plugins do not react
  to it once per tool call.
- PreToolUse ``additionalContext`` does not reach the model (Qwen Code passes
  it from PostToolUse, SessionStart and UserPromptSubmit): it is held for the
  same call's PostToolUse (``context_moves``, ``agents.held``). Denials work in
  Claude's form.
"""

from __future__ import annotations

from omcm_core.agents.base import Agent, with_output

#: Claude Code's events Qwen Code 0.24.4 fires (its ``HookEventName`` enum, each with a ``fire…Event`` caller).
#: It has no Setup, CwdChanged, FileChanged, ConfigChange, DirectoryAdded, Pre/PostModelSwitch,
#: PreSkillShellCommand, Worktree*, TaskCreated/Completed, TeammateIdle or Elicitation*: ``omcm install
#: --agent qwen`` leaves those out (Qwen warns about an event name it does not know) and doctor says so.
FIRES = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "PermissionRequest",
        "PermissionDenied",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "StopFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "PostCompact",
        "Notification",
        "InstructionsLoaded",
        "MessageDisplay",
    }
)


def normalize(payload: dict) -> dict | None:
    if payload.get("hook_event_name") == "UserPromptSubmit" and payload.get("prompt") in ("", None):
        return None
    return with_output(payload, "qwen_tool_response")


AGENT = Agent(name="qwen", events={}, normalize=normalize, context_moves={"PreToolUse": "PostToolUse"})
