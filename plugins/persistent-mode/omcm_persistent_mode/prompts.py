"""The texts this plugin gives Claude: mode prompts, skill prompts, the verifier request, reminders.

Written as facts about the session (what the user asked for and how the loop
works), not as "system" orders, which Claude Code's guidance warns may read as
prompt injection.
"""

from __future__ import annotations

PROMISE = "<promise>TASK_COMPLETE</promise>"

ULTRAWORK = """[persistent-mode: ultrawork]
The user asked for ultrawork on this task: maximum throughput, nothing left half done.
- Parallelism: run independent steps at once: several tool calls in one message, several Agent subagents at once for separate searches, modules or checks.
- Delegation: hand exploration, research and verification to subagents and keep the main thread for decisions and edits.
- Background work: start long builds, test runs and servers in the background (Bash `run_in_background`, background agents) and keep working while they run.
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


def usage(mode: str) -> str:
    """What Claude is told when a loop command came without a task (none was started)."""
    return (
        f"[persistent-mode] /{mode} came without a task, so no loop was started. "
        f"Usage: /{mode} TASK (add --prd for a PRD with user stories), e.g. /{mode} make the test suite pass. "
        "Ask the user what the loop should work on."
    )


MODE_PROMPTS = {"ultrawork": ULTRAWORK, "ralph-loop": RALPH_LOOP, "ultrawork-ralph": ULTRAWORK_RALPH}

HINTS = {
    "search": "[persistent-mode: search] The user wants a thorough search: search broadly (several patterns and spellings in parallel, an Explore subagent for wide questions) before concluding something does not exist.",
    "analyze": "[persistent-mode: analyze] The user wants an analysis: gather evidence first (read the relevant code, logs, history), then state findings with the file and line they rest on.",
}

SKILLS = {
    "frontend-ui-ux": """[skill: frontend-ui-ux]
For UI work in this session, design like a designer, not a template:
- Typography: distinctive, readable fonts with a clear hierarchy (size, weight, spacing), not the framework default everywhere.
- Colour: one cohesive palette (a primary, an accent, neutrals, semantic colours) used consistently, with enough contrast in light and dark mode.
- Micro-interactions: hover, focus and active states on everything interactive; small, purposeful transitions (150-300 ms) that explain a change rather than decorate it.
- Layout: consistent spacing scale; check the result at mobile and desktop widths.
- Avoid the generic look (stock gradients, identical cards, centred everything): give the page a point of view.""",
    "git-master": """[skill: git-master]
For git work in this session:
- Hard rule, atomic commits: one logical change per commit. 3+ files changed → at least 2 commits; 5+ files → at least 3; 10+ files → at least 5. Split by concern (refactor, feature, tests, docs), never by "everything at once".
- Commit style: detect it before writing (`git log --oneline -20`): semantic (`feat:`, `fix(scope):`), plain sentences, or short subjects, and follow it.
- Language: write messages in the language the history uses (e.g. Korean or English), whatever language the user writes in.
- Safe history: never rewrite pushed history or force-push without the user's explicit consent (then `--force-with-lease`, never `--force`); rebase, squash and amend only local, unpublished commits; never commit secrets or generated files.""",
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
