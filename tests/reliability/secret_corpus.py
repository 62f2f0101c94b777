"""Realistic secret shapes, generated at test time (no real or fixed secret is stored in the repo).

Each entry is ``(name, text as it appears in a command or its output, needle)``:
the needle is the random part that must never be found on disk afterwards.
"""

from __future__ import annotations

import base64
import json
import random
import string
from typing import Any, NamedTuple

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pem(rng: random.Random, kind: str) -> tuple[str, str]:
    body = base64.b64encode(rng.randbytes(96)).decode()
    label = f"{kind} PRIVATE KEY".strip()
    return f"-----BEGIN {label}-----\n{body[:64]}\n{body[64:]}\n-----END {label}-----", body[:40]


def corpus(seed: int = 7) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    out: list[tuple[str, str, str]] = []

    def add(name: str, template: str, needle: str) -> None:
        out.append((name, template.format(s=needle), needle))

    add("aws-access-key-id", "aws configure set aws_access_key_id {s}", "AK" + "IA" + _pick(rng, UPPER_DIGITS, 16))
    add("aws-session-key-id", "AccessKeyId: {s}", "AS" + "IA" + _pick(rng, UPPER_DIGITS, 16))
    add("aws-secret-env", "export AWS_SECRET_ACCESS_KEY={s}", _pick(rng, ALNUM + "/+", 40))
    add("aws-credentials-file", "[default]\naws_secret_access_key = {s}\n", _pick(rng, ALNUM + "/+", 40))
    for prefix in ("ghp", "gho", "ghs", "ghu", "ghr"):
        add(f"github-{prefix}", "git clone https://github.com/o/r (token {s})", prefix + "_" + _pick(rng, ALNUM, 36))
    add(
        "github-fine-grained",
        "GH_TOKEN={s} gh pr list",
        "github" + "_pat_" + _pick(rng, ALNUM, 22) + "_" + _pick(rng, ALNUM, 59),
    )
    add(
        "gitlab-pat",
        "curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.com/api/v4/projects",
        "gl" + "pat-" + _pick(rng, ALNUM, 20),
    )
    add("slack-bot", "SLACK_BOT_TOKEN={s}", "xo" + "xb-" + _pick(rng, string.digits, 12) + "-" + _pick(rng, ALNUM, 24))
    add("slack-user", "token used: {s}", "xo" + "xp-" + _pick(rng, string.digits, 12) + "-" + _pick(rng, ALNUM, 32))
    add(
        "slack-webhook",
        "curl -X POST {s} -d '{{}}'",
        "https://hooks.slack.com/services/T"
        + _pick(rng, UPPER_DIGITS, 10)
        + "/B"
        + _pick(rng, UPPER_DIGITS, 10)
        + "/"
        + _pick(rng, ALNUM, 24),
    )
    add("stripe-live-secret", "stripe.api_key = '{s}'", "sk" + "_live_" + _pick(rng, ALNUM, 24))
    add("stripe-restricted", "key in dashboard: {s}", "rk" + "_live_" + _pick(rng, ALNUM, 24))
    add("stripe-test", "STRIPE_KEY={s}", "sk" + "_test_" + _pick(rng, ALNUM, 24))
    add("anthropic", "ANTHROPIC_API_KEY={s} claude", "sk-" + "ant-api03-" + _pick(rng, ALNUM + "-_", 80))
    add("anthropic-admin", "admin key {s}", "sk-" + "ant-admin01-" + _pick(rng, ALNUM + "-_", 60))
    add("openai-project", "OPENAI_API_KEY={s}", "sk-" + "proj-" + _pick(rng, ALNUM + "-_", 48))
    add("openai-legacy", 'openai.api_key = "{s}"', "sk-" + _pick(rng, ALNUM, 48))
    add(
        "google-api-key",
        "https://maps.googleapis.com/maps/api/geocode/json?key={s}",
        "AI" + "za" + _pick(rng, ALNUM + "-_", 35),
    )
    jwt = "ey" + "J" + _pick(rng, ALNUM, 30) + ".ey" + "J" + _pick(rng, ALNUM, 60) + "." + _pick(rng, ALNUM + "-_", 43)
    add("jwt", "Cookie: session={s}", jwt)
    add("postgres-url", "psql postgresql://app:{s}@db.internal:5432/prod", _pick(rng, ALNUM, 20))
    add("mongodb-url", "MONGO_URL=mongodb+srv://admin:{s}@cluster0.example.net/test", _pick(rng, ALNUM, 20))
    add("redis-url", "redis-cli -u redis://default:{s}@cache:6379", _pick(rng, ALNUM, 24))
    add("bearer-header", "curl -H 'Authorization: Bearer {s}' https://api.example.com", _pick(rng, ALNUM, 40))
    add(
        "basic-header",
        "Authorization: Basic {s}",
        base64.b64encode(("user:" + _pick(rng, ALNUM, 16)).encode()).decode(),
    )
    for kind in ("RSA", "EC", "OPENSSH", ""):
        text, needle = _pem(rng, kind)
        out.append((f"pem-{kind.lower() or 'pkcs8'}", text, needle))
    pgp_body = base64.b64encode(rng.randbytes(90)).decode()
    out.append(
        (
            "pgp-private",
            f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pgp_body}\n-----END PGP PRIVATE KEY BLOCK-----",
            pgp_body[:40],
        )
    )
    add("db-password-env", "export DB_PASSWORD={s}", _pick(rng, ALNUM + "!#%", 18))
    add("json-api-key", '{{"api_key": "{s}", "region": "eu"}}', _pick(rng, ALNUM, 32))
    add("yaml-client-secret", "oauth:\n  client_secret: {s}\n", _pick(rng, ALNUM, 32))
    add("dotenv-secret-key", "SECRET_KEY={s}\nDEBUG=false", _pick(rng, ALNUM, 50))
    add("cli-password-flag", "mysql --user=root --password={s} prod", _pick(rng, ALNUM, 16))
    add("npmrc-token", "//registry.npmjs.org/:_authToken={s}", "npm_" + _pick(rng, ALNUM, 36))
    add("pypi-token", "TWINE_PASSWORD={s} twine upload dist/*", "pypi-" + _pick(rng, ALNUM + "-_", 80))
    add("twilio-auth", "TWILIO_AUTH_TOKEN={s}", _pick(rng, HEX, 32))
    add(
        "sendgrid-bearer",
        'curl -H "Authorization: Bearer {s}" https://api.sendgrid.com/v3/mail/send',
        "SG." + _pick(rng, ALNUM, 22) + "." + _pick(rng, ALNUM, 43),
    )
    add("vault-token", "VAULT_TOKEN={s} vault kv get secret/app", "hvs." + _pick(rng, ALNUM, 24))
    add("heroku-api-key", "HEROKU_API_KEY={s}", "-".join(_pick(rng, HEX, n) for n in (8, 4, 4, 4, 12)))
    add("datadog-api-key", "DD_API_KEY={s} datadog-agent start", _pick(rng, HEX, 32))
    add("gcp-service-account", '{{"type": "service_account", "private_key_id": "{s}"}}', _pick(rng, HEX, 40))
    add("generic-token-yaml", "auth:\n  token: {s}\n", _pick(rng, ALNUM, 30))
    add(
        "azure-storage",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net",
        base64.b64encode(rng.randbytes(64)).decode(),
    )
    add("private-tag", "notes: <private>{s}</private>", _pick(rng, ALNUM, 24))
    # Passwords on command lines and in odd places (each once reached omcm.db unmasked).
    add("mysql-p-attached", "mysql -u root -p{s} prod < dump.sql", _pick(rng, ALNUM, 18))
    add("curl-user", "curl -u admin:{s} https://ci.example.com/api", _pick(rng, ALNUM, 18))
    add("psql-password-space", "psql --password {s} -h db.internal", _pick(rng, ALNUM, 18))
    add("sshpass", "sshpass -p {s} ssh deploy@10.0.0.5", _pick(rng, ALNUM, 18))
    add("token-flag-space", "vercel deploy --token {s} --prod", _pick(rng, ALNUM, 24))
    add(
        "slack-app",
        "SLACK_APP_TOKEN={s}",
        "xa"
        + "pp-1-A"
        + _pick(rng, UPPER_DIGITS, 10)
        + "-"
        + _pick(rng, string.digits, 13)
        + "-"
        + _pick(rng, HEX, 64),
    )
    add(
        "url-password-with-at",
        "git remote add o https://bob:{s}@git.example.com/r.git",
        _pick(rng, ALNUM, 10) + "@" + _pick(rng, ALNUM, 10),
    )
    return out


def structured(seed: int = 11) -> list[tuple[str, dict, str]]:
    """Structured tool input whose key names the secret; the values look like nothing in particular."""
    rng = random.Random(seed)
    out = []
    for key in ("password", "api_key", "apiKey", "token", "client_secret", "X-Auth-Token", "privateKey"):
        needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
        out.append((key, {"host": "db.internal", key: needle}, needle))
    return out


class Shape(NamedTuple):
    """One secret shape: ``value`` is the text of a command or its output, or an MCP tool's input (a dict)."""

    name: str
    value: str | dict[str, Any]
    needle: str  # the random part that must never be found on disk

    @property
    def text(self) -> str:
        return self.value if isinstance(self.value, str) else json.dumps(self.value)

    @property
    def tool_input(self) -> dict[str, Any]:
        """The shape as a tool's input: a Bash command, or the MCP input itself."""
        return self.value if isinstance(self.value, dict) else {"command": self.value}


B32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper()  # bech32's alphabet (age keys are upper case)


def issue_24_shapes(seed: int = 24) -> list[Shape]:
    """The 29 shapes of issue 24 item 5 (28 that reached disk, plus the bare AWS secret key)."""
    rng = random.Random(seed)
    out: list[Shape] = []

    def pw(n: int = 18) -> str:
        return _pick(rng, ALNUM, n)

    def add(name: str, template: str, needle: str) -> None:
        out.append(Shape(name, template.format(s=needle), needle))

    add("netrc", "machine api.example.com login alice password {s}", pw())
    add("pgpass", "db.internal:5432:prod:app_user:{s}", pw())
    add("docker-login-p", "docker login -u deploy -p {s} registry.example.com", pw())
    add("redis-cli-a", "redis-cli -h cache.internal -p 6379 -a {s} ping", pw())
    add("keytool-storepass", "keytool -list -keystore app.jks -storepass {s}", pw())
    add("keytool-keypass", "keytool -genkeypair -alias app -keypass {s} -keystore app.jks", pw())
    add("openssl-passin", "openssl rsa -in key.pem -passin pass:{s} -out plain.pem", pw())
    add("openssl-passout", "openssl genrsa -aes256 -passout pass:{s} -out key.pem 4096", pw())
    add("ldapsearch-w", "ldapsearch -x -H ldap://ldap.internal -D cn=admin,dc=example,dc=com -w {s} -b dc=example", pw())
    add("sqlcmd-P", "sqlcmd -S db.internal -U sa -P {s} -Q 'SELECT 1'", pw())
    add("smbclient-U", "smbclient //files.internal/share -U alice%{s} -c ls", pw())
    add("htpasswd-b", "htpasswd -b -c /etc/nginx/.htpasswd alice {s}", pw())
    k8s = base64.b64encode(("postgres://app:" + pw(20)).encode()).decode()
    add(
        "k8s-secret-data",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  DATABASE_URL: {s}\n",
        k8s,
    )
    add("env-name-value", '[{{"name": "DB_PASSWORD", "value": "{s}"}}, {{"name": "PORT", "value": "5432"}}]', pw())
    add("gpg-passphrase", "GPG_PASSPHRASE={s} make release", pw())
    add("credentials-env", "CREDENTIALS={s} ./deploy.sh", pw(24))
    add("vault-hvs", "vault login {s}", "hvs." + _pick(rng, ALNUM + "_-", 90))
    add("age-secret-key", "# public key: age1qqqq\n{s}\n", "AGE-SECRET-KEY-1" + _pick(rng, B32, 58))
    putty = _pick(rng, ALNUM + "+/", 64)
    add(
        "putty-key",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
        "AAAAC3NzaC1lZDI1NTE5AAAAIH3yhYdp0m1x8cQ2Z8vUaT1cFqfX8GmMZ7q0xkR1FJ4u\nAAAAC3Nza\n"
        "Private-Lines: 1\n{s}\nPrivate-MAC: " + _pick(rng, HEX, 64) + "\n",
        putty,
    )
    add(
        "discord-webhook",
        "curl -X POST -d '{{\"content\": \"hi\"}}' https://discord.com/api/webhooks/"
        + _pick(rng, string.digits, 18)
        + "/{s}",
        _pick(rng, ALNUM + "_-", 68),
    )
    add(
        "telegram-bot-token",
        "curl https://api.telegram.org/bot{s}/sendMessage -d chat_id=42",
        _pick(rng, string.digits, 10) + ":AA" + _pick(rng, ALNUM + "_-", 33),
    )
    sig = _pick(rng, ALNUM, 30) + "%2B" + _pick(rng, ALNUM, 10) + "%3D"
    add(
        "azure-sas-sig",
        "az storage blob download --blob-url 'https://acct.blob.core.windows.net/c/b.bin?sv=2022-11-02&ss=b"
        "&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig={s}'",
        sig,
    )
    add("cookie-sessionid", "curl -H 'Cookie: sessionid={s}; csrftoken=abc' https://app.example.com/", pw(32))
    add("api-key-underscore-flag", "python train.py --api_key {s} --epochs 3", pw(32))
    add("password-after-nbsp", "Password:\u00a0{s}", pw())
    needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
    out.append(Shape("mcp-secret-list", {"host": "db.internal", "passwords": [needle, "second-one"]}, needle))
    needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
    out.append(Shape("mcp-secret-object", {"url": "https://x.example", "auth": {"user": "alice", "pw": needle}}, needle))
    needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
    out.append(Shape("mcp-sibling-value", {"env": [{"name": "API_TOKEN", "value": needle}]}, needle))
    add("aws-secret-bare", "printf '%s' {s} > ~/.cache/k", _pick(rng, ALNUM, 20) + "/" + _pick(rng, ALNUM, 19))
    return out


# The team helper (and any other test) sends these through its own path.
ISSUE_24_SHAPES: list[Shape] = issue_24_shapes()
