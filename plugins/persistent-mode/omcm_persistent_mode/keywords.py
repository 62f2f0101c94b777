"""Mode keywords in the user's prompt, free of I/O.

Code is stripped first (fenced blocks and inline spans), so a keyword quoted in
code never switches a mode on. Words match only as whole words that are not
part of a path, a file name or an identifier: ``uw`` in ``uwsgi``,
``src/uw/main.py``, ``uw.py`` or ``search_index`` is not a keyword.
"""

from __future__ import annotations

import re

from attrs import frozen

ULTRAWORK, RALPH, ULTRAWORK_RALPH = "ultrawork", "ralph-loop", "ultrawork-ralph"

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE = re.compile(r"`[^`\n]*`")

# A command opens the prompt: "/ralph-loop task", "ralph-loop: task"; on the Claude Code
# plugin route the client names plugin commands with the plugin's name: "/omcm:ralph-loop task".
_COMMANDS = [
    (ULTRAWORK_RALPH, re.compile(r"^\s*(?:/(?:omcm:)?ultrawork-ralph(?![\w-])|ultrawork-ralph\s*:)", re.I)),
    (RALPH, re.compile(r"^\s*(?:/(?:omcm:)?ralph-loop(?![\w-])|ralph-loop\s*:|/ralph(?![\w-]))", re.I)),
    (ULTRAWORK, re.compile(r"^\s*(?:/(?:omcm:)?(?:ultrawork|ulw)(?![\w-])|(?:ultrawork|ulw|uw)\s*:)", re.I)),
]
_CANCEL = re.compile(r"^\s*/(?:omcm:)?cancel-(?:ralph|ultrawork)(?![\w-])", re.I)


def _word(alternatives: str) -> re.Pattern[str]:
    # Not after a word character, slash, backslash, dot or dash; not before a word
    # character, slash, backslash, dash, or a dot that continues a name (uw.py).
    return re.compile(rf"(?<![\w/\\.\-])(?:{alternatives})(?![\w/\\\-]|\.\w)", re.I)


_ULTRAWORK_WORD = _word("ultrawork|ulw|uw")
HINTS = {
    "search": _word("deepsearch|deep search|search|find"),
    "analyze": _word("analyze|analyse|investigate"),
}


@frozen
class Detection:
    """What a prompt asks for. ``mode`` is None when no mode keyword is present."""

    mode: str | None = None
    task: str = ""
    cancel: bool = False
    hints: tuple = ()


def strip_code(text: str) -> str:
    """The prompt without fenced code blocks and inline code spans."""
    return _INLINE.sub(" ", _FENCED.sub(" ", text))


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" \t\n:-")


def detect(prompt: str) -> Detection:
    """Find the mode, the clean task and the search/analyze hints in ``prompt``."""
    text = strip_code(prompt or "")
    if _CANCEL.match(text):
        return Detection(cancel=True)
    hints = tuple(name for name, pattern in HINTS.items() if pattern.search(text))
    for mode, pattern in _COMMANDS:
        match = pattern.match(text)
        if match:
            return Detection(mode=mode, task=_clean(text[match.end() :]), hints=hints)
    if _ULTRAWORK_WORD.search(text):
        return Detection(mode=ULTRAWORK, task=_clean(_ULTRAWORK_WORD.sub(" ", text)), hints=hints)
    return Detection(task=_clean(text), hints=hints)
