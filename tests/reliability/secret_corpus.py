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
    add(
        "ldapsearch-w", "ldapsearch -x -H ldap://ldap.internal -D cn=admin,dc=example,dc=com -w {s} -b dc=example", pw()
    )
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
        'curl -X POST -d \'{{"content": "hi"}}\' https://discord.com/api/webhooks/'
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
    out.append(
        Shape("mcp-secret-object", {"url": "https://x.example", "auth": {"user": "alice", "pw": needle}}, needle)
    )
    needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
    out.append(Shape("mcp-sibling-value", {"env": [{"name": "API_TOKEN", "value": needle}]}, needle))
    add("aws-secret-bare", "printf '%s' {s} > ~/.cache/k", _pick(rng, ALNUM, 20) + "/" + _pick(rng, ALNUM, 19))
    return out


# The team helper (and any other test) sends these through its own path.
ISSUE_24_SHAPES: list[Shape] = issue_24_shapes()


def _b64(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


def more_shapes(seed: int = 150) -> list[Shape]:
    """Further shapes: provider tokens, command-line passwords, config files, headers, URLs."""
    rng = random.Random(seed)
    out: list[Shape] = []

    def pw(n: int = 18) -> str:
        return _pick(rng, ALNUM, n)

    def add(name: str, template: str, needle: str) -> None:
        out.append(Shape(name, template.format(s=needle), needle))

    lower_digits = string.ascii_lowercase + string.digits
    # Provider tokens with a recognisable prefix.
    add("digitalocean", "export DIGITALOCEAN_ACCESS_TOKEN={s}", "dop_v1_" + _pick(rng, HEX, 64))
    add("digitalocean-bare", "doctl auth init -t {s}", "dop_v1_" + _pick(rng, HEX, 64))
    add("shopify", "X-Shopify-Access-Token: {s}", "shpat_" + _pick(rng, HEX, 32))
    add("huggingface", "huggingface-cli login --token {s}", "hf_" + _pick(rng, string.ascii_letters, 34))
    add("huggingface-bare", "loaded {s} from cache", "hf_" + _pick(rng, string.ascii_letters, 34))
    add("replicate", "r = replicate.Client({s})", "r8_" + _pick(rng, ALNUM, 37))
    add("groq", "client = Groq(key={s})", "gsk_" + _pick(rng, ALNUM, 52))
    add("databricks", "databricks configure --host h --token-value {s}", "dapi" + _pick(rng, HEX, 32))
    add("doppler", "doppler run --token {s} -- env", "dp.st.prd." + _pick(rng, ALNUM, 43))
    add("pulumi", "pulumi login with {s}", "pul-" + _pick(rng, HEX, 40))
    add("postman", "postman login --with-api-key {s}", "PMAK-" + _pick(rng, HEX, 24) + "-" + _pick(rng, HEX, 34))
    add("newrelic", "newrelic profile add --apiKey {s}", "NRAK-" + _pick(rng, UPPER_DIGITS, 27))
    add("grafana-sa", "grafana token {s}", "glsa_" + _pick(rng, ALNUM, 32) + "_" + _pick(rng, HEX, 8))
    add("sentry", "sentry-cli --auth-token {s} releases list", "sntrys_" + _pick(rng, ALNUM, 60))
    add("dockerhub-pat", "echo {s} | docker login -u bob --password-stdin", "dckr_pat_" + _pick(rng, ALNUM + "_-", 27))
    add("rubygems", "GEM_HOST_API_KEY: {s}", "rubygems_" + _pick(rng, HEX, 48))
    add("atlassian", "jira token {s}", "ATATT3xFfGF0" + _pick(rng, ALNUM + "_-", 180))
    add("bitbucket-app", "bitbucket app password {s}", "ATBB" + _pick(rng, ALNUM, 32))
    add("linear", "linear key {s}", "lin_api_" + _pick(rng, ALNUM, 40))
    add("notion", "notion integration {s}", "ntn_" + _pick(rng, ALNUM, 46))
    add("figma", "figma {s}", "figd_" + _pick(rng, ALNUM + "_-", 40))
    add("mailgun", "mailgun api {s}", "key-" + _pick(rng, HEX, 32))
    add("twilio-sk", "twilio api key {s}", "SK" + _pick(rng, HEX, 32))
    add("square", "square token {s}", "sq0atp-" + _pick(rng, ALNUM + "_-", 22))
    add("square-secret", "square app secret {s}", "sq0csp-" + _pick(rng, ALNUM + "_-", 43))
    add("mapbox-secret", "mapbox {s}", "sk.eyJ" + _pick(rng, ALNUM, 60) + "." + _pick(rng, ALNUM, 22))
    add("mailchimp", "mailchimp key {s}", _pick(rng, HEX, 32) + "-us" + _pick(rng, string.digits, 2))
    add("artifactory-token", "jfrog rt ping --access-token {s}", "AKCp8" + _pick(rng, ALNUM, 68))
    add("artifactory-password", "artifactory password is {s}", "AP6" + _pick(rng, ALNUM, 30))
    add("softlayer-url", "curl https://api.softlayer.com/soap/v3/{s}", _pick(rng, lower_digits, 64))
    add("npm-bare", "npm token created: {s}", "npm_" + _pick(rng, ALNUM, 36))
    add("pypi-bare", "twine upload -u __token__ {s}", "pypi-AgEIcHlwaS5vcmc" + _pick(rng, ALNUM + "-_", 60))
    add("heroku-new", "heroku key {s}", "HRKU-" + _pick(rng, ALNUM + "_-", 60))
    add(
        "terraform-cloud",
        "terraform login token {s}",
        _pick(rng, lower_digits, 14) + ".atlasv1." + _pick(rng, lower_digits, 67),
    )
    add(
        "azure-ad-secret",
        "az ad sp credential reset returned {s}",
        _pick(rng, ALNUM, 3) + "8Q~" + _pick(rng, ALNUM + "_~.-", 34),
    )
    add(
        "discord-bot",
        "bot.run({s})",
        "MT" + _pick(rng, ALNUM, 24) + "." + _pick(rng, ALNUM + "_-", 6) + "." + _pick(rng, ALNUM + "_-", 38),
    )
    add("slack-xoxe", "refresh {s}", "xo" + "xe-1-" + _pick(rng, ALNUM, 140))
    add(
        "github-pat-in-url",
        "git push https://x-access-token:{s}@github.com/o/r.git",
        "gh" + "s_" + _pick(rng, ALNUM, 36),
    )
    add("gitlab-oauth-url", "git clone https://oauth2:{s}@gitlab.example.com/g/r.git", pw(20))
    add("openai-svcacct", "key: {s}", "sk-" + "svcacct-" + _pick(rng, ALNUM + "-_", 60))
    add("anthropic-bare", "echo {s}", "sk-" + "ant-api03-" + _pick(rng, ALNUM + "-_", 93))
    add("aws-session-token", "aws_session_token = {s}", _b64(rng, 200))
    add("aws-cli-set-space", "aws configure set aws_secret_access_key {s}", _pick(rng, ALNUM + "/+", 40))
    add("aws-csv", "Access key ID,Secret access key\nAKIAEXAMPLEEXAMPLE12,{s}", _pick(rng, ALNUM + "/+", 40))
    add("google-oauth-secret", "client secret {s}", "GOCSPX-" + _pick(rng, ALNUM + "_-", 28))
    add("google-oauth-token", "access {s}", "ya29." + _pick(rng, ALNUM + "_-", 120))
    add(
        "okta-ssws",
        "curl -H 'Authorization: SSWS {s}' https://x.okta.com/api/v1/users",
        "00" + _pick(rng, ALNUM + "_-", 40),
    )
    add("jenkins-curl", "curl -u admin:{s} https://ci/job/x/build", "11" + _pick(rng, HEX, 32))
    # Private keys in every wrapping.
    key_body = _b64(rng, 120)
    add(
        "pem-in-json",
        '{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n-----END PRIVATE KEY-----\\n"}}',
        key_body,
    )
    add(
        "pem-encrypted",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\n{s}\n-----END ENCRYPTED PRIVATE KEY-----",
        _b64(rng, 90),
    )
    add("pem-dsa", "-----BEGIN DSA PRIVATE KEY-----\n{s}\n-----END DSA PRIVATE KEY-----", _b64(rng, 90))
    add("pem-cut", "cat id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n", _b64(rng, 90))
    add("kubeconfig-client-key", "users:\n- name: admin\n  user:\n    client-key-data: {s}\n", _b64(rng, 120))
    add("kubeconfig-token", "users:\n- name: sa\n  user:\n    token: {s}\n", _b64(rng, 60))
    add("docker-config-auth", '{{"auths": {{"ghcr.io": {{"auth": "{s}"}}}}}}', _b64(rng, 30))
    add("ansible-vault", "$ANSIBLE_VAULT;1.1;AES256\n{s}\n", _pick(rng, string.digits + "abcdef", 80))
    add("shadow-line", "deploy:$6$rounds=5000${s}:19000:0:99999:7:::", _pick(rng, ALNUM + "./", 86))
    add("htpasswd-line", "alice:$apr1${s}", _pick(rng, ALNUM + "./", 30))
    # Command lines.
    add("mongosh-p", "mongosh 'mongodb://db:27017' -u admin -p {s}", pw())
    add("az-login-p", "az login -u bob@example.com -p {s}", pw())
    add("zip-P", "zip -r -P {s} backup.zip data/", pw())
    add("unzip-P", "unzip -P {s} backup.zip", pw())
    add("7z-p", "7z a -p{s} backup.7z data", pw())
    add("openssl-pass", "openssl enc -aes-256-cbc -in a -out a.enc -pass pass:{s}", pw())
    add("openssl-k", "openssl enc -aes-256-cbc -k {s} -in a", pw())
    add("sqlplus", "sqlplus scott/{s}@//db:1521/ORCL", pw())
    add("chpasswd", "echo 'deploy:{s}' | sudo chpasswd", pw())
    add("net-use", "net use \\\\fs\\share /user:CORP\\bob {s}", pw())
    add("rabbitmqctl", "rabbitmqctl change_password admin {s}", pw())
    add("curl-oauth2", "curl --oauth2-bearer {s} https://api.example.com", pw(32))
    add("wget-password", "wget --http-user=bob --http-password={s} https://x/f", pw())
    add("docker-run-env", "docker run -e POSTGRES_PASSWORD={s} postgres:16", pw())
    add("helm-set", "helm install app ./chart --set db.password={s}", pw())
    add("terraform-var", "terraform apply -var 'db_password={s}'", pw())
    add("kubectl-literal", "kubectl create secret generic db --from-literal=password={s}", pw())
    add("git-credential", "protocol=https\nhost=github.com\nusername=bob\npassword={s}\n", pw())
    add("pgpassword-env", "PGPASSWORD={s} psql -h db -U app", pw())
    add("mysql-pwd-env", "MYSQL_PWD={s} mysql -u root", pw())
    add("tf-var-secret", "export TF_VAR_client_secret={s}", pw(32))
    add("mysql-password-long", "mysqldump --password {s} prod", pw())
    add("git-askpass-echo", "GIT_PASSWORD={s} git push", pw())
    add("vault-legacy", "export VAULT_TOKEN=s.{s}", pw(24))
    add("access-token-flag", "gh api --access-token {s}", pw(32))
    add("client-secret-flag", "oidc login --client-secret {s}", pw(32))
    add("secret-key-flag", "minio --secret-key {s}", pw(32))
    add("docker-login-password", "docker login --username bob --password {s} ghcr.io", pw())
    add("helm-repo", "helm repo add r https://charts.example --username u --password {s}", pw())
    add("smbclient-user-eq", "smbclient //fs/s --user=alice%{s}", pw())
    add("htpasswd-nb", "htpasswd -nb alice {s}", pw())
    add("keytool-srcstorepass", "keytool -importkeystore -srckeystore a.p12 -srcstorepass {s}", pw())
    add("ldapmodify-w", "ldapmodify -D cn=admin -w {s} -f change.ldif", pw())
    add("bcp-P", "bcp db.dbo.t out t.dat -S db -U sa -P {s}", pw())
    add("redis-cli-a-end", "redis-cli -a {s}", pw())
    add("redis-auth", "redis-cli -h cache AUTH default {s}", pw())
    # Configuration files.
    add("ini-password", "[database]\nhost = db\npassword = {s}\n", pw())
    add("xml-password", "<server><id>nexus</id><username>u</username><password>{s}</password></server>", pw())
    add("spring-datasource", "spring.datasource.password={s}", pw())
    add("jdbc-url", "jdbc:postgresql://db/prod?user=app&password={s}", pw())
    add("ado-connection", "Server=db;Database=prod;User Id=sa;Password={s};", pw())
    add("hcl-password", 'password = "{s}"', pw())
    add("toml-token", 'token = "{s}"', pw(30))
    add("php-define", "define('DB_PASSWORD', '{s}');", pw())
    add("python-environ", 'os.environ["API_KEY"] = "{s}"', pw(32))
    add("js-config", "const config = {{ apiKey: '{s}', region: 'eu' }};", pw(32))
    add("yaml-password", "database:\n  password: {s}\n", pw())
    add("yaml-secret-key", "secret_key_base: {s}", _pick(rng, HEX, 64))
    add("env-jwt-secret", "JWT_SECRET={s}", pw(40))
    add("env-session-secret", "SESSION_SECRET={s}", pw(40))
    add("env-encryption-key", "ENCRYPTION_KEY={s}", _b64(rng, 32))
    add("env-master-key", "RAILS_MASTER_KEY={s}", _pick(rng, HEX, 32))
    add("env-signing-key", "SIGNING_KEY={s}", _b64(rng, 32))
    add("env-private-token", "CI_PRIVATE_TOKEN={s}", pw(20))
    add("npmrc-password", "//registry.example.com/:_password={s}", _b64(rng, 18))
    add("npmrc-auth", "_auth={s}", _b64(rng, 24))
    add("pip-conf", "index-url = https://bob:{s}@pypi.example.com/simple", pw())
    add("wpa-psk", 'network={{\n  ssid="home"\n  psk="{s}"\n}}', pw())
    add("sql-identified-by", "ALTER USER app IDENTIFIED BY '{s}';", pw())
    add("sql-with-password", "CREATE ROLE app WITH LOGIN PASSWORD '{s}';", pw())
    add("java-keystore-prop", "-Djavax.net.ssl.keyStorePassword={s}", pw())
    add("ssh-passphrase-env", "SSH_PASSPHRASE={s}", pw())
    add("credentials-json", '{{"credentials": "{s}"}}', pw(24))
    add("passphrase-yaml", "passphrase: {s}", pw())
    # Headers, cookies, URLs.
    add("x-api-key", "curl -H 'X-API-Key: {s}' https://api.example.com", pw(32))
    add("authorization-token", "Authorization: token {s}", pw(40))
    add("proxy-authorization", "Proxy-Authorization: Basic {s}", _b64(rng, 21))
    add("set-cookie", "Set-Cookie: auth_token={s}; Path=/; HttpOnly", pw(32))
    add("cookie-flag", "curl --cookie 'session={s}' https://app", pw(32))
    add("query-access-token", "GET /api/v1/me?access_token={s}", pw(32))
    add("query-api-key", "https://api.example.com/v1/data?format=json&api_key={s}", pw(32))
    add("query-key", "https://example.com/feed?key={s}&q=x", pw(32))
    add("s3-presigned", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Signature={s}", _pick(rng, HEX, 64))
    add("ftp-url", "ftp://bob:{s}@ftp.example.com/pub", pw())
    add("amqp-url", "BROKER_URL=amqp://guest:{s}@rabbit:5672//", pw())
    add("mysql-url", "DATABASE_URL=mysql://root:{s}@localhost/app", pw())
    add("smtp-auth-plain", "AUTH PLAIN {s}", _b64(rng, 24))
    # Secret-named keys in structured input (MCP tools).
    for key in ("secret", "clientSecret", "db_password", "apiToken", "passphrase", "credentials", "sessionid"):
        needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
        out.append(Shape(f"mcp-{key}", {"host": "db", key: needle}, needle))
    needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
    out.append(Shape("mcp-nested-list", {"config": {"tokens": [{"v": needle}]}}, needle))
    needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
    out.append(Shape("mcp-key-value", {"params": [{"key": "client_secret", "value": needle}]}, needle))
    needle = "plain" + _pick(rng, string.ascii_lowercase, 14)
    out.append(Shape("mcp-Name-Value", {"Environment": [{"Name": "SECRET_KEY", "Value": needle}]}, needle))
    return out


def secret_shapes() -> list[Shape]:
    """Every secret shape: the original corpus, issue 24's and the further ones (150+)."""
    first = [Shape(name, text, needle) for name, text, needle in corpus()]
    first += [Shape("structured-" + key, value, needle) for key, value, needle in structured()]
    return first + ISSUE_24_SHAPES + more_shapes()


_ORDINARY = [
    # Error messages that talk about credentials without holding one.
    "Error response from daemon: unauthorized: incorrect username or password",
    "unauthorized: authentication required",
    "fatal: Authentication failed for 'https://github.com/octo/repo.git/'",
    "remote: Invalid username or password.",
    "git@github.com: Permission denied (publickey).",
    'psql: error: connection to server at "db" (10.0.0.5), port 5432 failed: FATAL:  password authentication failed for user "app"',
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
    "sudo: a password is required",
    "sudo: a terminal is required to read the password; either use the -S option to read from standard input",
    "Enter passphrase for key '/home/dev/.ssh/id_ed25519':",
    "Password:",
    "[sudo] password for dev:",
    "Error: 401 Unauthorized",
    "HTTP/1.1 403 Forbidden",
    "token expired, please log in again",
    "Error: invalid token",
    "The security token included in the request is invalid.",
    "An error occurred (InvalidClientTokenId) when calling the GetCallerIdentity operation",
    "error: failed to push some refs to 'origin'",
    "npm ERR! code E401",
    'npm ERR! Unable to authenticate, need: Basic realm="GitHub Package Registry"',
    "WARNING! Using --password via the CLI is insecure. Use --password-stdin.",
    "Login Succeeded",
    "Authentication succeeded (publickey).",
    "OAuth2 authorization code flow completed",
    "authorization_pending: the user has not yet completed authorization",
    "KeyError: 'password'",
    "AttributeError: 'NoneType' object has no attribute 'token'",
    "TypeError: authenticate() missing 1 required positional argument: 'password'",
    "ValueError: secret must be at least 32 bytes",
    "ssh: connect to host example.com port 22: Connection refused",
    "curl: (60) SSL certificate problem: unable to get local issuer certificate",
    "E: Unable to locate package libssl-dev",
    "ModuleNotFoundError: No module named 'cryptography'",
    'mypy: error: Incompatible types in assignment (expression has type "str", variable has type "int")',
    "FAILED tests/test_auth.py::test_login_with_wrong_password - AssertionError",
    "tests/test_auth.py::test_token_refresh PASSED",
    "The password must contain at least 12 characters.",
    "Your password has been changed successfully.",
    "Two-factor authentication is enabled for this account.",
    "Please enter your username and password to continue.",
    "Secret scanning found no leaked credentials.",
    "Session expired after 30 minutes of inactivity",
    "kubectl get secrets -n prod",
    "No resources found in default namespace.",
    "secret/db-credentials created",
    'Error from server (NotFound): secrets "db" not found',
    "Warning: Permanently added 'github.com' (ED25519) to the list of known hosts.",
    # Commands that mention credentials without holding one.
    "echo $DB_PASSWORD | docker login -u deploy --password-stdin",
    "docker login ghcr.io",
    "aws sts get-caller-identity",
    "gh auth login --web",
    "gh auth status",
    "git config --global credential.helper store",
    "ssh-keygen -t ed25519 -C dev@example.com",
    "ssh-add ~/.ssh/id_ed25519",
    "openssl req -new -key server.key -out server.csr",
    "openssl rand -hex 32",
    "vault kv get secret/app",
    "passwd dev",
    "htpasswd -c /etc/nginx/.htpasswd alice",
    "keytool -list -keystore app.jks",
    "kubectl create secret generic db --from-file=./password.txt",
    "redis-cli -h cache ping",
    "mysql -u root -p prod",
    "psql -h db -U app -W prod",
    "export GITHUB_TOKEN=$(gh auth token)",
    "export API_KEY=${API_KEY:?missing}",
    "pip install --index-url https://pypi.org/simple requests==2.31.0",
    "npm install --save-dev typescript@5.4.5",
    "poetry add pydantic@^2.7",
    "cargo build --release --features tls",
    "go get github.com/spf13/cobra@v1.8.0",
    "git log --oneline -5",
    "git checkout -b feature/token-refresh",
    "git commit -m 'auth: refresh tokens before they expire'",
    "grep -rn 'password' src/",
    "rg --files-with-matches token",
    "find . -name '*.pem' -newer setup.py",
    "chmod 600 ~/.ssh/id_rsa",
    "ls -la ~/.aws/credentials",
    "cat ~/.netrc | wc -l",
    "pytest -k 'test_secret and not slow' -x -q",
    # Code.
    "def authenticate(user: str, password: str) -> bool:",
    'password = getpass.getpass("Password: ")',
    'token = os.environ["GITHUB_TOKEN"]',
    'api_key = os.getenv("OPENAI_API_KEY")',
    "secret = settings.SECRET_KEY",
    'headers = {"Authorization": f"Bearer {token}"}',
    "if not api_key:\n    raise RuntimeError('set OPENAI_API_KEY')",
    "PASSWORD_MIN_LENGTH = 12",
    "MAX_TOKENS = 4096",
    "max_tokens=1024, temperature=0.2",
    "token_count: 1532",
    "tokens used: 12,345",
    "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')",
    "self.auth = auth or NoAuth()",
    "auth_required = True",
    "from django.contrib.auth import authenticate, login",
    "import { useAuth } from './hooks/useAuth';",
    "const { data: session } = useSession();",
    "author: Jane Doe <jane@example.com>",
    'authors = ["Jane Doe"]',
    "Authored-by: Jane Doe",
    "password: ${{ secrets.REGISTRY_PASSWORD }}",
    "password: <your-password-here>",
    "api_key: YOUR_API_KEY",
    "token: null",
    "password = None",
    "secret: ''",
    'PASSWORD_FIELD = "password"',
    "class TokenExpiredError(Exception):",
    "def rotate_secret(self, secret_id: str) -> None:",
    "SELECT id, username FROM users WHERE password_hash IS NULL;",
    "ALTER TABLE users ADD COLUMN password_hash TEXT;",
    "password_reset_url = reverse('password_reset')",
    'return {"token_type": "bearer", "expires_in": 3600}',
    "csrf_token = request.COOKIES.get('csrftoken')",
    'secretsmanager.get_secret_value(SecretId="prod/db")',
    "valueFrom:\n  secretKeyRef:\n    name: db\n    key: password",
    'env:\n  - name: LOG_LEVEL\n    value: "debug"',
    '[{"name": "PORT", "value": "8080"}, {"name": "LOG_LEVEL", "value": "info"}]',
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  LOG_LEVEL: info\n  FEATURE_FLAGS: search,export\n",
    "for (let i = 0; i < tokens.length; i++) { out.push(tokens[i]); }",
    "x = a if b else c  # password rules live in validators.py",
    '<input type="password" name="password" autocomplete="current-password">',
    "@app.route('/login', methods=['POST'])",
    "fn verify_token(token: &str) -> Result<Claims, Error> {",
    "func (c *Client) SetToken(token string) {",
    # Paths, hashes, identifiers, versions, data.
    "/home/dev/projects/omcm/omcm_core/redact.py",
    "/usr/lib/python3/dist-packages/secretstorage/collection.py",
    "src/components/PasswordResetForm.tsx",
    "C:\\Users\\dev\\AppData\\Roaming\\npm\\node_modules",
    "~/.config/gcloud/application_default_credentials.json",
    "/var/run/secrets/kubernetes.io/serviceaccount/token",
    "Python 3.12.3 (main, Apr 10 2024, 05:33:47) [GCC 13.2.0] on linux",
    "requests 2.31.0, urllib3 2.2.1, certifi 2024.2.2",
    "node v20.12.2, npm 10.5.0",
    "Successfully installed detect-secrets-1.5.0 pyyaml-6.0.1",
    "platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0",
    "Step 4/9 : RUN pip install -r requirements.txt",
    "Listening on http://127.0.0.1:8000 (Press CTRL+C to quit)",
    "2024-05-01T12:00:03.123Z INFO server started in 153ms",
    "Connected to db.internal:5432 as app",
    '192.168.1.20 - - [01/May/2024:12:00:03 +0000] "GET /health HTTP/1.1" 200 2',
    "12:30:45 up 3 days,  4:02,  2 users,  load average: 0.15, 0.10, 0.05",
    "fe80::1ff:fe23:4567:890a",
    "00:1a:2b:3c:4d:5e",
    "tests/test_redact.py:42:5: E501 line too long (130 > 120 characters)",
    'omcm_core/redact.py:88: error: Name "x" is not defined',
    "https://github.com/octo/repo/pull/123/files",
    "https://docs.example.com/guide/authentication#tokens",
    "https://example.com/search?q=reset+password&page=2",
    "https://user@example.com/path",
    "mailto:security@example.com",
    "Content-Type: application/json; charset=utf-8",
    "Accept-Encoding: gzip, deflate, br",
    "Cache-Control: no-cache",
    "The quick brown fox jumps over the lazy dog.",
    "Refactor the login page so the password field shows its strength.",
    "TODO: move the token refresh into a background task",
    "Total: 3 passed, 1 failed, 2 skipped in 4.21s",
]


def ordinary_texts(seed: int = 5) -> list[str]:
    """Texts that must come out of masking unchanged: errors, commands, code, paths, hashes, ids, data."""
    rng = random.Random(seed)
    out = list(_ORDINARY)
    for _ in range(5):
        out.append("commit " + _pick(rng, HEX, 40))
        out.append(f"Merge: {_pick(rng, HEX, 7)} {_pick(rng, HEX, 7)}")
        out.append("request id " + "-".join(_pick(rng, HEX, n) for n in (8, 4, 4, 4, 12)))
        out.append("sha256:" + _pick(rng, HEX, 64))
    out.append("RUN echo 'data' | sha1sum  # " + _pick(rng, HEX, 40))
    out.append("integrity sha512-" + _b64(rng, 64))
    out.append('"integrity": "sha384-' + _b64(rng, 48) + '"')
    out.append("github.com/spf13/cobra v1.8.0 h1:" + _b64(rng, 32))
    out.append("--hash=sha256:" + _pick(rng, HEX, 64))
    out.append("Digest: sha256:" + _pick(rng, HEX, 64))
    out.append("docker.io/library/postgres@sha256:" + _pick(rng, HEX, 64))
    out.append("img = 'data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(20)).decode() + "'")
    out.append("echo " + base64.b64encode(b"hello world, this is not a secret").decode() + " | base64 -d")
    out.append("content: " + base64.b64encode(b"# README\nThis project does things.\n").decode())
    out.append('ETag: "' + _pick(rng, HEX, 32) + '"')
    out.append("X-Request-Id: " + "-".join(_pick(rng, HEX, n) for n in (8, 4, 4, 4, 12)))
    out.append("go.sum: golang.org/x/crypto v0.22.0/go.mod h1:" + _b64(rng, 32))
    out.append("created object " + _pick(rng, HEX, 24))
    return out
