"""detect-secrets' maintained detectors, as a second masking pass over recorded text.

omcm's own rules (:mod:`omcm_core.redact`) know the shapes someone saw leak;
detect-secrets (Yelp, a dependency) brings the provider detectors its
maintainers keep adding. Imported lazily and only by masking: the library pulls
in ``requests`` and ``yaml`` (about 100 ms cold), so nothing on PreToolUse's
path may reach this module (tests/test_redact_library.py checks a cold call).

Only the detectors that measured well on the corpus run (docs/reliability.md,
"Secrets by breadth"): the keyword detector and the high-entropy detectors
masked ordinary text (``incorrect``, git hashes, ``sha512-`` integrity
strings) and are left out. When the library is missing or changes its private
scanning function, this pass finds nothing and omcm's rules still run.
"""

from __future__ import annotations

import re
from typing import Any

#: detect-secrets plugins run by omcm (class names, as in a detect-secrets baseline).
PLUGINS = (
    "ArtifactoryDetector",
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
MAX_LINE = 4096  # longer lines are omcm's rules' alone: the library's regexes are not all bounded
# A line none of the provider detectors can match: no run of 11 token characters, no URL, no key.
# Skipping those before the library's per-line machinery saves most of its cost on ordinary output.
_CANDIDATE = re.compile(r"[A-Za-z0-9_+=-]{11}|://|PRIVATE")

_state: dict[str, Any] = {"deferred": False}


def defer() -> None:
    """This process answers one PreToolUse call: mask with omcm's rules alone unless the library is loaded.

    The warm dispatcher loads the library when it starts (:func:`load`), so
    only a cold PreToolUse call (the fallback) records without it.
    """
    _state["deferred"] = True


def load() -> bool:
    """Import the library now (the warm dispatcher's start); True when it is usable."""
    return _detectors() is not None


def active() -> bool:
    return not _state["deferred"] or bool(_state.get("detectors"))


def _detectors() -> list[Any] | None:
    """The shipped detectors, built once (the plugins' own ``analyze_string``), or None without the library."""
    if "detectors" not in _state:
        try:
            from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

            mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
            classes: dict[str, Any] = {cls.__name__: cls for cls in mapping.values()}
            _state["detectors"] = [classes[name]() for name in PLUGINS if name in classes]
        except Exception:  # not installed, or another major version: omcm's rules still run
            _state["detectors"] = None
    return _state["detectors"]


def _engine(plugins: tuple[str, ...]):
    """The library's own line scanner with its filters (for comparing all its plugins: bench/secret_detectors.py).

    Not the shipped path: its per-line machinery (filters called through
    ``inspect``) costs three times the detectors' regexes.
    """
    from detect_secrets.core import scan
    from detect_secrets.settings import transient_settings

    def run(lines: list[tuple[int, str]]) -> list[tuple[int, str | None]]:
        config = {"plugins_used": [{"name": name} for name in plugins]}
        with transient_settings(config):
            return [(s.line_number, s.secret_value) for s in scan._process_line_based_plugins(lines, "omcm.txt")]

    return run


def secret_values(text: str, plugins: tuple[str, ...] = PLUGINS) -> dict[int, set[str]]:
    """The secret values detect-secrets finds in ``text``, by line index (0-based)."""
    if not text or not active():
        return {}
    detectors = _detectors()
    if detectors is None:
        return {}
    lines = [(n, line) for n, line in enumerate(text.split("\n")) if len(line) <= MAX_LINE and _CANDIDATE.search(line)]
    found: dict[int, set[str]] = {}
    try:
        if plugins != PLUGINS:
            lines = [(n, line) for n, line in enumerate(text.split("\n")) if len(line) <= MAX_LINE]
            pairs = [(number - 1, value) for number, value in _engine(plugins)([(n + 1, x) for n, x in lines])]
        else:
            pairs = [(n, value) for n, line in lines for d in detectors for value in d.analyze_string(line)]
        for index, value in pairs:
            value = (value or "").strip(" \t\"'=:")  # some detectors' matches include the character before and after
            if value:
                found.setdefault(index, set()).add(value)
    except Exception:  # a detector's bug must not lose the recording: omcm's rules already ran
        return {}
    return found


def mask(text: str, plugins: tuple[str, ...] = PLUGINS) -> str:
    """``text`` with every value the library's detectors find replaced by ``[REDACTED:library]``."""
    found = secret_values(text, plugins)
    if not found:
        return text
    lines = text.split("\n")
    for index, values in found.items():
        line = lines[index]
        for value in sorted(values, key=len, reverse=True):
            line = line.replace(value, "[REDACTED:library]")
        lines[index] = line
    return "\n".join(lines)
