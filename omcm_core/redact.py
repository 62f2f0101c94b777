"""Mask secrets before anything reaches disk or the log.

``mask(text)`` replaces every secret-shaped value with ``[REDACTED:<kind>]`` and
every ``<private>...</private>`` span with ``[PRIVATE]``. It favours recall:
a masked false positive costs a little context, a leaked key costs the user.
"""

from __future__ import annotations

import re
from typing import Any

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
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
    ("slack-token", re.compile(r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}\b")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # The password may itself hold "@": it runs to the last "@" before the host (bounded).
    ("url-credentials", re.compile(r"(?<=://)[^/\s:@]{1,256}:[^\s/]{1,256}?(?=@[^\s@/]{1,256}(?:[/\s?#]|$))")),
    # Passwords on command lines: mysql -pXXXX, sshpass -p XXXX, curl -u user:XXXX, and
    # --password/--token/--api-key VALUE (the "--password=VALUE" form is the assignment rule's).
    # No \b before the program: text may be JSON-escaped ("...\\nsshpass -p x").
    (
        "cli-password",
        re.compile(
            r"(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?=\s)[^\n|;&]{0,200}?\s-p([^\s'\"-][^\s'\"]{2,})"
        ),
    ),
    ("cli-password", re.compile(r"sshpass\s[^\n|;&]{0,200}?-p\s*['\"]?([^\s'\"-][^\s'\"]{2,})")),
    ("cli-password", re.compile(r"(?:\s-u|\s--user)(?:\s+|=)['\"]?[^\s:'\"]{1,128}:([^\s'\"]{3,})")),
    (
        "cli-password",
        re.compile(
            r"(?i)(?<![\w-])--?(?:password|passwd|pass|token|auth-token|access-token|api-key|apikey|secret|client-secret)"
            r"\s+['\"]?([^\s'\"-][^\s'\"]{2,})"
        ),
    ),
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
    if kind == "cli-password":  # keep the command, replace only the value
        return lambda m: m.string[m.start() : m.start(1)] + "[REDACTED:cli-password]" + m.string[m.end(1) : m.end()]
    return lambda m: f"[REDACTED:{kind}]"


_COMPILED = [(pattern, _replace(kind)) for kind, pattern in _PATTERNS]

# Key names whose value is a secret whatever its shape ({"password": "hunter2"} has no
# secret-looking value): words of the key, camelCase and snake_case split.
_SECRET_WORDS = frozenset(
    [
        "password",
        "passwd",
        "pwd",
        "pass",
        "passphrase",
        "secret",
        "secrets",
        "token",
        "apikey",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "privatekey",
        "accesskey",
        "secretkey",
        "clientsecret",
        "sessionkey",
        "signature",
    ]
)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def secret_key(name: str) -> bool:
    """True when a key name (``password``, ``api_key``, ``apiKey``, ``X-Auth-Token``) names a secret."""
    words = [w.lower() for w in _WORD.findall(name)]
    pairs = {a + b for a, b in zip(words, words[1:], strict=False)}  # pairs of neighbours
    return any(w in _SECRET_WORDS for w in words) or any(p in _SECRET_WORDS for p in pairs)


def mask(text: str) -> str:
    """Return ``text`` with every secret-shaped value masked.

    Mask before any cut: a cut can remove a private key's BEGIN line or part of
    a token, and the rest no longer looks like a secret.
    """
    if not text:
        return text
    for pattern, repl in _COMPILED:
        text = pattern.sub(repl, text)
    return text


# Context masked around a kept part: longer than any token and than a 4096-bit RSA key in PEM.
MARGIN = 8192


def mask_head(text: str, limit: int, margin: int = MARGIN) -> str:
    """The first ``limit`` characters of ``text``, masked as if the whole text had been.

    Masking megabytes costs seconds; this masks only the kept part plus ``margin``
    characters after it (so a secret straddling the cut is still recognised whole)
    and drops whatever the window's own cut may have split.
    """
    if len(text) <= limit + margin:
        return mask(text)[:limit]
    masked = mask(text[: limit + margin])
    return masked[: max(0, len(masked) - margin)][:limit]


def mask_tail(text: str, limit: int, margin: int = MARGIN) -> str:
    """The last ``limit`` characters of ``text``, masked with ``margin`` characters of context before them."""
    if limit <= 0:
        return ""
    if len(text) <= limit + margin:
        return mask(text)[-limit:]
    return mask(text[-(limit + margin) :])[margin:][-limit:]


def mask_structured(value: Any) -> Any:
    """A JSON-like value with secrets masked: by key name first, then every string by shape.

    ``{"password": "hunter2", "api_key": "x", "nested": {"token": 1}}`` keeps its
    keys and shape; the values of secret-named keys become ``[REDACTED]``. Use it
    on structured tool input before serialising it anywhere.
    """
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            hidden = (
                isinstance(k, str) and secret_key(k) and isinstance(v, (str, int, float)) and not isinstance(v, bool)
            )
            out[k] = "[REDACTED]" if hidden and v != "" else mask_structured(v)
        return out
    if isinstance(value, (list, tuple)):
        return [mask_structured(v) for v in value]
    return value


def mask_value(value: Any) -> Any:
    """Alias of mask_structured, kept for existing callers."""
    return mask_structured(value)
