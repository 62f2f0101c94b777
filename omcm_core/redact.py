"""Mask secrets before anything reaches disk or the log.

``mask(text)`` replaces every secret-shaped value with ``[REDACTED:<kind>]`` and
every ``<private>...</private>`` span with ``[PRIVATE]``. It favours recall:
a masked false positive costs a little context, a leaked key costs the user.
"""

from __future__ import annotations

import re
from typing import Any

_PATTERNS: list[tuple[str, "re.Pattern[str]"]] = [
    ("private", re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)),
    (
        "private-key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255})\b")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    ("bearer", re.compile(r"(?i)\b(bearer|token|basic)\s+[A-Za-z0-9\-._~+/]{12,}=*")),
    (
        "assignment",
        re.compile(
            r"""(?ix)
            (["']?(?<![\w.-])[\w.-]{0,40}?(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|account[_-]?key|private[_-]?key|client[_-]?secret|auth)[\w.-]{0,40}["']?)
            ([ \t]*[:=][ \t]*|[ \t]*=>[ \t]*)  # same line only: "auth:\n  token: x" must mask x, not "token:"
            ("[^"\n]{3,}"|'[^'\n]{3,}'|[^\s,;"'}{\\]{3,})  # unquoted values end at a backslash: text may be repr'd ("\n")
            """
        ),
    ),
]


def _replace(kind: str):
    if kind == "private":
        return lambda m: "[PRIVATE]"
    if kind == "assignment":
        return lambda m: f"{m.group(1)}{m.group(2)}[REDACTED]"
    if kind == "bearer":
        return lambda m: f"{m.group(1)} [REDACTED:bearer]"
    return lambda m: f"[REDACTED:{kind}]"


_COMPILED = [(pattern, _replace(kind)) for kind, pattern in _PATTERNS]


def mask(text: str) -> str:
    """Return ``text`` with every secret-shaped value masked."""
    if not text:
        return text
    for pattern, repl in _COMPILED:
        text = pattern.sub(repl, text)
    return text


def mask_value(value: Any) -> Any:
    """Mask every string inside a JSON-like value (dict keys are kept)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_value(v) for v in value]
    return value
