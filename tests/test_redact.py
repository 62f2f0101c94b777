"""omcm_core.redact: one fast case per rule, each also with the same kind of secret twice.

The end-to-end check (tests/reliability/test_secrets.py) runs real hooks and
takes seconds; these catch a removed or weakened rule in milliseconds.
"""

from __future__ import annotations

import random
import string

import pytest

from omcm_core.redact import mask, mask_structured, secret_key

ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM, seed: list = [0]) -> str:  # noqa: B006 - a counter on purpose
    seed[0] += 1
    rng = random.Random(seed[0])
    return "".join(rng.choice(alphabet) for _ in range(n))


def pem(kind: str) -> tuple[str, str]:
    body = rand(64, ALNUM + "+/")
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n{rand(64)}\n-----END {kind}PRIVATE KEY-----", body


# (rule, template with {s}, a maker of the secret part). Split literals keep scanners off this file.
CASES = [
    ("private", "notes <private>{s}</private> end", lambda: rand(24)),
    ("aws-access-key", "aws_access_key_id {s}", lambda: "AK" + "IA" + rand(16, string.ascii_uppercase + string.digits)),
    ("github-token", "token {s}", lambda: "gh" + "p_" + rand(36)),
    ("github-fine-grained", "GH={s}", lambda: "github" + "_pat_" + rand(60)),
    ("gitlab-token", "PRIVATE-TOKEN: {s}", lambda: "gl" + "pat-" + rand(20)),
    ("slack-bot", "bot {s}", lambda: "xo" + "xb-" + rand(12, string.digits) + "-" + rand(24)),
    ("slack-app", "app {s}", lambda: "xa" + "pp-1-A" + rand(10, string.digits) + "-" + rand(20)),
    (
        "slack-webhook",
        "post {s} now",
        lambda: "https://hooks.slack.com/services/T" + rand(10) + "/B" + rand(10) + "/" + rand(24),
    ),
    ("stripe-key", "key {s}", lambda: "sk" + "_live_" + rand(24)),
    ("anthropic-key", "key {s}", lambda: "sk-" + "ant-api03-" + rand(60)),
    ("openai-key", "key {s}", lambda: "sk-" + "proj-" + rand(48)),
    ("google-api-key", "?key={s}", lambda: "AI" + "za" + rand(35)),
    ("jwt", "Cookie: s={s}", lambda: "ey" + "J" + rand(20) + ".ey" + "J" + rand(40) + "." + rand(43)),
    ("url-credentials", "psql postgresql://app:{s}@db:5432/prod", lambda: rand(20)),
    ("url-password-with-at", "git clone https://bob:{s}@example.com/r.git", lambda: rand(8) + "@" + rand(8)),
    ("bearer", "Authorization: Bearer {s}", lambda: rand(40)),
    ("assignment", "export DB_PASSWORD={s}", lambda: rand(18)),
    ("assignment-json", '{{"api_key": "{s}"}}', lambda: rand(32)),
    ("cli-mysql", "mysql -u root -p{s} prod", lambda: rand(16)),
    ("cli-curl-user", "curl -u admin:{s} https://api.example.com", lambda: rand(16)),
    ("cli-psql-password", "psql --password {s} -h db", lambda: rand(16)),
    ("cli-sshpass", "sshpass -p {s} ssh deploy@host", lambda: rand(16)),
    ("cli-token-flag", "deploy --token {s} --env prod", lambda: rand(16)),
    ("cli-password-equals", "mysql --user=root --password={s} prod", lambda: rand(16)),
]


@pytest.mark.parametrize("rule,template,make", CASES, ids=[c[0] for c in CASES])
def test_each_rule_masks_its_secret_and_keeps_the_rest(rule, template, make):
    secret = make()
    text = f"before {template.format(s=secret)} after"
    masked = mask(text)
    assert secret not in masked
    assert masked.startswith("before ") and masked.endswith(" after")


@pytest.mark.parametrize("rule,template,make", CASES, ids=[c[0] for c in CASES])
def test_the_same_kind_twice_masks_both(rule, template, make):
    first, second = make(), make()
    masked = mask(f"{template.format(s=first)}\nand again\n{template.format(s=second)}")
    assert first not in masked and second not in masked and "and again" in masked


@pytest.mark.parametrize("kind", ["RSA ", "EC ", "OPENSSH ", ""])
def test_private_keys_whole_and_twice(kind):
    (one, body1), (two, body2) = pem(kind), pem(kind)
    masked = mask(f"key:\n{one}\nmore text\n{two}\n")
    assert body1 not in masked and body2 not in masked and "more text" in masked
    assert masked.count("[REDACTED:private-key]") == 2


def test_a_private_key_without_its_end_is_masked_to_the_end():
    text, body = pem("RSA ")
    assert body not in mask(text.split("-----END")[0])


@pytest.mark.parametrize(
    "harmless",
    [
        "mkdir -p build",
        "ssh -p 2222 host",
        "psql --password -h db",
        "mysql -p dbname",
        "pip install tokenizers",
        "max_tokens: 5",
    ],
)
def test_ordinary_commands_are_left_alone(harmless):
    assert mask(harmless) == harmless


def test_structured_input_is_masked_by_key_name():
    value = {
        "password": "hunter2hunter2",
        "api_key": "plainvalue1",
        "apiKey": "plainvalue2",
        "nested": [{"X-Auth-Token": "plainvalue3", "note": "kept"}],
        "max_tokens": 1000,
        "enabled": True,
        "query": "mysql -pS3cretValue9 db",
    }
    masked = mask_structured(value)
    assert masked["password"] == masked["api_key"] == masked["apiKey"] == "[REDACTED]"
    assert masked["nested"] == [{"X-Auth-Token": "[REDACTED]", "note": "kept"}]
    assert masked["max_tokens"] == 1000 and masked["enabled"] is True
    assert "S3cretValue9" not in masked["query"]
    assert value["password"] == "hunter2hunter2"  # the input is not changed


@pytest.mark.parametrize(
    "name,secret",
    [
        ("password", True),
        ("client_secret", True),
        ("accessKey", True),
        ("GITHUB_TOKEN", True),
        ("keyboard", False),
        ("max_tokens", False),
        ("author", False),
        ("passenger", False),
    ],
)
def test_secret_key_names(name, secret):
    assert secret_key(name) is secret


@pytest.mark.parametrize(
    "hostile",
    [
        "sk-" + "a" * 200_000,
        "https://" + "u:" * 100_000,
        "mysql " + " -u" * 60_000,
        "x://a:" + "@" * 200_000,
        "password=" * 50_000,
        "-----BEGIN RSA PRIVATE KEY-----" + "A" * 200_000,
    ],
    ids=["long-token", "url-colons", "mysql-flags", "url-ats", "assignments", "pem-unended"],
)
def test_long_inputs_do_not_blow_up(hostile):
    # Each rule is bounded; a quadratic scan of these inputs would not finish in the suite's lifetime.
    assert isinstance(mask(hostile), str)


def test_log_lines_are_masked_by_key_name_and_by_shape(tmp_path):
    from omcm_core import log

    log.configure(tmp_path, level="info")
    try:
        log.get_logger(plugin="t").info(
            "login", password="plainvalue1", note="key AK" + "IA" + "ABCDEFGHIJKLMNOP", count=3
        )
        text = (tmp_path / "logs" / "omcm.jsonl").read_text()
    finally:
        log.configure(None)
    assert "plainvalue1" not in text and "ABCDEFGHIJKLMNOP" not in text
    assert '"count": 3' in text and '"event": "login"' in text


def test_mask_head_and_tail_see_a_secret_cut_by_the_limit():
    from omcm_core.redact import mask_head, mask_tail

    token = "gh" + "p_" + rand(36)
    text = "a " * 3000 + token + " b" * 3000
    cut = text.index(token) + 14  # the limit falls 14 characters into the token
    assert token[:10] not in mask_head(text, cut) and len(mask_head(text, cut)) <= cut
    from_end = len(text) - cut
    assert token[-10:] not in mask_tail(text, from_end) and len(mask_tail(text, from_end)) <= from_end
    key, body = pem("RSA ")
    text = "x\n" * 5000 + key + "\n" + "y\n" * 10
    kept = mask_tail(text, 200)  # the kept tail holds body lines, not the BEGIN line
    assert body[-20:] not in kept and not any(line in kept for line in key.splitlines()[1:-1])


def test_mask_head_drops_what_its_own_window_split():
    from omcm_core.redact import mask_head

    # A PEM key early in the text shrinks to a marker; the window's end then cuts a token
    # in half. The unrecognisable half must not slide into the kept part.
    key, _body = pem("")
    token = "gh" + "p_" + rand(36)
    text = key + " " + "z" * 40 + " " + token + " tail"
    naive = mask(text[: len(key) + 60])[:100]  # what a plain "mask the window, keep 100" would show
    assert token[:8] in naive
    assert token[:8] not in mask_head(text, 100, margin=len(key) - 40)
