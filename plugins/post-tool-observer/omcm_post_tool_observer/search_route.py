"""``omcm search`` from the command line without argparse, attrs or the plugin manager (issue 35).

Once omcm's command cache remembers that this plugin offers
``search``, it calls :func:`route` before building any parser. The usual forms
(words, the filters, a mode, ``--json``) are parsed here by hand and answered by
the same :func:`omcm_post_tool_observer.cli.answer` as the argparse route, so the
output is the same byte for byte. Anything else (``--team``, an abbreviated
option, a missing value, words on both sides of an option, two modes) returns
None and argparse parses it as always, with its own messages and exit codes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

#: Options taking a value, and the attribute argparse stores it under.
VALUED = {"--tool": "tool", "--file": "file", "--session": "session", "--limit": "limit"}
#: Flags (store_true); --team is left to argparse (it reads the configuration).
FLAGS = {
    "--failures": "failures",
    "--all-projects": "all_projects",
    "--semantic": "semantic",
    "--hybrid": "hybrid",
    "--full-text": "full_text",
    "--json": "json",
}
MODES = ("semantic", "hybrid", "full_text")


class Args:
    """What ``parser.parse_args`` gives for ``omcm search`` (the attributes :func:`cli.answer` reads)."""

    def __init__(self) -> None:
        self.query: list[str] = []
        self.tool: str | None = None
        self.file: str | None = None
        self.session: str | None = None
        self.failures = False
        self.all_projects = False
        self.limit = 10
        self.semantic = False
        self.hybrid = False
        self.full_text = False
        self.json = False
        self.team = False
        self.stop_server = False


def parse(argv: Sequence[str]) -> Args | None:
    """``argv`` (after ``search``) as argparse would parse it, or None where this parser does not decide."""
    args = Args()
    words: list[str] | None = None  # the one run of words argparse takes as the query
    after_words = False
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if not token.startswith("-"):
            if after_words:
                return None  # words after an option that followed words: argparse's error
            words = words if words is not None else []
            words.append(token)
            continue
        if words is not None:
            after_words = True
        name, eq, value = token.partition("=")
        if name in FLAGS and not eq:
            setattr(args, FLAGS[name], True)
            continue
        if name not in VALUED:
            return None  # -h, --, an abbreviation, --team, a negative number, a typo: argparse decides
        if not eq:
            if index >= len(argv) or argv[index].startswith("-"):
                return None
            value = argv[index]
            index += 1
        if name == "--limit":
            if not (value.isascii() and value.isdigit()):
                return None
            args.limit = int(value)
        else:
            setattr(args, VALUED[name], value)
    if sum(getattr(args, mode) for mode in MODES) > 1:
        return None  # mutually exclusive: argparse says so
    args.query = words or []
    return args


def route(argv: Sequence[str], env: Mapping[str, str], cwd: str, home: Path) -> int | None:
    """Run ``omcm search ARGV`` if :func:`parse` decides it; None to take the argparse route."""
    args = parse(argv)
    if args is None:
        return None
    from omcm_core.paths import project_dir
    from omcm_core.store import Store
    from omcm_post_tool_observer.cli import answer

    store = Store(home)
    try:
        return answer(args, store, project_dir(env, cwd), env)
    finally:
        store.close()
