"""Which skill a prompt calls for: git work or frontend/UI work (git wins), free of I/O.

The seed's keyword lists, split by how much one word says on its own: a
*strong* word ("git", "rebase", "tailwind", "css") is enough; a *weak* one
("log", "history", "merge", "form", "border", "shadow") is ordinary English
too, so two different weak words of the same skill are needed ("push the
branch to origin", "make the modal responsive"). Only the prompt's prose
counts (see :func:`omcm_persistent_mode.keywords.prose`): nothing in code,
quotes, paths or URLs. Each skill can be switched off (``disabled_skills``).
"""

from __future__ import annotations

import re

from omcm_persistent_mode.keywords import prose

FRONTEND, GIT = "frontend-ui-ux", "git-master"
SKILLS = (GIT, FRONTEND)

GIT_STRONG = (
    "git",
    "commit",
    "rebase",
    "pull request",
    "cherry-pick",
    "stash",
    "bisect",
    "amend",
    "squash",
    "merge conflict",
    "force-push",
    "force push",
)
GIT_WEAK = (
    "push",
    "pull",
    "branch",
    "merge",
    "diff",
    "log",
    "checkout",
    "reset",
    "blame",
    "history",
    "remote",
    "origin",
)
FRONTEND_STRONG = (
    "ui",
    "ux",
    "frontend",
    "front-end",
    "css",
    "scss",
    "tailwind",
    "react",
    "vue",
    "angular",
    "svelte",
    "styled-components",
    "typography",
    "dark mode",
    "light mode",
)
FRONTEND_WEAK = (
    "component",
    "styling",
    "layout",
    "design",
    "button",
    "form",
    "modal",
    "styled",
    "animation",
    "responsive",
    "mobile",
    "desktop",
    "theme",
    "color",
    "colour",
    "font",
    "spacing",
    "margin",
    "padding",
    "gradient",
    "shadow",
    "border",
    "hover",
    "focus",
    # Not in the seed's list: screen furniture that makes a second weak word likely UI work.
    "page",
    "screen",
    "sidebar",
    "navbar",
    "icon",
    "logo",
    "tooltip",
    "dropdown",
    "stylesheet",
)
#: Upper-case "PR"/"PRs" is a pull request; lower-case "pr" is too many other things.
_PR = re.compile(r"(?<![\w/\\.\-])PRs?(?![\w/\\\-])")


def _pattern(words: tuple) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))
    # Whole words (a plural or -ed/-ing form too) outside paths and identifiers.
    return re.compile(rf"(?<![\w/\\.\-])({alternatives})(?:e?s|e?d|ing|ted|ting)?(?![\w/\\\-]|\.\w)", re.I)


_GIT = (_pattern(GIT_STRONG), _pattern(GIT_WEAK))
_FRONTEND = (_pattern(FRONTEND_STRONG), _pattern(FRONTEND_WEAK))


def _calls_for(text: str, strong: re.Pattern[str], weak: re.Pattern[str]) -> bool:
    if strong.search(text):
        return True
    return len({m.group(1).lower() for m in weak.finditer(text)}) >= 2


def detect(prompt: str, disabled: frozenset | set | tuple = ()) -> str | None:
    """``git-master``, ``frontend-ui-ux`` or None. Git is more specific, so it wins."""
    text = prose(prompt or "")
    if GIT not in disabled and (_PR.search(text) or _calls_for(text, *_GIT)):
        return GIT
    if FRONTEND not in disabled and _calls_for(text, *_FRONTEND):
        return FRONTEND
    return None
