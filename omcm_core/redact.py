"""Mask secrets before anything reaches disk or the log.

``mask(text)`` replaces every secret-shaped value with ``[REDACTED:<kind>]`` and
every ``<private>...</private>`` span with ``[PRIVATE]``. It favours recall:
a masked false positive costs a little context, a leaked key costs the user.
"""

from __future__ import annotations

from typing import Any

from omcm_core import _redact_rules

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
        "sessionid",
        "signature",
        "pw",
        "psk",
        "passcode",
        "pin",
        "otp",
        "totp",
        "mfacode",
    ]
)
_RULES: list[_redact_rules.Rule] = []  # built (and compiled) by the first mask, not at import


def _rules() -> list[_redact_rules.Rule]:
    if not _RULES:
        _RULES[:] = _redact_rules.rules(_SECRET_WORDS)  # one assignment: two threads may race here
    return _RULES


def secret_key(name: str) -> bool:
    """True when a key name (``password``, ``api_key``, ``apiKey``, ``X-Auth-Token``) names a secret."""
    return _redact_rules.key_names_secret(name, _SECRET_WORDS)


def prepare() -> None:
    """Load masking's detectors now: call before a write transaction whose body masks.

    The first mask in a process imports detect-secrets (100-500 ms); inside a
    transaction that would hold the store's write lock for it, and 24 hooks at
    once then meet "database is locked".
    """
    from omcm_core import _redact_library

    if _redact_library.active():
        _redact_library.load()


def mask(text: str, library: bool = True) -> str:
    """Return ``text`` with every secret-shaped value masked.

    Mask before any cut: a cut can remove a private key's BEGIN line or part of
    a token, and the rest no longer looks like a secret. ``library=False``
    skips detect-secrets' detectors (:mod:`omcm_core._redact_library`): for the
    PreToolUse path and the log, which must not pay for importing it.
    """
    if not text:
        return text
    for rule in _RULES or _rules():
        text = rule(text)
    if library:
        from omcm_core import _redact_library

        text = _redact_library.mask(text)
    return text


# Context masked around a kept part: longer than any token and than a 4096-bit RSA key in PEM.
MARGIN = 8192


def mask_head(text: str, limit: int, margin: int = MARGIN, library: bool = True) -> str:
    """The first ``limit`` characters of ``text``, masked as if the whole text had been.

    Masking megabytes costs seconds; this masks only the kept part plus ``margin``
    characters after it (so a secret straddling the cut is still recognised whole)
    and drops whatever the window's own cut may have split.
    """
    if len(text) <= limit + margin:
        return mask(text, library)[:limit]
    masked = mask(text[: limit + margin], library)
    return masked[: max(0, len(masked) - margin)][:limit]


def mask_tail(text: str, limit: int, margin: int = MARGIN, library: bool = True) -> str:
    """The last ``limit`` characters of ``text``, masked with ``margin`` characters of context before them."""
    if limit <= 0:
        return ""
    if len(text) <= limit + margin:
        return mask(text, library)[-limit:]
    return mask(text[-(limit + margin) :], library)[margin:][-limit:]


_NAME_KEYS = frozenset(["name", "Name", "key", "Key", "ParameterKey", "variable", "Variable"])
_VALUE_KEYS = frozenset(["value", "Value", "ParameterValue"])
CUT = "\n...[TRUNCATED]...\n"


def _wordlike(value: Any) -> bool:
    return isinstance(value, str) and value.isascii() and value.replace("_", "").isalpha() and len(value) <= 12


MAX_DEPTH = 50


def mask_structured(value: Any, library: bool = True, max_chars: int | None = None) -> Any:
    """A JSON-like value with secrets masked: by key name first, then every string by shape.

    ``{"password": "hunter2", "api_key": "x", "nested": {"token": 1}}`` keeps its
    keys and shape; the values of secret-named keys become ``[REDACTED]``, and
    so does everything a secret-named key holds (``{"passwords": [...]}``,
    ``{"auth": {...}}``) and a ``value`` beside a secret ``name``
    (``{"name": "DB_PASSWORD", "value": ...}``). Use it on structured tool input
    before serialising it anywhere.

    With ``max_chars`` (recording: a 64 MB Bash command once took 35 s to mask
    whole) a longer string keeps its masked head and tail around a marker, and
    once ``8 * max_chars`` characters were masked the remaining strings are
    replaced by the marker: the work is bounded whatever the input.
    """
    budget = [8 * max_chars] if max_chars else None
    return _walk(value, library, max_chars, budget, 0)


def _walk(value: Any, library: bool, max_chars: int | None, budget: list[int] | None, depth: int) -> Any:
    if isinstance(value, str):
        return _string(value, library, max_chars, budget)
    if depth > MAX_DEPTH:
        return CUT.strip()
    if isinstance(value, dict):
        sibling_secret = any(
            k in _NAME_KEYS and isinstance(v, str) and secret_key(v) for k, v in value.items()
        ) and any(k in _VALUE_KEYS for k in value)
        out = {}
        for k, v in value.items():
            named = isinstance(k, str) and (
                secret_key(k) or (isinstance(v, (dict, list)) and k.endswith("s") and secret_key(k[:-1]))
            )
            if named or (sibling_secret and k in _VALUE_KEYS):
                out[k] = _hidden(v, depth)
            else:
                out[k] = _walk(v, library, max_chars, budget, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and isinstance(value[0], str) and secret_key(value[0]) and not _wordlike(value[1]):
            # A pair (name, value), as headers are often given: [["X-Api-Key", "…"]]; not a list
            # of field names (["token", "name"]).
            return [value[0], _hidden(value[1], depth)]
        return [_walk(v, library, max_chars, budget, depth + 1) for v in value]
    return value


def _hidden(value: Any, depth: int) -> Any:
    """Everything a secret-named key holds: each string and number masked, the shape kept."""
    if isinstance(value, bool) or value is None or value == "":
        return value
    if isinstance(value, (str, int, float)):
        return "[REDACTED]"
    if depth > MAX_DEPTH:
        return "[REDACTED]"
    if isinstance(value, dict):
        return {k: _hidden(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_hidden(v, depth + 1) for v in value]
    return "[REDACTED]"


def _string(text: str, library: bool, max_chars: int | None, budget: list[int] | None) -> str:
    if max_chars is None or budget is None:
        return mask(text, library)
    if budget[0] <= 0:
        return CUT.strip() if text else text
    if len(text) <= max_chars:
        budget[0] -= len(text)
        return mask(text, library)
    budget[0] -= max_chars
    return mask_cut(text, max_chars, library)


def mask_cut(text: str, max_chars: int, library: bool = True) -> str:
    """``text`` masked and cut to its head and tail (``max_chars`` in all, plus a marker), masking only those."""
    if len(text) <= max_chars:
        return mask(text, library)
    half = max(1, (max_chars - len(CUT)) // 2)
    return mask_head(text, half, library=library) + CUT + mask_tail(text, half, library=library)


def mask_value(value: Any) -> Any:
    """Alias of mask_structured, kept for existing callers."""
    return mask_structured(value)


_VERSION: list[str] = []


def rules_version() -> str:
    """A stamp of the masking in force: text masked under this stamp needs no second pass.

    A hash of the rule sources (this module, the rule table, the detect-secrets
    pass) and of the detect-secrets version installed, so any change to a rule,
    a new detector or an upgrade of the library gives a new stamp and older
    rows are masked again when read. Computed from files, without importing the
    library or compiling a rule (cached for the process). Where the library's pass
    is skipped (:func:`omcm_core._redact_library.defer`) the stamp says so, and
    the text is masked again by a process that runs it.
    """
    if not _VERSION:
        import glob
        import importlib.util
        import os
        from pathlib import Path

        from omcm_core._runtime.digest import sha256  # not hashlib: it loads OpenSSL (a cold call's ms)

        digest = sha256()
        here = Path(__file__).resolve().parent
        for name in ("redact.py", "_redact_rules.py", "_redact_library.py"):
            try:
                digest.update((here / name).read_bytes())
            except OSError:  # no sources (a frozen build): a stamp of this process alone, never trusted later
                digest.update(os.urandom(16))
        spec = importlib.util.find_spec("detect_secrets")
        if spec is None or not spec.origin:
            digest.update(b"no detect-secrets")
        else:
            # The installed version, from its dist-info's name: importing the library costs 100 ms.
            site = os.path.dirname(os.path.dirname(spec.origin))
            found = glob.glob(os.path.join(glob.escape(site), "detect_secrets-*"))
            digest.update(" ".join(sorted(os.path.basename(p) for p in found)).encode())
        _VERSION.append(digest.hexdigest()[:16])
    from omcm_core import _redact_library

    # A process masking with omcm's rules alone (a cold PreToolUse call) stamps what it masked so.
    return _VERSION[0] if _redact_library.active() else _VERSION[0] + "-rules-only"
