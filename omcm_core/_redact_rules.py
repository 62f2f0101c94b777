"""omcm's own masking rules: the shapes of secrets in commands, their output and config files.

Each rule is ``(kind, pattern)``: a pattern with a group named ``v`` masks only
that group (the command stays readable), one without masks the whole match.
A few shapes need code rather than a pattern (a Kubernetes Secret's ``data:``,
an environment entry's ``name``/``value`` pair, a bare AWS secret key judged by
its entropy, cookies); they are the functions at the end. ``RULES`` keeps the
order in which they run: whole tokens first, so that a later keyword rule sees
``[REDACTED:...]`` instead of a token it might cut in two.

Every repeat is bounded: the text is attacker-controlled and an unbounded
``.*?`` before a keyword goes quadratic on a long line.

Patterns compile on first use, not at import (:func:`R`): every hook process
imports masking (the log masks), most never mask a secret-shaped text, and
compiling the tables costs ~7 ms (issue 35).
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable
from typing import Any, cast

_COMPILED = [0]  # how many patterns were compiled (tests check none is at import)


class _Lazy:
    """A pattern compiled on first use; attribute access is delegated to the compiled pattern."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
            _COMPILED[0] += 1
            table = globals()  # a module-level pattern: the helpers using it then skip this delegation
            for name, value in list(table.items()):
                if value is self:
                    table[name] = self._compiled
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)


def R(pattern: str, flags: int = 0) -> re.Pattern[str]:  # noqa: N802 (reads like re.compile in the tables)
    """``re.compile``, deferred to the pattern's first use."""
    return cast(re.Pattern[str], _Lazy(pattern, flags))


def compiled(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The real pattern behind :func:`R` (rules hold it, so a match pays no delegation)."""
    return pattern.compiled() if isinstance(pattern, _Lazy) else pattern


def compiled_count() -> int:
    return _COMPILED[0]


# Between a program and its flag: same command (no newline, pipe, ; or &), bounded.
_ARGS = r"[^\n|;&]{0,300}?"
_VALUE = r"['\"]?(?P<v>[^\s'\"-][^\s'\"]*)"  # a flag's value: not the next flag

_WHOLE: list[tuple[str, re.Pattern[str]]] = [
    ("private", R(r"<private>.*?(?:</private>|\Z)", re.S | re.I)),
    (
        "private-key",
        R(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    ("putty-key", R(r"PuTTY-User-Key-File-\d+:.*?(?:Private-(?:MAC|Hash):[ \t]*[0-9a-fA-F]+|\Z)", re.S)),
    ("age-key", R(r"AGE-SECRET-KEY-1[0-9A-Z]{58}")),
    (
        "ansible-vault",
        R(r"\$ANSIBLE_VAULT;[0-9.]{1,10};\w{1,20}(?:;\w{1,40})?[ \t]*(?:\r?\n[0-9a-f \t]{1,200}){1,10000}"),
    ),
    ("aws-access-key", R(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b")),
    ("github-token", R(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255})\b")),
    ("gitlab-token", R(r"\bgl(?:pat|ptt|dt|rt|soat|cbt|imt|ft|oas)-[A-Za-z0-9_-]{20,}")),
    ("slack-token", R(r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}\b")),
    ("slack-webhook", R(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+")),
    ("discord-webhook", R(r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{1,30}/[\w-]{1,200}")),
    ("discord-bot-token", R(r"\b[MNO][A-Za-z\d_-]{23,27}\.[\w-]{6}\.[\w-]{27,40}\b")),
    ("telegram-bot-token", R(r"(?:(?<=/bot)|(?<![\w:]))\d{8,10}:[A-Za-z0-9_-]{35}(?![\w-])")),
    # Secret and restricted keys only: pk_live_/pk_test_ are publishable (they ship in web pages).
    ("stripe-key", R(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b")),
    ("anthropic-key", R(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", R(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", R(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("google-oauth", R(r"\b(?:GOCSPX-[\w-]{24,40}|ya29\.[\w-]{20,})")),
    ("vault-token", R(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}")),
    (
        "provider-token",
        R(
            r"\b(?:do[por]_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|hf_[A-Za-z]{30,}|r8_[A-Za-z0-9]{37}"
            r"|gsk_[A-Za-z0-9]{48,}|dapi[a-f0-9]{32}(?:-\d)?|dp\.(?:st|ct|sa|scim|audit|pt)\.[\w.-]{40,}"
            r"|pul-[a-f0-9]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|NRAK-[A-Z0-9]{27}|gl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}"
            r"|sntr[ysu]_[A-Za-z0-9_=+/-]{40,}|dckr_pat_[\w-]{20,}|rubygems_[a-f0-9]{48}|ATATT3[A-Za-z0-9_=-]{50,}"
            r"|ATBB[A-Za-z0-9]{32}|lin_api_[A-Za-z0-9]{40}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}"
            r"|figd_[\w-]{40,}|key-[a-f0-9]{32}|SK[a-f0-9]{32}|sq0(?:atp|csp)-[\w-]{22,60}|EAAA[\w-]{60,}"
            r"|[sr]k\.eyJ[\w.-]{20,}|npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[\w-]{50,}|HRKU-[\w-]{20,}"
            r"|[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,}|[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![\w-])"
        ),
    ),
    ("jwt", R(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("password-hash", R(r"\$(?:1|2[abxy]?|5|6|y|gy|7|apr1|argon2(?:id|i|d))\$[^\s:'\"]{8,300}")),
]

_VALUED: list[tuple[str, re.Pattern[str]]] = [
    # The password may itself hold "@": it runs to the last "@" before the host (bounded).
    # The user may be empty (redis://:pw@host) or hold "@" itself (https://me@corp.com:pw@host).
    ("url-credentials", R(r"(?<=://)[^/\s:]{0,256}:(?P<v>[^\s/]{1,256}?)(?=@[^\s@/]{1,256}(?:[/\s?#'\"]|$))")),
    (
        "authorization",
        R(
            r"(?i)\b(?:proxy-)?authorization[ \t]*[:=][ \t]*['\"]?"
            r"(?:(?:bearer|basic|token|digest|ssws|negotiate|ntlm|apikey|bot)[ \t]+)?(?P<v>[^\s'\",;]{8,})"
        ),
    ),
    ("bearer", R(r"(?i)\b(?:bearer|token|basic)\s+(?P<v>[A-Za-z0-9\-._~+/]{12,}=*)")),
    ("smtp-auth", R(r"\bAUTH\s+(?:PLAIN|LOGIN|XOAUTH2)\s+(?P<v>[A-Za-z0-9+/=]{8,})")),
    # Config files whose lines hold a password in a fixed place.
    (
        "pgpass",
        R(
            r"(?m)(?:^|(?<=[\s\"'`]))[^\s:#\"'`]{1,256}:(?:\d{1,5}|\*):[^\s:]{1,256}:[^\s:]{1,256}:"
            r"(?P<v>[^\s:\"'`]{3,256})(?=$|[\s\"'`])"
        ),
    ),
    # Passwords on command lines. No \b before the program: text may be JSON-escaped ("...\\nsshpass -p x").
    (
        "cli-password",
        R(r"(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?=\s)" + _ARGS + r"\s-p(?P<v>[^\s'\"-][^\s'\"]{2,})"),
    ),
    ("cli-password", R(r"sshpass\s" + _ARGS + r"-p\s*['\"]?(?P<v>[^\s'\"-][^\s'\"]{2,})")),
    ("cli-password", R(r"(?:\s-u|\s--user)(?:\s+|=)['\"]?[^\s:'\"]{1,128}:(?P<v>[^\s'\"]{3,})")),
    (
        "cli-password",
        R(
            r"(?i)(?<![\w-])--?(?:password|passwd|pass|passphrase|token|auth-token|access-token|access_token|api-key|api_key"
            r"|apikey|api-token|secret|client-secret|client_secret|secret-key|secret_key|secret-access-key|private-token"
            r"|oauth2-bearer|http-password|proxy-password|key-password|registry-password|token-value|storepass|keypass"
            r"|srcstorepass|deststorepass|srckeypass|destkeypass|passin|passout)"
            r"(?:\s+|=)['\"]?(?:pass:)?(?P<v>[^\s'\"-][^\s'\"]{2,})"
        ),
    ),
    (
        "cli-password",
        R(
            r"\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm|crane|regctl|az)\s"
            + _ARGS
            + r"\blogin\b"
            + _ARGS
            + r"\s-p(?:\s+|=)"
            + _VALUE
        ),
    ),
    ("cli-password", R(r"\bredis-cli\b" + _ARGS + r"\s-a\s+" + _VALUE)),
    ("cli-password", R(r"\bredis-cli\b" + _ARGS + r"\sAUTH\s+(?:\S{1,128}\s+)??(?P<v>[^\s'\"]{3,})\s*$", re.M)),
    ("cli-password", R(r"\bopenssl\b" + _ARGS + r"\s-k\s+" + _VALUE)),
    (
        "cli-password",
        R(r"\bldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop)\b" + _ARGS + r"\s-w\s+" + _VALUE),
    ),
    ("cli-password", R(r"\b(?:sqlcmd|bcp|osql|isql|mssql-cli)\b" + _ARGS + r"\s-P\s*" + _VALUE)),
    (
        "cli-password",
        R(
            r"\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop)\b"
            + _ARGS
            + r"\s-p\s+"
            + _VALUE
        ),
    ),
    ("cli-password", R(r"(?:\s-U\s*|--user(?:name)?=)['\"]?[^\s%'\"]{1,128}%(?P<v>[^\s'\"]{3,})")),
    ("cli-password", R(r"\b(?:zip|unzip|zipcloak|funzip)\b" + _ARGS + r"\s-P\s+" + _VALUE)),
    ("cli-password", R(r"\b7z[ar]?\b" + _ARGS + r"\s-p(?P<v>[^\s'\"]{3,})")),
    (
        "cli-password",
        R(r"\b(?:sqlplus|sqlldr|expdp|impdp|rman)\s+(?:-\w+\s+){0,5}['\"]?[\w$#.]{1,128}/(?P<v>[^\s@'\"/]{3,})"),
    ),
    ("cli-password", R(r"[\w.-]{1,128}:(?P<v>[^\s'\":]{3,})['\"]?\s*\|\s*(?:sudo\s+)?chpasswd")),
    ("cli-password", R(r"\bnet\s+use\b" + _ARGS + r"/user:\S{1,256}\s+(?P<v>[^\s/'\"]\S*)")),
    ("cli-password", R(r"\brabbitmqctl\s+(?:add_user|change_password)\s+\S{1,256}\s+['\"]?(?P<v>[^\s'\"]+)")),
    ("sql-password", R(r"(?i)\b(?:identified\s+by|password)\s+'(?P<v>[^'\n]{3,})'")),
    (
        "xml-secret",
        R(
            r"(?i)<(?P<k>[\w.-]{0,40}(?:password|passwd|secret|token|api[_-]?key|passphrase|credentials?)[\w.-]{0,40})>(?P<v>[^<\n]{3,})</(?P=k)>"
        ),
    ),
]

# -- keyword assignments (KEY=value, key: value, "key": "value") ------------------------
_ASSIGNMENT = R(
    r"""(?ix)
    (?P<k>["']?(?<![\w.-])(?<!\$\{)[\w.-]{0,40}?(?:pass|pwd|secret|token|api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key
        |auth|credential|session[_-]?(?:id|key)|sessid|psk|signing[_-]?key|encryption[_-]?key|master[_-]?key|client[_-]?key)[\w.-]{0,40}["']?)
    (?P<sep>[^\S\n]*(?:[:=](?![:=])|=>)[^\S\n]*)  # same line only: "auth:\n  token: x" must mask x, not "token:"
    (?P<v>"[^"\n]{3,}"|'[^'\n]{3,}'|[^\s,;"'}{\\<]{3,})  # unquoted values end at a backslash: text may be repr'd
    """
)
# A key holding one of these (compacted) is a secret's name whatever its words.
_STRONG = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "apikey",
    "accesskey",
    "privatekey",
    "accountkey",
    "credential",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "sessionid",
    "sessionkey",
    "sessiontoken",
    "signingkey",
    "encryptionkey",
    "masterkey",
    "clientkey",
)
_NOT_STRONG = ("secretary", "secretsmanager")
# The key names something about a secret, not the secret: PASSWORD_MIN_LENGTH, token_count, secret_id.
_ABOUT = frozenset(
    [
        "count",
        "length",
        "len",
        "limit",
        "max",
        "min",
        "type",
        "types",
        "url",
        "uri",
        "endpoint",
        "file",
        "path",
        "dir",
        "name",
        "names",
        "id",
        "ids",
        "field",
        "fields",
        "prompt",
        "policy",
        "expiry",
        "expires",
        "expiration",
        "ttl",
        "timeout",
        "header",
        "env",
        "ref",
        "required",
        "enabled",
        "mode",
        "size",
        "usage",
        "used",
        "rotation",
        "format",
        "kind",
        "version",
        "arn",
        "reset",
    ]
)
_LITERAL_PLACEHOLDER = (
    r"""(?:true|false|null|none|nil|undefined|yes|no|on|off|required|optional|redacted|str|string|int|bytes|bool"""
    r"""|number|change[_-]?me|replace[_-]?me|placeholder|dummy|todo|tbd)[),]?"""
    r"""|[$%&].*|\{\{.*|<.*>|\[REDACTED.*|\*{3,}.*|x{3,}|your[\w-]*"""
)
# A quoted value is a literal: only these say it is not the secret.
_QUOTED_PLACEHOLDER = R(r"(?i)" + _LITERAL_PLACEHOLDER)
_PLACEHOLDER = R(
    r"""(?ix)"""
    + _LITERAL_PLACEHOLDER
    + r"""
    |[a-z_][\w]*(?:\.[a-z_]\w*)*[(\[].*      # a call or subscript: getpass.getpass(...), os.environ["X"]
    |(?-i:[a-z_][a-z0-9_]+(?:\.[A-Za-z_]\w*)+)  # an attribute: settings.SECRET_KEY (not zOSrMt.nHnp4vr)
    |[A-Z]+(?:_[A-Z]+)+                       # an environment variable's name: YOUR_API_KEY
    """
)
_WORD = R(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Words a value of a weak key ("auth: refresh tokens", "--password via the CLI") is not.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "via",
        "is",
        "are",
        "to",
        "for",
        "from",
        "with",
        "in",
        "on",
        "of",
        "as",
        "at",
        "by",
        "if",
        "or",
        "and",
        "not",
        "no",
        "be",
    ]
)
# Keys that name a secret only sometimes ("auth: required"): their value must look random.
_WEAK = frozenset(["auth", "authorization", "pass", "signature"])
_RANDOM = R(r"(?=[A-Za-z0-9+/_-]{16,})(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9])")


def _looks_random(value: str) -> bool:
    """Mixed case and digits, or symbols: a secret's look, not a word's."""
    return bool(
        re.search(r"[0-9]", value)
        and re.search(r"[A-Za-z]", value)
        or re.search(r"[^A-Za-z0-9_.-]", value)
        or re.search(r"[a-z]", value)
        and re.search(r"[A-Z]", value[1:])
        or len(value) >= 16
    )


def key_names_secret(name: str, words: frozenset[str]) -> bool:
    """True when a key names a secret: a word of it is one (``words``), or it holds a strong stem."""
    parts = [w.lower() for w in _WORD.findall(name)]
    compact = "".join(parts)
    if not parts or (parts[-1] in _ABOUT and "privatekey" not in compact):
        return False
    if any(s in compact for s in _STRONG) and not any(n in compact for n in _NOT_STRONG):
        return True
    pairs = {a + b for a, b in zip(parts, parts[1:], strict=False)}
    return any(w in words for w in parts) or any(p in words for p in pairs)


def _placeholder(value: str, quoted: bool = False) -> bool:
    """A value that only points at a secret: ``$VAR``, ``getpass()``, ``None``, ``<your-key>``, a stopword."""
    if value.lower() in _STOPWORDS:
        return True
    if _RANDOM.search(value):
        return False  # a token, even when it looks like ``s.Xy12...``
    return bool((_QUOTED_PLACEHOLDER if quoted else _PLACEHOLDER).fullmatch(value))


def _assignment(words: frozenset[str]) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        value, key = m.group("v").strip("\"'"), m.group("k").strip("\"'")
        quoted = m.group("v")[:1] in "\"'"
        if not key_names_secret(key, words) or _placeholder(value, quoted):
            return m.group(0)
        if key.startswith("-") and m.group("sep").strip() == ":":
            return m.group(0)  # "argument --password: expected one argument" names a flag
        weak = {w.lower() for w in _WORD.findall(key)} & _WEAK and not any(s in key.lower() for s in _STRONG)
        if weak and not _looks_random(value):
            return m.group(0)
        return f"{m.group('k')}{m.group('sep')}[REDACTED]"

    return replace


# -- shapes that need code ------------------------------------------------------------------
_BARE_40 = R(r"(?<![A-Za-z0-9/+=_.-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_.-])")


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def _bare_aws_secret(m: re.Match[str]) -> str:
    """40 characters of base64 with upper, lower and digits and a random look: an AWS secret key."""
    value = m.group(0)
    if (
        value[0] == "/"
        or not any(c.isupper() for c in value)
        or not any(c.islower() for c in value)
        or not any(c.isdigit() for c in value)
        or _entropy(value) < 4.2
    ):
        return value
    return "[REDACTED:aws-secret-key]"


_K8S_SECRET = R(r"(?m)^[ \t]*kind:[ \t]*['\"]?Secret\b|\"kind\"\s*:\s*\"Secret\"")
_YAML_DATA = R(r"(?m)^(?P<i>[ \t]*)(?:data|stringData):[ \t]*\n(?P<body>(?:(?P=i)[ \t]+[^\n]*(?:\n|\Z)){1,1000})")
_YAML_ENTRY = R(r"(?m)^(?P<k>[ \t]+[\w.-]{1,256}:[ \t]*)(?P<v>\S[^\n]*)$")
_JSON_DATA = R(r"\"(?:data|stringData)\"\s*:\s*\{(?P<body>[^{}]{0,100000})\}")
_JSON_ENTRY = R(r"(?P<k>\"[^\"\n]{1,256}\"\s*:\s*)\"[^\"\n]*\"")


def _k8s_secret(text: str) -> str:
    """Every value under ``data:``/``stringData:`` of a Kubernetes Secret (base64 is not a mask)."""
    if not _K8S_SECRET.search(text):
        return text

    def yaml_body(m: re.Match[str]) -> str:
        body = _YAML_ENTRY.sub(lambda e: e.group("k") + "[REDACTED:k8s-secret]", m.group("body"))
        return m.group(0)[: m.start("body") - m.start()] + body

    def json_body(m: re.Match[str]) -> str:
        body = _JSON_ENTRY.sub(lambda e: e.group("k") + '"[REDACTED:k8s-secret]"', m.group("body"))
        return m.group(0)[: m.start("body") - m.start()] + body + "}"

    return _JSON_DATA.sub(json_body, _YAML_DATA.sub(yaml_body, text))


_JSON_CONTAINER = R(r"\"(?P<k>[^\"\n]{1,128})\"\s*:\s*(?P<body>\[[^\[\]{}]{0,10000}\]|\{[^{}]{0,10000}\})")
_JSON_STRING = R(r"\"(?:[^\"\\\n]|\\.){0,4096}\"")
_JSON_MEMBER_VALUE = R(r"(?P<k>\"[^\"\n]{1,128}\"\s*:\s*)\"(?:[^\"\\\n]|\\.){0,4096}\"")


def _json_containers(words: frozenset[str]) -> Callable[[str], str]:
    """``"passwords": ["…"]`` and ``"auth": {"pw": "…"}`` in JSON text: every string a secret-named key holds."""

    def replace(m: re.Match[str]) -> str:
        key = m.group("k")
        if not (key_names_secret(key, words) or (key.endswith("s") and key_names_secret(key[:-1], words))):
            return m.group(0)
        body = m.group("body")
        if body[0] == "[":
            body = _JSON_STRING.sub('"[REDACTED]"', body)
        else:
            body = _JSON_MEMBER_VALUE.sub(lambda v: v.group("k") + '"[REDACTED]"', body)
        return m.group(0)[: m.start("body") - m.start()] + body

    def run(text: str) -> str:
        return _JSON_CONTAINER.sub(replace, text) if '":' in text or '" :' in text else text

    return run


_ENV_JSON = R(
    r"\"(?:name|Name|key|Key)\"\s*:\s*\"(?P<n>[^\"\n]{1,128})\"\s*,\s*\"(?:value|Value)\"\s*:\s*\"(?P<v>[^\"\n]*)\""
)
_ENV_JSON_REVERSED = R(
    r"\"(?:value|Value)\"\s*:\s*\"(?P<v>[^\"\n]*)\"\s*,\s*\"(?:name|Name|key|Key)\"\s*:\s*\"(?P<n>[^\"\n]{1,128})\""
)
_ENV_CALL = R(
    r"\b(?:define|setenv|putenv|set|put|setdefault|Setenv)\(\s*[\"'](?P<n>[\w.-]{1,128})[\"']\s*,\s*[\"'](?P<v>[^\"'\n]{3,})[\"']"
)
_ENV_INDEX = R(r"\[[\"'](?P<n>[\w.-]{1,128})[\"']\]\s*=\s*[\"'](?P<v>[^\"'\n]{3,})[\"']")
_ENV_YAML = R(r"(?m)-[ \t]+name:[ \t]*['\"]?(?P<n>[\w.-]{1,128})['\"]?[ \t]*\n[ \t]+value:[ \t]*(?P<v>\S[^\n]*)$")


def _env_entries(words: frozenset[str]) -> Callable[[str], str]:
    """``{"name": "DB_PASSWORD", "value": "..."}`` (ECS, Kubernetes, GitHub): the value by its sibling's name."""

    def replace(m: re.Match[str]) -> str:
        if not m.group("v") or not key_names_secret(m.group("n"), words):
            return m.group(0)
        start, end = m.start("v") - m.start(), m.end("v") - m.start()
        return m.group(0)[:start] + "[REDACTED]" + m.group(0)[end:]

    def run(text: str) -> str:
        for pattern in (_ENV_JSON, _ENV_JSON_REVERSED, _ENV_YAML, _ENV_CALL, _ENV_INDEX):
            text = pattern.sub(replace, text)
        return text

    return run


_COOKIE = R(r"(?i)(?:\b(?:set-)?cookie[ \t]*:|--cookie(?:\s+|=)|(?<=\s)-b\s+)[ \t]*['\"]?(?P<rest>[^\n'\"]{1,8192})")
_COOKIE_PAIR = R(r"(?P<k>[\w.$-]{1,128}=)(?P<v>[^;,\s]{6,})")
_COOKIE_ATTRIBUTES = frozenset(["path", "domain", "expires", "max-age", "samesite", "priority"])


def _cookies(m: re.Match[str]) -> str:
    def pair(p: re.Match[str]) -> str:
        if p.group("k")[:-1].lower() in _COOKIE_ATTRIBUTES:
            return p.group(0)
        return p.group("k") + "[REDACTED:cookie]"

    start = m.start("rest") - m.start()
    return m.group(0)[:start] + _COOKIE_PAIR.sub(pair, m.group("rest"))


# A flag's metavariable in a usage line: "--password PASSWORD]", "--token TOKEN".
_METAVAR = R(r"[A-Z]+(?:[_-][A-Z]+)*[\])>.,]*")


def _valued(kind: str) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        value = m.group("v")
        if value.lower() in _STOPWORDS or (kind == "cli-password" and _METAVAR.fullmatch(value)):
            return m.group(0)  # "--password via the CLI is insecure", "usage: x [--password PASSWORD]"
        start, end = m.start("v") - m.start(), m.end("v") - m.start()
        return m.group(0)[:start] + f"[REDACTED:{kind}]" + m.group(0)[end:]

    return replace


def _whole(kind: str) -> Callable[[re.Match[str]], str]:
    text = "[PRIVATE]" if kind == "private" else f"[REDACTED:{kind}]"
    return lambda m: text


_HTPASSWD = R(
    r"\bhtpasswd((?:\s+-[A-Za-z]{1,10}){1,5})\s+(?P<a>\S{1,4096})\s+(?P<b>\S{1,4096})(?:[ \t]+(?P<c>[^\s|;&]{1,4096}))?"
)


def _htpasswd(m: re.Match[str]) -> str:
    """``htpasswd -b [-c] FILE USER PASSWORD`` or ``htpasswd -nb USER PASSWORD``."""
    flags = m.group(1)
    if "b" not in flags:
        return m.group(0)
    group = "b" if "n" in flags else "c"
    if m.group(group) is None:
        return m.group(0)
    start, end = m.start(group) - m.start(), m.end(group) - m.start()
    return m.group(0)[:start] + "[REDACTED:cli-password]" + m.group(0)[end:]


# -- families of issue 34 (multi-line configs, webhooks, query strings, piped passwords, base64) ----
_NETRC = R(
    r"(?i)\b(?P<m>machine\s{1,64}\S{1,256}\s{1,64}|default\s{1,64})?login\s{1,64}\S{1,256}\s{1,64}"
    r"password\s{1,64}(?P<v>\S{1,1024})"
)
# "password X" alone on its line, as in a .netrc written one token pair a line.
_NETRC_LINE = R(r"(?im)^[ \t]{0,64}password[ \t]{1,64}(?P<v>\S{4,1024})[ \t]*$")


def _netrc(text: str) -> str:
    """``machine H login U password P`` over one line or several; without ``machine`` the value must look random."""
    if "password" not in text.lower():
        return text

    def replace(m: re.Match[str]) -> str:
        value = m.group("v")
        named = "m" in m.re.groupindex and m.group("m")
        if (not named and not _looks_random(value)) or _placeholder(value) or re.fullmatch(r"[a-z]{1,11}", value):
            return m.group(0)
        start, end = m.start("v") - m.start(), m.end("v") - m.start()
        return m.group(0)[:start] + "[REDACTED:netrc]" + m.group(0)[end:]

    return _NETRC_LINE.sub(replace, _NETRC.sub(replace, text))


_URL = R(r"https?://[^\s/'\"<>]{1,256}(?P<path>/[^\s?#'\"<>]{1,2048})")
# A path segment after which the rest of a URL is the webhook's secret.
_HOOK_MARKERS = frozenset(
    ["hooks", "hook", "webhook", "webhooks", "webhookb2", "incomingwebhook", "catch", "key", "services", "triggers"]
)


def _secret_segment(segment: str) -> bool:
    return len(segment) >= 6 and bool(re.search(r"\d", segment)) or len(segment) >= 20


def _webhooks(text: str) -> str:
    """A webhook URL whose path is the secret (Slack, Zapier, Mattermost, Teams, IFTTT, ...): the path from its token on."""
    if "://" not in text or "hook" not in text.lower() and "/key/" not in text:
        return text

    def replace(m: re.Match[str]) -> str:
        segments = m.group("path").split("/")
        marker = next((i for i, seg in enumerate(segments) if seg.lower() in _HOOK_MARKERS), None)
        if marker is None:
            return m.group(0)
        first = next((i for i in range(marker + 1, len(segments)) if _secret_segment(segments[i])), None)
        if first is None:
            return m.group(0)
        kept = "/".join(segments[:first])
        return m.group(0)[: m.start("path") - m.start()] + kept + "/[REDACTED:webhook]"

    return _URL.sub(replace, text)


_QUERY = R(r"(?P<pre>[?&;])(?P<k>[\w.\[\]-]{1,64})=(?P<v>[^&\s'\"#]{6,4096})")
# Parameter names that hold a secret in URLs whatever their words say.
_QUERY_NAMES = frozenset(["key", "sig", "signature", "code", "appid", "app_key", "appkey", "auth", "hash_key"])
_KEYISH = R(r"(?i)key|token|secret|sig|pass|auth|cred")


def _query_secrets(words: frozenset[str]) -> Callable[[str], str]:
    """``?api_key=…&token=…&sig=…``: a parameter named as a secret, or key-ish with a random value."""

    def replace(m: re.Match[str]) -> str:
        key, value = m.group("k"), m.group("v")
        lower = key.lower()
        if _placeholder(value) and not _RANDOM.search(value):
            return m.group(0)
        if not (
            key_names_secret(key, words)
            or lower in _QUERY_NAMES
            or lower.startswith("x-amz-")
            and lower != "x-amz-date"
            or _KEYISH.search(key)
            and _looks_random(value)
        ):
            return m.group(0)
        return m.group("pre") + m.group("k") + "=[REDACTED:url-secret]"

    def run(text: str) -> str:
        return _QUERY.sub(replace, text) if "=" in text and ("?" in text or "&" in text or ";" in text) else text

    return run


# A password written into a program that reads it from standard input.
_PIPED = R(
    r"\b(?:echo|printf)(?:[ \t]+-[neE]{1,3})*(?:[ \t]+['\"]%s\\n?['\"])?[ \t]+(?P<q>['\"]?)(?P<v>[^\s'\"|$`][^\s'\"|]{2,1024})(?P=q)"
    r"[ \t]*\|[ \t]*(?=(?:sudo\b[^|\n]{0,200}(?:\s-\w{0,16}S\w{0,16}\b|--stdin)|passwd\b[^|\n]{0,200}--stdin"
    r"|[^|\n]{0,300}--password-stdin|kinit\b|chpasswd\b|cryptsetup\b|[^|\n]{0,300}-pass(?:in|word)?\s+stdin))"
)
_HERESTRING = R(
    r"\bsudo\b[^\n<]{0,200}\s-\w{0,16}S\w{0,16}\b[^\n<]{0,200}<<<[ \t]*(?P<q>['\"]?)(?P<v>[^\s'\"$`][^\s'\"]{2,1024})(?P=q)"
)


def _piped_password(text: str) -> str:
    """``echo PASSWORD | sudo -S``, ``| passwd --stdin``, ``| docker login --password-stdin``, ``sudo -S <<< PW``."""
    if "|" not in text and "<<<" not in text:
        return text
    replace = _valued("cli-password")
    return _HERESTRING.sub(replace, _PIPED.sub(replace, text))


# A service key: a short lower-case prefix, then a long random body (xai-…, tvly-…, phx_…, tskey-auth-…).
_SERVICE_KEY = R(
    r"(?<![\w.+/-])(?P<p>[a-z][a-z0-9]{1,9}(?:[_-][a-z0-9]{2,9}){0,2}[_-])(?P<v>[A-Za-z0-9_-]{28,256})(?![\w+/=-])"
)
_PUBLIC_PREFIXES = ("pk_", "pk-", "phc_", "pub_", "public_", "test_", "sha", "id_", "uuid")


def _service_key(m: re.Match[str]) -> str:
    prefix, body = m.group("p"), m.group("v")
    if prefix.startswith(_PUBLIC_PREFIXES):
        return m.group(0)
    mixed = any(c.isupper() for c in body) and any(c.islower() for c in body) and any(c.isdigit() for c in body)
    hexy = re.fullmatch(r"[a-f0-9]{40,}", body) is not None and "key" in prefix
    if not (mixed and _entropy(body) >= 4.0 or hexy):
        return m.group(0)
    return prefix + "[REDACTED:service-key]"


_JSON_ESCAPED = R(r"\\\"(?P<k>[\w.-]{1,64})\\\"\s{0,8}:\s{0,8}\\\"(?P<v>(?:[^\"\\]|\\[^\"]){3,4096}?)\\\"")


def _json_escaped(words: frozenset[str]) -> Callable[[str], str]:
    """``{\\"api_key\\": \\"…\\"}``: JSON inside a JSON string, where the keyword rule sees backslashes."""

    def replace(m: re.Match[str]) -> str:
        if not key_names_secret(m.group("k"), words) or _placeholder(m.group("v"), quoted=True):
            return m.group(0)
        start, end = m.start("v") - m.start(), m.end("v") - m.start()
        return m.group(0)[:start] + "[REDACTED]" + m.group(0)[end:]

    def run(text: str) -> str:
        return _JSON_ESCAPED.sub(replace, text) if '\\"' in text else text

    return run


_BASE64 = R(r"(?<![A-Za-z0-9+/=_-])(?=[A-Za-z0-9+/]{0,4095}[a-z])[A-Za-z0-9+/]{16,4096}={0,2}(?![A-Za-z0-9+/=_-])")
_MAX_DECODED = 64  # base64 runs decoded per text: the work stays bounded whatever the text


def _base64(inner: list[Callable[[str], str]]) -> Callable[[str], str]:
    """A base64 run that decodes to text the other rules would mask is masked whole (``echo … | base64 -d``)."""

    def run(text: str) -> str:
        budget = [_MAX_DECODED]

        def replace(m: re.Match[str]) -> str:
            blob = m.group(0)
            if budget[0] <= 0 or len(blob) % 4:
                return blob
            budget[0] -= 1
            try:
                decoded = base64.b64decode(blob, validate=True).decode("utf-8")
            except ValueError:
                return blob
            if sum(c.isprintable() or c in "\n\r\t" for c in decoded) < len(decoded):
                return blob
            masked = decoded
            for rule in inner:
                masked = rule(masked)
            return blob if masked == decoded else "[REDACTED:base64]"

        return _BASE64.sub(replace, text)

    return run


Rule = Callable[[str], str]

# Substrings without which a rule cannot match: the rule's regex runs only when one is present
# (``in`` is a fast scan; sixty regexes over every position of the text are not). Lower case for
# case-insensitive patterns, which are checked against the lowered text.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "cookie": ("cookie", "-b "),
    "assignment": ("pass", "pwd", "secret", "token", "key", "auth", "credential", "session", "sessid", "psk"),
    "htpasswd": ("htpasswd",),
    "private": ("<private",),
    "private-key": ("PRIVATE KEY",),
    "putty-key": ("PuTTY-User-Key-File",),
    "age-key": ("AGE-SECRET-KEY-1",),
    "ansible-vault": ("$ANSIBLE_VAULT",),
    "aws-access-key": ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-", "glptt-", "gldt-", "glrt-", "glsoat-", "glcbt-", "glimt-", "glft-", "gloas-"),
    "slack-token": ("xox", "xapp-"),
    "slack-webhook": ("hooks.slack.com",),
    "discord-webhook": ("/api/webhooks/",),
    "stripe-key": ("_live_", "_test_"),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "google-api-key": ("AIza",),
    "google-oauth": ("GOCSPX-", "ya29."),
    "vault-token": ("hvs.", "hvb.", "hvr."),
    "jwt": ("eyJ",),
    "password-hash": ("$",),
    "url-credentials": ("://",),
    "authorization": ("authorization",),
    "bearer": ("bearer", "token", "basic"),
    "smtp-auth": ("AUTH ",),
    "pgpass": (":",),
    "sql-password": ("identified", "password"),
    "xml-secret": ("</",),
}


_PROGRAMS = R(r"^(?:\(\?\w+\))?(?:\\b)?\(\?:([a-z0-9|\\.-]+)\)(?![?*{])")


def _literals(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """A command-line rule's program names (``(?:zip|unzip)``, ``\\bredis-cli``), when the pattern starts with them."""
    text = pattern._args[0] if isinstance(pattern, _Lazy) else pattern.pattern  # its source: not compiled for this
    found = _PROGRAMS.match(text)
    if found and "\\s" not in found.group(1):
        return tuple(p.replace("\\", "") for p in found.group(1).split("|"))
    plain = re.match(r"^\\b([a-z][a-z0-9-]+)\\b", text)
    return (plain.group(1),) if plain else ()


def folds_case(lazy: _Lazy) -> bool:
    """Whether the pattern ignores case, read from its source (a leading ``(?i)``) and flags, without compiling it.

    Python takes global inline flags only at the start of a pattern; a leading group that
    is not one (``(?:mysql|...)``) counts too when it holds an ``i``: that only makes the
    needle check looser (the pattern decides).
    """
    source, flags = lazy._args
    if flags & re.IGNORECASE:
        return True
    while source.startswith("(?"):  # each leading group, as (?s)(?i)
        end = source.find(")")
        if end < 0 or "i" in source[2:end]:
            return True
        source = source[end + 1 :]
    return False


def _gated(lazy: _Lazy, repl: Callable[[re.Match[str]], str], needles: tuple[str, ...]) -> Rule:
    """A token rule whose pattern compiles when a text first holds one of its needles.

    Most processes mask a few short texts (log lines) that hold none: compiling the
    token and keyword patterns up front cost every such process ~6 ms. The needle
    check is the eager rule's, so is the rule once compiled.
    """
    lower = folds_case(lazy)

    def run(text: str) -> str:
        seen = text.lower() if lower else text
        return lazy.compiled().sub(repl, text) if any(n in seen for n in needles) else text

    return run


def rules(words: frozenset[str]) -> list[Rule]:
    """Every rule as a function of the text, in the order they run (compiles each pattern once, a token
    rule's when a text first holds its needle: :func:`_gated`)."""
    # Module-level patterns compile on their first use (a helper's prefilter may never let a text through),
    # then replace their name here (_Lazy.compiled): per match, no delegation.
    out: list[Rule] = []

    def sub(pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str], kind: str = "") -> Rule:
        needles = _NEEDLES.get(kind) or _literals(pattern)
        if not needles:
            real = compiled(pattern)
            return lambda text: real.sub(repl, text)
        if isinstance(pattern, _Lazy):
            return _gated(pattern, repl, needles)
        lower = bool(pattern.flags & re.IGNORECASE)

        def run(text: str) -> str:
            seen = text.lower() if lower else text
            return pattern.sub(repl, text) if any(n in seen for n in needles) else text

        return run

    out += [sub(p, _whole(kind), kind) for kind, p in _WHOLE]
    out.append(sub(_SERVICE_KEY, _service_key))
    out.append(_webhooks)
    out.append(_k8s_secret)
    out.append(_env_entries(words))
    out.append(_json_containers(words))
    out.append(sub(_COOKIE, _cookies, "cookie"))
    out.append(sub(_HTPASSWD, _htpasswd, "htpasswd"))
    out.append(_query_secrets(words))
    out.append(_netrc)
    out.append(_piped_password)
    out.append(_json_escaped(words))
    out += [sub(p, _valued(kind), kind) for kind, p in _VALUED]
    out.append(sub(_ASSIGNMENT, _assignment(words), "assignment"))
    out.append(sub(_BARE_40, _bare_aws_secret))
    out.append(_base64(list(out)))
    return out
