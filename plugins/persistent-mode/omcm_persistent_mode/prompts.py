"""The texts this plugin gives Claude: mode prompts, skill prompts, the verifier request, reminders.

Written as facts about the session (what the user asked for and how the loop
works), not as "system" orders, which Claude Code's guidance warns may read as
prompt injection.
"""

from __future__ import annotations

PROMISE = "<promise>TASK_COMPLETE</promise>"

ULTRAWORK = """[persistent-mode: ultrawork]
The user asked for ultrawork on this task: maximum throughput.
- Run independent steps in parallel: several tool calls in one message, several Agent subagents at once for separate searches or modules.
- Delegate exploration and research to subagents and keep the main thread for decisions and edits.
- Track the work with the todo list and keep going until every item is completed; a stop with pending todos is answered with a reminder."""

RALPH_LOOP = f"""[persistent-mode: ralph loop]
The user started a ralph loop: the session continues, turn after turn, until the task is really done.
- Each time you stop, the loop hands the task back (iteration N of a fixed maximum) unless your final message contains {PROMISE}.
- Write {PROMISE} only when everything is done and checked; a completion claim is then verified against the PRD.
- Keep the plan in .omc/prd.json: {{"project": ..., "userStories": [{{"id": "US-001", "title": ..., "acceptanceCriteria": [...], "passes": false}}]}}; set "passes": true as each story is done, or report it in your message as <story-done>US-001</story-done> and the loop marks it.
- While any PRD story is open the loop does not end, even on a verifier's approval.
- The user can stop the loop with /cancel-ralph or `omcm ralph cancel`."""

ULTRAWORK_RALPH = RALPH_LOOP.replace("[persistent-mode: ralph loop]", "[persistent-mode: ultrawork + ralph loop]") + (
    "\n- Ultrawork applies as well: parallel tool calls and parallel subagents wherever steps are independent."
)

MODE_PROMPTS = {"ultrawork": ULTRAWORK, "ralph-loop": RALPH_LOOP, "ultrawork-ralph": ULTRAWORK_RALPH}

HINTS = {
    "search": "[persistent-mode: search] The user wants a thorough search: search broadly (several Grep/Glob patterns in parallel, an Explore subagent for wide questions) before concluding something does not exist.",
    "analyze": "[persistent-mode: analyze] The user wants an analysis: gather evidence first (read the relevant code, logs, history), then state findings with the file and line they rest on.",
}

SKILLS = {
    "frontend-ui-ux": """[skill: frontend-ui-ux]
For UI work in this session: choose distinctive, readable fonts and one cohesive colour palette; give interactive elements hover/focus states and small, purposeful transitions; check responsive layouts at mobile and desktop widths; avoid generic template look-alikes.""",
    "git-master": """[skill: git-master]
For git work in this session: one logical change per commit (3+ files changed usually means 2+ commits, 5+ files 3+ commits); match the repository's existing commit style (check `git log --oneline -15`: semantic prefixes, plain sentences or short subjects) and its language; never rewrite pushed history or force-push without the user's explicit consent; prefer `git rebase` only on local, unpublished branches.""",
}

CANCELLED = "[persistent-mode] The user cancelled the persistent modes (ralph loop, ultrawork, todo continuation) for this session. Stopping is fine now."

VERIFY = """[persistent-mode: ralph verification {attempt}/{max_attempts}]
You claimed the task is complete. Before the loop ends, verify the claim (ideally with a verifier subagent: Agent tool, a fresh context, asked to check the work against the PRD below):
1. Are ALL acceptance criteria in the PRD met?
2. Is the implementation complete, not partial?
3. Are there obvious errors or issues (run the tests)?
4. Would this be considered "done" by professional standards?
Then end your message with <oracle-approved> if it all holds, or <oracle-rejected> followed by what is missing, and keep working on it.
{prd}"""

REJECTED = (
    "[persistent-mode: ralph loop] The verification rejected the completion claim:\n{feedback}\nFix what is missing, then claim completion again with "
    + PROMISE
    + "."
)

PRD_CREATED = (
    "The user asked for a PRD: .omc/prd.json now holds {count} user stor{count_plural} taken from the task, with no "
    "acceptance criteria yet. First refine it: split the work into small stories, each with testable acceptanceCriteria."
)
PRD_EXISTS = "The user asked for a PRD: .omc/prd.json already exists and is kept as it is; bring it up to date with this task first."
APPROVAL_REFUSED = (
    "[persistent-mode: ralph loop] The verification approved, but {count} PRD stor{plural} still open in "
    '.omc/prd.json: {stories}. Finish them (or, if one is done, set "passes": true or report <story-done>ID</story-done>), '
    "then claim completion again with " + PROMISE + "."
)
AUTO_APPROVED = "persistent-mode: the ralph loop ended after {attempts} verification requests without a verdict; the completion claim was accepted unverified."
CLIENT_CAP = (
    "persistent-mode paused: Claude Code allows {cap} Stop continuations in a row "
    "(CLAUDE_CODE_STOP_HOOK_BLOCK_CAP). The mode is still on: send any message to go on, raise that "
    "limit for longer runs, or /cancel-ralph to end it."
)
TODO_LIMIT = (
    "persistent-mode: todo continuation stopped after {why}; {pending} of {total} todos are still open. "
    "Send a message to go on."
)
SESSION_LIMIT = (
    "persistent-mode: this session reached its limit of {limit} continuations "
    "([persistent-mode] max_session_continuations); stops are no longer blocked."
)
MAX_ITERATIONS = (
    "persistent-mode: the ralph loop stopped at its limit of {max} iterations without a completion promise."
)

AGENT_REMINDER = """[persistent-mode: agent usage] {count} direct search/read calls ({tools}) in this session so far. Wide searches and research run faster and keep this context smaller when delegated: start several Agent subagents in parallel (for example subagent_type "Explore" for the codebase, a general one for web research), each with one focused question, and work on their summaries."""

RECOVERY = "[persistent-mode: recovery] The previous turn ended on an API error ({error}) at {at} UTC, so its work may be unfinished. Check what was done (files, todos) and continue where it stopped."
RECOVERY_RALPH = " A ralph loop is active: iteration {iteration} of {max}, task: {task}"
