"""Which skill a prompt calls for: git work or frontend/UI work (git wins), free of I/O."""

from __future__ import annotations

import re

from omcm_persistent_mode.keywords import strip_code

FRONTEND, GIT = "frontend-ui-ux", "git-master"

FRONTEND_WORDS = (
    "ui",
    "component",
    "frontend",
    "css",
    "styling",
    "layout",
    "design",
    "button",
    "form",
    "modal",
    "tailwind",
    "react",
    "vue",
    "angular",
    "styled",
    "animation",
    "responsive",
    "mobile",
    "desktop",
    "theme",
    "color",
    "font",
    "typography",
    "spacing",
    "margin",
    "padding",
    "gradient",
    "shadow",
    "border",
    "hover",
    "focus",
    "dark mode",
    "light mode",
)
GIT_WORDS = (
    "commit",
    "git",
    "push",
    "pull",
    "branch",
    "merge",
    "rebase",
    "pr",
    "pull request",
    "cherry-pick",
    "stash",
    "diff",
    "log",
    "checkout",
    "reset",
    "blame",
    "bisect",
    "amend",
    "squash",
    "history",
    "remote",
    "origin",
)


def _pattern(words: tuple) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))
    # Whole words outside paths and identifiers, as for mode keywords.
    return re.compile(rf"(?<![\w/\\.\-])(?:{alternatives})(?![\w/\\\-]|\.\w)", re.I)


_GIT = _pattern(GIT_WORDS)
_FRONTEND = _pattern(FRONTEND_WORDS)


def detect(prompt: str) -> str | None:
    """``git-master``, ``frontend-ui-ux`` or None. Git is more specific, so it wins."""
    text = strip_code(prompt or "")
    if _GIT.search(text):
        return GIT
    if _FRONTEND.search(text):
        return FRONTEND
    return None
