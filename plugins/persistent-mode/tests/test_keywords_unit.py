"""Mode keywords, skills and the rotation of continuation messages, table-driven."""

import pytest
from omcm_persistent_mode import keywords, messages, skills

K = keywords


@pytest.mark.parametrize(
    "prompt, mode, task",
    [
        ("/ralph-loop build a todo API", K.RALPH, "build a todo API"),
        ("/omcm:ralph-loop build a todo API", K.RALPH, "build a todo API"),  # the plugin route's command name
        ("/omcm:ultrawork-ralph refactor auth", K.ULTRAWORK_RALPH, "refactor auth"),
        ("/omcm:ultrawork refactor auth", K.ULTRAWORK, "refactor auth"),
        ("ralph-loop: build a todo API", K.RALPH, "build a todo API"),
        ("  /ralph-loop: Build it", K.RALPH, "Build it"),
        ("/ultrawork-ralph refactor auth", K.ULTRAWORK_RALPH, "refactor auth"),
        ("ultrawork-ralph: refactor auth", K.ULTRAWORK_RALPH, "refactor auth"),
        ("ultrawork: implement dark mode", K.ULTRAWORK, "implement dark mode"),
        ("/ultrawork implement dark mode", K.ULTRAWORK, "implement dark mode"),
        ("ulw: fix the tests", K.ULTRAWORK, "fix the tests"),
        ("fix all the lint errors ulw", K.ULTRAWORK, "fix all the lint errors"),
        ("uw port the parser", K.ULTRAWORK, "port the parser"),
        ("ULTRAWORK this refactor.", K.ULTRAWORK, "this refactor."),
        ("do it, uw.", K.ULTRAWORK, "do it, ."),
        # not keywords: inside words, paths, file names, identifiers, code
        ("restart uwsgi please", None, "restart uwsgi please"),
        ("look at src/uw/main.py", None, "look at src/uw/main.py"),
        ("open uw.py and fix it", None, "open uw.py and fix it"),
        ("rename my-ulw-helper", None, "rename my-ulw-helper"),
        ("the flag is `ultrawork` in config", None, "the flag is in config"),
        ("```\nultrawork: x\n```\nwhat does this do?", None, "what does this do?"),
        ("see https://example.com/ralph-loop docs", None, "see https://example.com/ralph-loop docs"),
        ("tell me about ralph-loop", None, "tell me about ralph-loop"),
        ("/ralph build it", K.RALPH, "build it"),
        ("/ralph-wiggum quotes", None, "/ralph-wiggum quotes"),
        ("/ultrawork-mode on", None, "/ultrawork-mode on"),
        ("", None, ""),
    ],
)
def test_modes_and_clean_task(prompt, mode, task):
    found = keywords.detect(prompt)
    assert (found.mode, found.task, found.cancel) == (mode, task, False)


@pytest.mark.parametrize(
    "prompt, hints",
    [
        ("find where the config is loaded", ("search",)),
        ("deepsearch the repo for retries", ("search",)),
        ("analyze and investigate the crash", ("analyze",)),
        ("search and analyze the logs", ("search", "analyze")),
        ("run research.py", ()),
        ("open search_index.py and src/find/x.ts", ()),
        ("`find . -name x` fails", ()),
    ],
)
def test_search_and_analyze_hints(prompt, hints):
    assert keywords.detect(prompt).hints == hints


@pytest.mark.parametrize(
    "prompt",
    ["/cancel-ralph", "  /cancel-ralph now", "/cancel-ultrawork", "/omcm:cancel-ralph", "/omcm:cancel-ultrawork"],
)
def test_cancel(prompt):
    assert keywords.detect(prompt).cancel is True


def test_cancel_only_at_the_start():
    assert keywords.detect("how does /cancel-ralph work?").cancel is False
    assert keywords.detect("/cancel-ralph-notes").cancel is False


@pytest.mark.parametrize(
    "prompt, skill",
    [
        ("Create a React button component", skills.FRONTEND),
        ("make the modal responsive on mobile", skills.FRONTEND),
        ("add a dark mode toggle", skills.FRONTEND),
        ("commit the button component changes", skills.GIT),  # git wins over frontend
        ("open a pull request", skills.GIT),
        ("rebase onto main and squash", skills.GIT),
        ("fix the parser crash", None),
        ("read src/ui/git/x.py", None),  # path segments are not keywords
        ("build a guide", None),  # "ui" inside a word
        ("`git log` shows nothing", None),
    ],
)
def test_skills(prompt, skill):
    assert skills.detect(prompt) == skill


@pytest.mark.parametrize(
    "mode, counter, title",
    [
        (messages.TODO, 0, "System Reminder"),
        (messages.TODO, 1, "Boulder Never Stops"),
        (messages.TODO, 4, "Task Persistence Active"),
        (messages.TODO, 5, "System Reminder"),
        (messages.RALPH, 1, "The Promise Binds You"),
        (messages.RALPH, 7, "Persistence Required"),
        (messages.ULTRAWORK_RALPH, 3, "Maximum Intensity"),
        (messages.ULTRAWORK, 2, "Ultrawork Persistence"),
    ],
)
def test_rotation(mode, counter, title):
    assert messages.continuation(mode, counter, messages.Progress()).startswith(f"[{title}]")


def test_every_pool_variant_differs_and_consecutive_messages_differ():
    for mode, pool in messages.POOLS.items():
        texts = [messages.continuation(mode, i, messages.Progress()) for i in range(len(pool))]
        assert len(set(texts)) == len(pool)


@pytest.mark.parametrize(
    "progress, lines",
    [
        (messages.Progress(2, 5, "Write tests"), ["[2/5 completed, 3 remaining]", "Next task: Write tests"]),
        (messages.Progress(None, None, None, 3, 50), ["Iteration 3/50"]),
        (messages.Progress(0, 1, None, 1, 2), ["[0/1 completed, 1 remaining]", "Iteration 1/2"]),
    ],
)
def test_progress_lines(progress, lines):
    text = messages.continuation(messages.RALPH, 0, progress)
    for line in lines:
        assert line in text.splitlines()
    assert "<promise>TASK_COMPLETE</promise>" in text
    assert "<promise>" not in messages.continuation(messages.TODO, 0, progress)
