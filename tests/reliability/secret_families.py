"""Secrets by family (issue 34 item 5): a generated corpus split into a development and a held-out part.

Each family (a ``.netrc`` spread over lines, a URL whose path is the secret, a
password piped into ``sudo -S``, ...) is a list of *variants*: small functions
that draw one realistic text with its random part (the needle that must
disappear) from a seeded generator, varying key names, hosts, quoting and
layout. Look-alike families (publishable keys, ``usage:`` lines, error
messages about tokens, placeholders, ``${VAR}`` references, ordinary data)
draw texts that must come out of masking unchanged.

The split, fixed before any rule was written against it: within every family
the variants at even positions (0, 2, 4, ...) form the DEVELOPMENT part and
those at odd positions the HELD-OUT part; development items are drawn with
seed 1, held-out items with seed 2. Rules may be written against
:func:`development` only; :func:`held_out` measures how they generalise to
variants (layouts, key names, providers) they were not written for.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable
from typing import Any

from secret_corpus import Shape

ALNUM = string.ascii_letters + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
SECRET_DRAWS = 5  # items drawn per secret variant
PLAIN_DRAWS = 6  # texts drawn per look-alike variant

Secret = Callable[[random.Random], tuple[Any, str]]
Plain = Callable[[random.Random], Any]


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def pw(rng: random.Random) -> str:
    """A password people choose: letters, digits, sometimes a symbol; never a word."""
    body = pick(rng, ALNUM, rng.randint(12, 20))
    return body[:6] + rng.choice(["", "!", "#", "_", "-", "."]) + body[6:] if rng.random() < 0.5 else body


def tok(rng: random.Random, n: int = 32) -> str:
    return pick(rng, ALNUM, n)


def host(rng: random.Random) -> str:
    return (
        rng.choice(["db", "api", "git", "ci", "registry", "mail", "cache", "vault"])
        + "."
        + rng.choice(["internal", "example.com", "corp.net", "acme.io", "prod.local"])
    )


def user(rng: random.Random) -> str:
    return rng.choice(["alice", "bob", "deploy", "svc-build", "admin", "app_user", "jenkins", "root"])


def b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


# --- secret families -------------------------------------------------------------------------


def _netrc_lines(rng):
    s = pw(rng)
    ind = rng.choice(["", "  ", "\t", "    "])
    return f"machine {host(rng)}\n{ind}login {user(rng)}\n{ind}password {s}\n", s


def _netrc_password_alone(rng):
    s = pw(rng)
    return f"$ cat ~/.netrc\nmachine {host(rng)} login {user(rng)}\npassword {s}\n", s


def _netrc_default(rng):
    s = pw(rng)
    return f"default\n  login {user(rng)}\n  password {s}\n", s


def _netrc_account(rng):
    s = pw(rng)
    return f"machine {host(rng)}\n    login {user(rng)}\n    password {s}\n    account ops\nmacdef init\n", s


def _fetchmailrc(rng):
    s = pw(rng)
    return f"poll {host(rng)} protocol IMAP\n  user '{user(rng)}' there with password '{s}' is local here\n", s


def _netrc_then_macro(rng):
    s = pw(rng)
    return f"machine {host(rng)}\nlogin {user(rng)}\npassword\t{s}\nmachine other.host login x password-less\n", s


NETRC: list[Secret] = [
    _netrc_lines,
    _netrc_password_alone,
    _netrc_default,
    _netrc_account,
    _fetchmailrc,
    _netrc_then_macro,
]


def _ini(rng):
    s = pw(rng)
    key = rng.choice(["password", "db_password", "passwd", "secret_key"])
    return f"[{rng.choice(['database', 'client', 'smtp'])}]\nhost = {host(rng)}\n{key} = {s}\n", s


def _yaml(rng):
    s = pw(rng)
    key = rng.choice(["password", "secret", "apiToken", "api_key"])
    return f"database:\n  host: {host(rng)}\n  user: {user(rng)}\n  {key}: {s}\n", s


def _toml(rng):
    s = pw(rng)
    return f'[tool.{rng.choice(["poetry", "db", "mail"])}]\nusername = "{user(rng)}"\npassword = "{s}"\n', s


def _env_file(rng):
    s = pw(rng)
    key = rng.choice(["DB_PASS", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASSWORD", "SMTP_PASS"])
    return f"# .env\nDEBUG=false\n{key}={s}\nPORT=8080\n", s


def _pgpass_star(rng):
    s = pw(rng)
    return f"*:*:*:{user(rng)}:{s}\n", s


def _docker_config(rng):
    s = pw(rng)
    auth = b64(f"{user(rng)}:{s}")
    return '{\n  "auths": {\n    "' + host(rng) + '": {\n      "auth": "' + auth + '"\n    }\n  }\n}', auth


def _my_cnf(rng):
    s = pw(rng)
    return f'[client]\nuser={user(rng)}\npassword="{s}"\nhost={host(rng)}\n', s


def _npmrc(rng):
    s = "npm_" + tok(rng, 36) if rng.random() < 0.5 else b64(f"{user(rng)}:{pw(rng)}")
    key = "_authToken" if s.startswith("npm_") else "_auth"
    return f"registry=https://registry.npmjs.org/\n//{host(rng)}/:{key}={s}\nalways-auth=true\n", s


def _pgpass_quoted_port(rng):
    s = pw(rng)
    return f"{host(rng)}:5432:*:{user(rng)}:{s}\nlocalhost:*:*:postgres:{pw(rng)}\n", s


def _pypirc(rng):
    s = pw(rng)
    return (
        f"[distutils]\nindex-servers = private\n\n[private]\nrepository = https://{host(rng)}/\nusername = {user(rng)}\npassword: {s}\n",
        s,
    )


def _yaml_nested(rng):
    s = pw(rng)
    return f"smtp:\n  auth:\n    user: {user(rng)}\n    pass: {s}\n", s


def _properties(rng):
    s = pw(rng)
    key = rng.choice(["spring.datasource.password", "db.password", "mail.smtp.password"])
    return f"spring.datasource.url=jdbc:postgresql://{host(rng)}/app\n{key}={s}\n", s


CONFIG: list[Secret] = [
    _ini,
    _yaml,
    _toml,
    _env_file,
    _pgpass_star,
    _docker_config,
    _my_cnf,
    _npmrc,
    _pgpass_quoted_port,
    _pypirc,
    _yaml_nested,
    _properties,
]


def _url_empty_user(rng):
    s = pw(rng)
    scheme = rng.choice(["https", "redis", "rediss", "http"])
    return f"{scheme}://:{s}@{host(rng)}:{rng.choice([6379, 443, 8080])}/0", s


def _url_at_user(rng):
    s = pw(rng)
    return f"git clone https://{user(rng)}@corp.com:{s}@{host(rng)}/team/repo.git", s


def _url_empty_user_in_env(rng):
    s = pw(rng)
    return f"REDIS_URL=redis://:{s}@{host(rng)}:6379", s


def _url_email_user_db(rng):
    s = pw(rng)
    return f"psql 'postgresql://{user(rng)}%40corp.com:{s}@{host(rng)}:5432/app'", s


def _url_amqp(rng):
    s = pw(rng)
    return f"BROKER_URL=amqp://{user(rng)}:{s}@{host(rng)}:5672//", s


def _url_at_user_plain(rng):
    s = pw(rng)
    return f"Cloning into 'repo'...\nremote: https://{user(rng)}@example.org:{s}@{host(rng)}/r.git", s


def _url_jdbc(rng):
    s = pw(rng)
    return f"jdbc:mysql://{host(rng)}:3306/app?user={user(rng)}&password={s}&useSSL=true", s


def _url_ipv6(rng):
    s = pw(rng)
    return f"mongodb://{user(rng)}:{s}@[2001:db8::1]:27017/admin", s


URL_CREDENTIALS: list[Secret] = [
    _url_empty_user,
    _url_at_user,
    _url_empty_user_in_env,
    _url_email_user_db,
    _url_amqp,
    _url_at_user_plain,
    _url_jdbc,
    _url_ipv6,
]


def _slack_workflow(rng):
    s = pick(rng, ALNUM, 24)
    return (
        f"curl -X POST https://hooks.slack.com/triggers/T{pick(rng, string.ascii_uppercase + string.digits, 9)}/{pick(rng, string.digits, 13)}/{s}",
        s,
    )


def _teams(rng):
    s = pick(rng, HEX, 32)
    g1, g2, g3 = (
        uuid.UUID(int=rng.getrandbits(128)),
        uuid.UUID(int=rng.getrandbits(128)),
        uuid.UUID(int=rng.getrandbits(128)),
    )
    return f"TEAMS_WEBHOOK=https://acme.webhook.office.com/webhookb2/{g1}@{g2}/IncomingWebhook/{s}/{g3}", s


def _zapier(rng):
    s = pick(rng, LOWER_DIGITS, 7)
    n = pick(rng, string.digits, 7)
    return (
        f"requests.post('https://hooks.zapier.com/hooks/catch/{n}/{s}{pick(rng, LOWER_DIGITS, 1)}/', json=data)",
        n + "/" + s,
    )


def _discord_plain(rng):
    s = pick(rng, ALNUM + "_-", 68)
    return f"webhook: https://discord.com/api/webhooks/{pick(rng, string.digits, 18)}/{s}", s


def _mattermost(rng):
    s = pick(rng, LOWER_DIGITS, 26)
    return f'curl -i -X POST -d \'payload={{"text": "done"}}\' https://chat.{host(rng)}/hooks/{s}', s


def _google_chat(rng):
    s = pick(rng, ALNUM + "_-", 43)
    return (
        f"POST https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, ALNUM, 7)}/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={s}",
        s,
    )


def _ifttt(rng):
    s = pick(rng, ALNUM + "_-", 22)
    return f"https://maker.ifttt.com/trigger/deploy_done/with/key/{s}", s


def _slack_services_in_json(rng):
    s = pick(rng, ALNUM, 24)
    return '{"channel": "#ops", "url": "https://hooks.slack.com/services/T0' + pick(
        rng, string.ascii_uppercase, 8
    ) + "/B0" + pick(rng, string.ascii_uppercase, 8) + "/" + s + '"}', s


WEBHOOKS: list[Secret] = [
    _slack_workflow,
    _teams,
    _zapier,
    _discord_plain,
    _mattermost,
    _google_chat,
    _ifttt,
    _slack_services_in_json,
]


def _qs_mixed(rng):
    s = tok(rng, 32)
    return f"GET /v2/report?format=csv&api_key={s}&page=2", s


def _qs_access_key(rng):
    s = tok(rng, 28)
    name = rng.choice(["access_key", "accessKey", "private_token", "auth_token"])
    return f"curl 'https://{host(rng)}/v1/items?{name}={s}'", s


def _qs_sig(rng):
    s = pick(rng, ALNUM + "%", 44)
    return f"https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&se=2026-12-01&sp=r&sig={s}", s


def _qs_camel(rng):
    s = tok(rng, 30)
    name = rng.choice(["apiToken", "authToken", "secretKey", "sessionToken"])
    return f"fetch(`https://{host(rng)}/data?limit=10&{name}={s}`)", s


def _qs_token(rng):
    s = tok(rng, 40)
    return f"wss://{host(rng)}/socket?token={s}&v=2", s


def _qs_client_secret(rng):
    s = pick(rng, ALNUM + "~_.-", 34)
    return f"POST /oauth2/token grant_type=client_credentials&client_id=app&client_secret={s}", s


def _qs_apikey_first(rng):
    s = pick(rng, HEX, 32)
    return f"https://api.{host(rng)}/forecast?appid={s}&q=London", s


def _qs_password(rng):
    s = pw(rng)
    return f"https://{host(rng)}/login?username={user(rng)}&pass={s}", s


QUERY_STRINGS: list[Secret] = [
    _qs_mixed,
    _qs_access_key,
    _qs_sig,
    _qs_camel,
    _qs_token,
    _qs_client_secret,
    _qs_apikey_first,
    _qs_password,
]


def _sudo_echo(rng):
    s = pw(rng)
    q = rng.choice(["", "'", '"'])
    return f"echo {q}{s}{q} | sudo -S apt-get install -y nginx", s


def _sudo_printf(rng):
    s = pw(rng)
    return f"printf '%s\\n' '{s}' | sudo -S -k systemctl restart app", s


def _passwd_stdin(rng):
    s = pw(rng)
    return f'echo "{s}" | passwd --stdin {user(rng)}', s


def _sudo_herestring(rng):
    s = pw(rng)
    return f"sudo -S -v <<< '{s}'", s


def _docker_password_stdin(rng):
    s = pw(rng)
    return f"echo {s} | docker login -u {user(rng)} --password-stdin {host(rng)}", s


def _echo_n_sudo(rng):
    s = pw(rng)
    return f"ssh {host(rng)} \"echo -n '{s}' | sudo -S reboot\"", s


def _kinit(rng):
    s = pw(rng)
    return f"echo '{s}' | kinit {user(rng)}@CORP.NET", s


def _sudo_echo_e(rng):
    s = pw(rng)
    return f'echo -e "{s}\\n" | sudo --stdin whoami', s


PIPED_PASSWORDS: list[Secret] = [
    _sudo_echo,
    _sudo_printf,
    _passwd_stdin,
    _sudo_herestring,
    _docker_password_stdin,
    _echo_n_sudo,
    _kinit,
    _sudo_echo_e,
]


def _b64_env(rng):
    s = pw(rng)
    blob = b64(f"DB_PASSWORD={s}\n")
    return f"echo {blob} | base64 -d > .env", blob


def _b64_json_token(rng):
    blob = b64('{"token": "' + tok(rng, 32) + '"}')
    return f"SECRET_JSON={blob}", blob


def _b64_github(rng):
    blob = b64("ghp_" + tok(rng, 36))
    return f"Decoded value must be passed as: {blob}", blob


def _b64_k8s_output(rng):
    blob = b64(f"password: {pw(rng)}\n")
    return f"$ kubectl get cm app -o jsonpath='{{.binaryData.cfg}}'\n{blob}", blob


def _b64_basic_userpass(rng):
    blob = b64(f"{user(rng)}:{pw(rng)}")
    return f"proxy header X-Proxy-Authorization: {blob}", blob


def _b64_aws(rng):
    blob = b64("aws_secret_access_key=" + pick(rng, ALNUM + "/+", 40))
    return f"CREDS_B64='{blob}'", blob


def _b64_url(rng):
    blob = b64(f"postgresql://{user(rng)}:{pw(rng)}@{host(rng)}/app")
    return f"DATABASE_URL_B64: {blob}", blob


def _b64_stripe(rng):
    blob = b64("sk" + "_live_" + tok(rng, 24))
    return f"  data:\n    key: {blob}\n", blob


BASE64_WRAPPED: list[Secret] = [
    _b64_env,
    _b64_json_token,
    _b64_github,
    _b64_k8s_output,
    _b64_basic_userpass,
    _b64_aws,
    _b64_url,
    _b64_stripe,
]


def _prefixed(prefix: str, alphabet: str, n: int, template: str) -> Secret:
    def draw(rng):
        s = prefix + pick(rng, alphabet, n)
        return template.format(s=s), s

    draw.__name__ = "_key_" + prefix.strip("_-.")
    return draw


SERVICE_KEYS: list[Secret] = [
    _prefixed("xai-", ALNUM, 80, "Using key {s}"),
    _prefixed("sbp_", HEX, 40, "supabase login --token {s}"),
    _prefixed("pplx-", ALNUM, 48, "Authorization header set from {s}"),
    _prefixed("pat-na1-", HEX, 36, "HubSpot private app token: {s}"),
    _prefixed("nvapi-", ALNUM + "_-", 64, "client = OpenAI(base_url=url, api_key='{s}')"),
    _prefixed("SG.", ALNUM + "_-", 66, "created {s}"),
    _prefixed("tvly-", ALNUM, 32, "TAVILY={s}"),
    _prefixed("re_", ALNUM, 32, "Resend key: {s}"),
    _prefixed("phx_", ALNUM, 43, "personal api key {s} created"),
    _prefixed("bkua_", HEX, 40, "export BUILDKITE={s}"),
    _prefixed("CFPAT-", ALNUM + "_-", 43, "contentful space list --management-token {s}"),
    _prefixed("pscale_tkn_", ALNUM + "_-", 43, "token: {s}"),
    _prefixed("tskey-auth-", ALNUM, 40, "tailscale up --authkey={s}"),
    _prefixed("rnd_", ALNUM, 32, "RENDER={s}"),
    _prefixed("xkeysib-", HEX, 80, "key {s}"),
    _prefixed("lsv2_pt_", HEX, 42, "LANGCHAIN={s}"),
    _prefixed("dt0c01.", string.ascii_uppercase + string.digits, 88, "Api-Token {s}"),
    _prefixed("fo1_", ALNUM + "_-", 43, "FLY={s}"),
]


def _mcp_passcode(rng):
    s = pick(rng, string.digits, 8)
    return {"account": user(rng), "passcode": s}, s


def _mcp_headers_pairs(rng):
    s = tok(rng, 30)
    return {"url": f"https://{host(rng)}/v1", "headers": [{"name": "Authorization", "value": f"Bearer {s}"}]}, s


def _mcp_pin(rng):
    s = pick(rng, string.digits, 8)
    return {"card": "visa", "pin": s}, s


def _mcp_header_lists(rng):
    s = tok(rng, 30)
    return {"method": "GET", "headers": [["Accept", "application/json"], ["X-Api-Key", s]]}, s


def _mcp_secret_answer(rng):
    s = pick(rng, string.ascii_lowercase, 12)
    return {"user": user(rng), "secretAnswer": s}, s


def _mcp_headers_key_value(rng):
    s = tok(rng, 30)
    return {"request": {"headers": [{"key": "X-Auth-Token", "value": s}]}}, s


def _mcp_otp(rng):
    s = pick(rng, string.digits, 8)
    return {"user": user(rng), rng.choice(["otp", "mfa_code", "totp"]): s}, s


def _mcp_header_tuple_cookie(rng):
    s = tok(rng, 30)
    return {"http": {"headers": [["Cookie", f"sid={s}"], ["User-Agent", "x"]]}}, s


def _mcp_secret_star(rng):
    s = pick(rng, string.ascii_lowercase, 14)
    return {"name": "vault", rng.choice(["secretValue", "secret_value", "secretText"]): s}, s


def _mcp_pairs_header_field(rng):
    s = tok(rng, 30)
    return {"headers": [{"header": "Authorization", "value": "token " + s}]}, s


STRUCTURED: list[Secret] = [
    _mcp_passcode,
    _mcp_headers_pairs,
    _mcp_pin,
    _mcp_header_lists,
    _mcp_secret_answer,
    _mcp_headers_key_value,
    _mcp_otp,
    _mcp_header_tuple_cookie,
    _mcp_secret_star,
    _mcp_pairs_header_field,
]


def _json_escaped(rng):
    s = tok(rng, 24)
    return '{"input": "{\\"api_key\\": \\"' + s + '\\"}"}', s


def _glued_token(rng):
    s = "ghp_" + tok(rng, 36)
    return f"x{s}", s


def _set_x_trace(rng):
    s = pw(rng)
    return f"+ export DEPLOY_TOKEN={s}\n+ ./deploy.sh", s


def _curl_user_empty(rng):
    s = pw(rng)
    return f"curl -u :{s} https://{host(rng)}/api", s


def _libpq(rng):
    s = pw(rng)
    return f'psycopg2.connect("host={host(rng)} dbname=app user={user(rng)} password={s}")', s


def _http_dump(rng):
    s = tok(rng, 40)
    return f"> GET /user HTTP/1.1\n> Host: api.github.com\n> Authorization: token {s}\n> Accept: */*", s


OTHERS: list[Secret] = [_json_escaped, _glued_token, _set_x_trace, _curl_user_empty, _libpq, _http_dump]

SECRET_FAMILIES: dict[str, list[Secret]] = {
    "netrc": NETRC,
    "config": CONFIG,
    "url-credentials": URL_CREDENTIALS,
    "webhook": WEBHOOKS,
    "query-string": QUERY_STRINGS,
    "piped-password": PIPED_PASSWORDS,
    "base64": BASE64_WRAPPED,
    "service-key": SERVICE_KEYS,
    "structured": STRUCTURED,
    "others": OTHERS,
}


# --- look-alike families ---------------------------------------------------------------------


def _pk(rng):
    return "pk_" + rng.choice(["live", "test"]) + "_" + tok(rng, rng.choice([24, 34, 99]))


PUBLISHABLE: list[Plain] = [
    lambda rng: f"STRIPE_PUBLISHABLE_KEY={_pk(rng)}",
    lambda rng: f"const stripe = Stripe('{_pk(rng)}');",
    lambda rng: f'"publishableKey": "{_pk(rng)}"',
    lambda rng: f'<script data-key="{_pk(rng)}"></script>',
    lambda rng: f"NEXT_PUBLIC_STRIPE_KEY={_pk(rng)}",
    lambda rng: f"Publishable key: {_pk(rng)}",
    lambda rng: f"stripe.js loaded with {_pk(rng)}",
    lambda rng: f'window.STRIPE_PK = "{_pk(rng)}";',
]


def _prog(rng):
    return rng.choice(["mysql", "psql", "mycli", "deploy", "vault", "pgcli", "redis-cli"])


USAGE: list[Plain] = [
    lambda rng: f"usage: {_prog(rng)} [-h] [--user USER] [--password PASSWORD] [--host HOST]",
    lambda rng: "  -p, --password TEXT     Password to connect with (default: prompt)",
    lambda rng: f"Usage: {_prog(rng)} --token TOKEN [--verbose]",
    lambda rng: "  --api-key KEY           API key (or set $API_KEY)",
    lambda rng: f"usage: {_prog(rng)} login [--password-stdin] [--username USERNAME] SERVER",
    lambda rng: "      --password string   Password for the registry",
    lambda rng: f"{_prog(rng)}: error: argument --password: expected one argument",
    lambda rng: "  --secret NAME         name of the secret to read",
]

ERRORS: list[Plain] = [
    lambda rng: "Error: invalid token",
    lambda rng: f"401 Unauthorized: token expired at {rng.randint(10, 23)}:{rng.randint(10, 59)}",
    lambda rng: f'FATAL:  password authentication failed for user "{user(rng)}"',
    lambda rng: "error: Your token has expired. Please run `gh auth login`.",
    lambda rng: "Invalid API key. Check your key and try again.",
    lambda rng: f"WARN token refresh failed (attempt {rng.randint(1, 9)}/10): connection reset",
    lambda rng: "bad credentials: the token is missing the 'repo' scope",
    lambda rng: f"panic: secret {user(rng)} not found in namespace default",
]

PLACEHOLDERS: list[Plain] = [
    lambda rng: "curl -H 'Authorization: Bearer <token>' https://api.example.com/v1/me",
    lambda rng: "Authorization: Bearer YOUR_TOKEN_HERE",
    lambda rng: "export API_KEY=<your-api-key>",
    lambda rng: "password: <your password>",
    lambda rng: '-H "Authorization: Bearer $TOKEN"',
    lambda rng: "token: REPLACE_ME",
    lambda rng: "DB_PASSWORD=changeme  # set a real one in production",
    lambda rng: "Authorization: Bearer {{token}}",
]

REFERENCES: list[Plain] = [
    lambda rng: "password: ${DB_PASSWORD}",
    lambda rng: 'psql --password "${PGPASSWORD}"',
    lambda rng: "echo $SUDO_PASSWORD | sudo -S true",
    lambda rng: "TOKEN=$(cat /run/secrets/token)",
    lambda rng: 'token = os.environ["GITHUB_TOKEN"]',
    lambda rng: "api_key: ${{ secrets.API_KEY }}",
    lambda rng: 'echo "$PASSWORD" | docker login -u me --password-stdin',
    lambda rng: "secret_key = settings.SECRET_KEY",
]


def _ordinary_b64(rng):
    return b64(rng.choice(["hello world, how are you", "# README\nA small tool.\n", "user guide version 2"]))


ORDINARY: list[Plain] = [
    lambda rng: f"commit {pick(rng, HEX, 40)}",
    lambda rng: f"echo {_ordinary_b64(rng)} | base64 -d",
    lambda rng: f"https://{host(rng)}/search?q=rust&page={rng.randint(2, 9)}&sort=desc",
    lambda rng: f"git@github.com:{user(rng)}/repo.git",
    lambda rng: "https://www.npmjs.com/package/@types/node",
    lambda rng: f"ssh://git@{host(rng)}:22/team/repo.git",
    lambda rng: f"request {uuid.UUID(int=rng.getrandbits(128))} took {rng.randint(2, 900)} ms",
    lambda rng: "https://api.slack.com/messaging/webhooks",
    lambda rng: f"content: {_ordinary_b64(rng)}",
    lambda rng: f"https://{user(rng)}@{host(rng)}/repo.git",
    lambda rng: "machine learning login page password reset flow",
    lambda rng: f"sha256:{pick(rng, HEX, 64)}",
    lambda rng: "echo hello | sudo tee /etc/motd",
    lambda rng: "https://docs.example.com/api?version=2&lang=en&section=auth",
]

PLAIN_FAMILIES: dict[str, list[Plain]] = {
    "publishable-key": PUBLISHABLE,
    "usage": USAGE,
    "error-message": ERRORS,
    "placeholder": PLACEHOLDERS,
    "reference": REFERENCES,
    "ordinary": ORDINARY,
}


# Where a look-alike is seen: a terminal, a log line, a pasted doc, CI output.
_CONTEXTS = ["", "$ ", "> ", "  ", "remote: ", "[ci] ", "2026-11-26T09:14:02Z ", "| ", "# ", "stderr: ", "    "]

# --- the split -------------------------------------------------------------------------------

DEV_SEED, HELD_OUT_SEED = 1, 2


def _secrets(parity: int, seed: int) -> list[Shape]:
    rng = random.Random(seed)
    out = []
    for family, variants in SECRET_FAMILIES.items():
        for index, variant in enumerate(variants):
            if index % 2 != parity:
                continue
            for draw in range(SECRET_DRAWS):
                value, needle = variant(rng)
                out.append(Shape(f"{family}/{index}/{draw}", value, needle))
    return out


def _plain(parity: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed + 100)
    out: list[tuple[str, str]] = []
    for family, variants in PLAIN_FAMILIES.items():
        for index, variant in enumerate(variants):
            if index % 2 != parity:
                continue
            texts = {rng.choice(_CONTEXTS) + variant(rng) for _ in range(PLAIN_DRAWS * 4)}
            out += [(f"{family}/{index}/{n}", t) for n, t in enumerate(sorted(texts)[:PLAIN_DRAWS])]
    return out


def development() -> tuple[list[Shape], list[tuple[str, str]]]:
    """The part rules may be written against: even-position variants, seed 1."""
    return _secrets(0, DEV_SEED), _plain(0, DEV_SEED)


def held_out() -> tuple[list[Shape], list[tuple[str, str]]]:
    """The part that measures: odd-position variants, seed 2. Never write a rule against it."""
    return _secrets(1, HELD_OUT_SEED), _plain(1, HELD_OUT_SEED)
