"""Realistic secret shapes, generated at test time (no real or fixed secret is stored in the repo).

Each entry is ``(name, text as it appears in a command or its output, needle)``:
the needle is the random part that must never be found on disk afterwards.
"""

from __future__ import annotations

import base64
import random
import string

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
