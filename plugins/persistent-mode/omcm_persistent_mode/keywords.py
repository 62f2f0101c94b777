"""Mode keywords and search/analyze hints in the user's prompt, free of I/O.

Only the prompt's own prose counts (:func:`prose`): code (fenced blocks and
inline spans), quoted text, URLs, paths and file names, and markup tags are
removed first, so a keyword quoted, pasted or named in a path never switches
anything on. Words match as whole words only (``uw`` in ``uwsgi`` or
``search_index`` is not a keyword), and each kind where it states an intent:

- commands (``/ralph-loop``, ``ultrawork:``...) open the prompt;
- ``ultrawork`` anywhere but in a question about it; the short ``ulw``/``uw``
  only at the prompt's start or end;
- ``search``/``find``/``analyze``/``investigate`` as the verb that opens a
  clause, after a polite "please", "can you"... ("find where X is loaded", not
  "the find dialog"; "find out why" is an analysis); ``deepsearch`` anywhere.

Each keyword can be switched off in the config (``disabled_keywords``).
"""

from __future__ import annotations

import re

from attrs import frozen

ULTRAWORK, RALPH, ULTRAWORK_RALPH = "ultrawork", "ralph-loop", "ultrawork-ralph"
#: The names ``disabled_keywords`` accepts.
KEYWORDS = ("ultrawork", "ulw", "uw", "ralph-loop", "ultrawork-ralph", "cancel", "search", "analyze")

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE = re.compile(r"`[^`\n]*`")
# Every pattern here scans each character a bounded number of times (issue 34: a scan that
# backtracked over a run of "a.a.a…" took 65 s for 100 KB): runs are atomic (a look-ahead captures the run and a
# back-reference takes it whole: the possessive ``*+`` of Python 3.11, which 3.10 lacks) or
# start only where a run starts, and a span stops at the next opening mark of its kind.
# Quoted spans: "...", “...”, «...», and '...' opened after a non-word character (not an apostrophe).
_QUOTED = re.compile(r"\"[^\"\n]{0,400}\"|“[^“”\n]{0,400}”|«[^«»\n]{0,400}»|(?<!\w)'[^'\n]{1,400}'(?!\w)")
_TAGS = re.compile(r"</?[A-Za-z](?=(?P<n>[\w:-]*))(?P=n)(?:\s[^<>]{0,200})?>")
# A scheme is short: bounding it keeps a run like "a.a.a…" from being rescanned at each letter.
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}://\S+", re.I)
# A token with a slash or backslash inside (a path): from the token's start to its first slash.
_SLASHED = re.compile(r"(?<!\S)(?=(?P<a>[^\s/\\]*))(?P=a)[/\\](?=(?P<b>\S*))(?P=b)")
_NAME_CHAR = re.compile(r"[\w.-]")
# A name with an extension (uw.py, search.ts), tried only where a run of name characters starts.
_NAME_EXT = re.compile(r"(?<![\w-])(?=(?P<a>-*))(?P=a)\w(?=(?P<b>[\w-]*))(?P=b)\.[A-Za-z]\w{0,6}\b")
_SPACES = re.compile(r"\s+")
_BLANK_RUN = re.compile(r"[^\S\n]+")
_NEWLINE_RUN = re.compile(r" ?\n(?=(?P<s>\s*))(?P=s)")  # after _BLANK_RUN: a run holding a newline becomes one

# A command opens the prompt: "/ralph-loop task", "ralph-loop: task"; on the Claude Code
# plugin route the client names plugin commands with the plugin's name: "/omcm:ralph-loop task".
_COMMANDS = [
    (
        ULTRAWORK_RALPH,
        "ultrawork-ralph",
        re.compile(r"^\s*(?:/(?:omcm:)?ultrawork-ralph(?![\w-])|ultrawork-ralph\s*:)", re.I),
    ),
    (RALPH, "ralph-loop", re.compile(r"^\s*(?:/(?:omcm:)?ralph-loop(?![\w-])|ralph-loop\s*:|/ralph(?![\w-]))", re.I)),
    (ULTRAWORK, "ultrawork", re.compile(r"^\s*(?:/(?:omcm:)?ultrawork(?![\w-])|ultrawork\s*:)", re.I)),
    (ULTRAWORK, "ulw", re.compile(r"^\s*(?:/(?:omcm:)?ulw(?![\w-])|ulw\s*:)", re.I)),
    (ULTRAWORK, "uw", re.compile(r"^\s*uw\s*:", re.I)),
]
_CANCEL = re.compile(r"^\s*/(?:omcm:)?cancel-(?:ralph|ultrawork)(?![\w-])", re.I)


def _word(alternatives: str) -> re.Pattern[str]:
    # Not after a word character, slash, backslash, dot or dash; not before a word
    # character, slash, backslash, dash, or a dot that continues a name (uw.py).
    return re.compile(rf"(?<![\w/\\.\-])(?:{alternatives})(?![\w/\\\-]|\.\w)", re.I)


_ULTRAWORK_WORD = _word("ultrawork")
_SHORT = {"ulw": _word("ulw"), "uw": _word("uw")}
_SHORT_AT_EDGE = {
    name: (re.compile(rf"^\W*{name}(?![\w/\\.\-])", re.I), re.compile(rf"(?<![\w/\\.\-]){name}\W*$", re.I))
    for name in _SHORT
}

# Where a clause starts, and the polite or connective words that may come before its verb.
_CLAUSES = re.compile(r"[.!?;:\n]+|,\s+|\s+(?:and|then|also|but)\s+", re.I)
_LEAD = re.compile(
    r"^(?:please|pls|plz|kindly|now|first|next|ok(?:ay)?|so|then|also|and|but|just|quickly|"
    r"(?:can|could|would|will) (?:you|we)|i (?:want|need|would like|'d like) (?:you )?to|"
    r"help me|let'?s|go(?: and)?|try (?:to|and))\s+",
    re.I,
)
# All lead words at once ("please now just find ..."): stripping one per pass copied the clause per word.
_LEADS = re.compile(r"^(?:" + _LEAD.pattern[1:] + r")+", re.I)
_INTENT = {
    "search": re.compile(r"^(?:deep[ -]?search|search|find(?! out\b)|look for|locate|hunt down)\b", re.I),
    "analyze": re.compile(
        r"^(?:analy[sz]e|investigate|root-cause|diagnose|(?:find|figure|work) out (?:why|how|what))\b", re.I
    ),
}
# Every word an _INTENT verb starts with: a prompt without one has no clause to look at.
_VERB_WORDS = re.compile(
    r"\b(?:deep[ -]?search|search|find|look|locate|hunt|analy[sz]e|investigate|root-cause|diagnose|figure|work)", re.I
)
_ANYWHERE = {"search": _word("deepsearch|deep search|websearch|web search"), "analyze": None}
HINTS = tuple(_INTENT)


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


def _path(m: re.Match[str]) -> str:
    """A token is a path when a name character follows a slash in it (``a/b``, ``..\\x``; not ``and/``)."""
    token = m.group(0)
    first = min(i for i in (token.find("/"), token.find("\\")) if i >= 0)
    return " " if _NAME_CHAR.search(token, first + 1) else token


def _name(m: re.Match[str]) -> str:
    # Leading dashes stay, as the word-boundary form left them ("-uw.py" -> "- ").
    return m.group(0)[: len(m.group(0)) - len(m.group(0).lstrip("-"))] + " "


def prose(text: str) -> str:
    """The prompt's own words: no code, quotes, markup, URLs, paths or file names.

    Runs of white space become one space or one newline, so that later scans
    never meet a long run of it.
    """
    text = strip_code(text or "")
    # Each pattern runs only when the text holds a character it needs (most prompts lack most).
    if "<" in text:
        text = _TAGS.sub(" ", text)
    if "://" in text:
        text = _URL.sub(" ", text)
    if any(q in text for q in "\"“«'"):
        text = _QUOTED.sub(" ", text)
    if "/" in text or "\\" in text:
        text = _SLASHED.sub(_path, text)
    if "." in text:
        text = _NAME_EXT.sub(_name, text)
    return _NEWLINE_RUN.sub("\n", _BLANK_RUN.sub(" ", text))


_LEADING = re.compile(r"^(?:-+(?=\s)|[\s:])+")


def _clean(text: str) -> str:
    # A lone dash is a separator ("uw - fix it"); a flag like --prd stays.
    text = _LEADING.sub("", _SPACES.sub(" ", text))
    end = len(text)
    while end:  # the trailing separators, by hand: a pattern anchored at the end is tried at every position
        if text[end - 1] in " :":
            end -= 1
            continue
        start = len(text[:end].rstrip("-"))
        if start == end or not start or text[start - 1] != " ":
            break
        end = start
    return text[:end]


def _clause_starts(text: str) -> list:
    starts = []
    for clause in _CLAUSES.split(text):
        clause = _LEADS.sub("", clause.strip(" \t\"'()[]*-_>#"), count=1)  # every lead word in one pass
        if clause:
            starts.append(clause)
    return starts


def hints(text: str, disabled: frozenset = frozenset()) -> tuple:
    """The hints ``text`` (already :func:`prose`) asks for, by intent position."""
    # Splitting into clauses costs Python work per clause: skip it when no verb can open one.
    starts = _clause_starts(text) if _VERB_WORDS.search(text) else []
    found = []
    for name, verb in _INTENT.items():
        if name in disabled:
            continue
        anywhere = _ANYWHERE[name]
        if any(verb.match(s) for s in starts) or (anywhere is not None and anywhere.search(text)):
            found.append(name)
    return tuple(found)


def _ultrawork(text: str, disabled: frozenset) -> re.Pattern[str] | None:
    """The pattern of the ultrawork keyword stated in ``text``, or None."""
    if "ultrawork" not in disabled:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
            if _ULTRAWORK_WORD.search(sentence) and not sentence.rstrip().endswith("?"):
                return _ULTRAWORK_WORD
    for name, (start, end) in _SHORT_AT_EDGE.items():
        if name not in disabled and (start.search(text) or end.search(text)):
            return _SHORT[name]
    return None


def detect(prompt: str, disabled: frozenset | set | tuple = ()) -> Detection:
    """Find the mode, the clean task and the search/analyze hints in ``prompt``.

    ``disabled`` names keywords (:data:`KEYWORDS`) the user switched off.
    """
    off = frozenset(str(d).lower() for d in disabled)
    code_free = strip_code(prompt or "")
    if "cancel" not in off and _CANCEL.match(code_free):
        return Detection(cancel=True)
    text = prose(prompt or "")
    found_hints = hints(text, off)
    for mode, name, pattern in _COMMANDS:
        if name in off:
            continue
        match = pattern.match(code_free)
        if match:
            return Detection(mode=mode, task=_clean(code_free[match.end() :]), hints=found_hints)
    word = _ultrawork(text, off)
    if word is not None:
        return Detection(mode=ULTRAWORK, task=_clean(word.sub(" ", code_free)), hints=found_hints)
    return Detection(task=_clean(code_free), hints=found_hints)
