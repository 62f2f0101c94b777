"""Each of omcm's own masking rules, pinned by a fast test of its own (issue 38 items 7, 11 and 13).

``mask(..., library=False)`` runs omcm's rules alone, without detect-secrets: a
rule that regresses fails here, by name, in milliseconds, instead of late in an
end-to-end test where the library happens to cover for it. Each example is one
only its rule masks (checked when it was written by removing that rule), and
its label names the rule, so a neighbour masking it under another name fails too.
The values are built here, not stored: no secret-shaped literal sits in the repo.
"""

from __future__ import annotations

import pytest

from omcm_core import _redact_rules
from omcm_core._team_shapes import shape
from omcm_core.redact import mask, mask_structured

MIXED = "Q7w" + "x9Lm2Pz4Rt8Vb3Nc6Hk1Jd5Fg0Sa"


def rep(text: str, n: int) -> str:
    return (text * (n // len(text) + 1))[:n]


UPPER = rep("A7B3C9D2E5F8G1H4J6K0", 60)
HEX = rep("3f9a0c7e1b5d2a84", 200)
AWS40 = rep("aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY+zA/cD7", 40)

#: (rule, text as a command or its output shows it, the part that must go, the label left in its place)
EXAMPLES = [
    ("private", f"notes: <private>{MIXED}</private>", MIXED, "[PRIVATE]"),
    (
        "private-key",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MIXED}{MIXED}\n-----END OPENSSH PRIVATE KEY-----",
        MIXED,
        None,
    ),
    (
        "putty-key",
        f"PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n{MIXED}\nPrivate-MAC: {HEX[:64]}",
        MIXED,
        None,
    ),
    ("age-key", "AGE-SECRET-KEY-1" + UPPER[:58], UPPER[:58], None),
    ("ansible-vault", f"$ANSIBLE_VAULT;1.1;AES256\n{HEX[:80]}\n{HEX[80:160]}", HEX[:80], None),
    ("aws-access-key", f"id AKIA{UPPER[:16]} here", UPPER[:16], None),
    ("github-token", "got ghp_" + rep(MIXED, 36), rep(MIXED, 36), None),
    ("gitlab-token", f"got glpat-{MIXED[:20]}", MIXED[:20], None),
    ("slack-token", f"got xoxb-1234567890-{MIXED[:24]}", MIXED[:24], None),
    (
        "slack-webhook",
        f"POST https://hooks.slack.com/services/T0{UPPER[:9]}/B0{UPPER[:9]}/{MIXED[:24]}",
        MIXED[:24],
        None,
    ),
    (
        "discord-webhook",
        "POST https://discord.com/api/webhooks/123456789012345678/" + rep(MIXED, 68),
        rep(MIXED, 68),
        None,
    ),
    ("discord-bot-token", f"got M{rep(MIXED, 25)}.{MIXED[:6]}.{rep(MIXED, 30)} ok", rep(MIXED, 25), None),
    ("telegram-bot-token", f"got 123456789:{rep(MIXED, 35)} ok", rep(MIXED, 35), None),
    ("stripe-key", f"got sk_live_{MIXED[:24]}", MIXED[:24], None),
    ("anthropic-key", f"got sk-ant-api03-{rep(MIXED, 90)} ok", rep(MIXED, 90), None),
    ("openai-key", f"got sk-proj-{rep(MIXED, 48)} ok", rep(MIXED, 48), None),
    ("google-api-key", f"got AIza{rep(MIXED, 35)} ok", rep(MIXED, 35), None),
    ("google-oauth", f"got GOCSPX-{MIXED[:28]} ok", MIXED[:28], None),
    ("vault-token", f"got hvs.{MIXED[:24]} ok", MIXED[:24], None),
    ("provider-token", f"got npm_{rep(MIXED, 36)} ok", rep(MIXED, 36), None),
    ("jwt", f"got eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{MIXED} ok", MIXED, None),
    ("password-hash", f"root:$6${MIXED[:16]}${rep(MIXED, 40)}:19000", rep(MIXED, 40), None),
    ("url-credentials", f"psql postgresql://app:{MIXED[:20]}@db.internal/prod", MIXED[:20], None),
    ("url-secret", f"GET https://api.example.com/v1/x?sig={MIXED[:24]}&a=1", MIXED[:24], None),
    ("authorization", f"Authorization: Digest {MIXED[:24]}", MIXED[:24], None),
    ("bearer", f"got bearer {MIXED[:24]}", MIXED[:24], None),
    ("smtp-auth", "C: AUTH PLAIN dXNlcgB1c2VyAHBhc3N3b3Jk" + MIXED[:8], "dXNlcgB1c2VyAHBhc3N3b3Jk", None),
    ("pgpass", f"db.internal:5432:prod:app:{MIXED[:20]}", MIXED[:20], None),
    ("netrc", f"machine api.example.com login me password {MIXED[:20]}", MIXED[:20], None),
    ("mysql -p", f"mysql -u root -p{MIXED[:18]} prod", MIXED[:18], "[REDACTED:cli-password]"),
    ("sshpass", f"sshpass -p {MIXED[:18]} ssh deploy@host", MIXED[:18], "[REDACTED:cli-password]"),
    ("redis-cli -u", f"redis-cli -u redis://default:{MIXED[:20]}@cache:6379", MIXED[:20], "[REDACTED:cli-password]"),
    ("--password=", f"mysql --user=root --password={MIXED[:16]} prod", MIXED[:16], "[REDACTED:cli-password]"),
    (
        "docker login -p",
        f"docker login registry.example.com -u me -p {MIXED[:18]}",
        MIXED[:18],
        "[REDACTED:cli-password]",
    ),
    ("redis-cli -a", f"redis-cli -h cache -a {MIXED[:18]} ping", MIXED[:18], "[REDACTED:cli-password]"),
    ("redis-cli AUTH", f"redis-cli -h cache AUTH {MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("openssl -k", f"openssl enc -aes-256-cbc -in f -k {MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("ldapsearch -w", f"ldapsearch -x -D cn=admin -w {MIXED[:18]} -b dc=x", MIXED[:18], "[REDACTED:cli-password]"),
    ("sqlcmd -P", f"sqlcmd -S db -U sa -P {MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("mongosh -p", f"mongosh --host db -u admin -p {MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("-U user%password", f"smbclient //srv/share -U alice%{MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("zip -P", f"zip -r out.zip dir -P {MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("7z -p", f"7z a -p{MIXED[:18]} out.7z dir", MIXED[:18], "[REDACTED:cli-password]"),
    ("sqlplus user/password", f"sqlplus scott/{MIXED[:18]}@orcl", MIXED[:18], "[REDACTED:cli-password]"),
    ("chpasswd", f"echo 'alice:{MIXED[:18]}' | sudo chpasswd", MIXED[:18], "[REDACTED:cli-password]"),
    (
        "net use /user:",
        f"net use Z: \\\\srv\\share /user:corp\\alice {MIXED[:18]}",
        MIXED[:18],
        "[REDACTED:cli-password]",
    ),
    ("rabbitmqctl add_user", f"rabbitmqctl add_user alice {MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("sql-password", f"CREATE USER app IDENTIFIED BY '{MIXED[:18]}';", MIXED[:18], None),
    ("xml-secret", f"<dbPassword>{MIXED[:18]}</dbPassword>", MIXED[:18], None),
    # The rules that are code rather than one pattern.
    ("k8s-secret", f"apiVersion: v1\nkind: Secret\ndata:\n  db-creds: {rep(MIXED, 32)}\n", rep(MIXED, 32), None),
    ("env-entry", f"- name: DB_PASSWORD\n  value: {MIXED[:20]}\n", MIXED[:20], "[REDACTED]"),
    ("json-container", f'{{"credentials": ["{MIXED[:20]}"]}}', MIXED[:20], "[REDACTED]"),
    ("cookie", f"Cookie: sid={MIXED[:24]}; theme=dark", MIXED[:24], None),
    ("htpasswd", f"htpasswd -b .htpasswd alice {MIXED[:18]}", MIXED[:18], "[REDACTED:cli-password]"),
    ("assignment", f"export DB_PASSWORD={MIXED[:18]}", MIXED[:18], "[REDACTED]"),
    ("bare-aws-secret", f"key: {AWS40} end", AWS40, "[REDACTED:aws-secret-key]"),
]


@pytest.mark.parametrize(("rule", "text", "secret", "label"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_each_rule_masks_its_shape_on_its_own(rule, text, secret, label):
    masked = mask(text, library=False)
    assert secret not in masked, masked
    assert (label or f"[REDACTED:{rule}]") in masked, masked


def test_every_pattern_rule_has_an_example_pinning_it():
    """A rule added without a pin here fails this test: each pattern matches one of the examples."""
    texts = [text for _, text, _, _ in EXAMPLES]
    unpinned = [
        f"{kind}: {pattern.pattern[:60]}"
        for kind, pattern in [*_redact_rules._WHOLE, *_redact_rules._VALUED]
        if not any(pattern.search(text) for text in texts)
    ]
    assert unpinned == []


# --- item 7: a key name that is the only clue ---------------------------------------------------------

SESSION_VALUE = "Q7wx9Lm2Pz4Rt8Vb3Nc6"


@pytest.mark.parametrize("name", ["session_key", "sessionKey", "SESSION_KEY", "Session-Key"])
def test_a_session_key_is_masked_in_structured_input(name):
    masked = mask_structured({"tool_input": {name: SESSION_VALUE, "headers": {name: SESSION_VALUE}}}, library=False)
    assert SESSION_VALUE not in repr(masked)


@pytest.mark.parametrize(
    "text",
    [
        f"SESSION_KEY={SESSION_VALUE}",
        f'export SESSION_KEY="{SESSION_VALUE}"',
        f"session_key = '{SESSION_VALUE}'",
        f"sessionKey: {SESSION_VALUE}",
        f'{{"sessionKey": "{SESSION_VALUE}"}}',
    ],
)
def test_a_session_key_is_masked_in_assignments(text):
    masked = mask(text, library=False)
    assert SESSION_VALUE not in masked and "[REDACTED" in masked


def test_names_about_a_session_key_are_not_masked():
    for text in ("session_key_count=12", "SESSION_KEY=$SESSION_KEY", "sessionKey: null"):
        assert mask(text, library=False) == text


# --- item 11: a value glued to a short flag ----------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("someclient -kS3cretValue host", "someclient <arg> <arg>"),
        ("someclient -pHunter2Hunter2 -v", "someclient <arg> -v"),
        ("tar -xzf archive.tgz", "tar <arg> <arg>"),  # three letters: a flag cluster or a value, never kept
        ("rm -rf build", "rm -rf <arg>"),
    ],
)
def test_a_short_flag_with_a_value_glued_on_travels_as_a_shape_without_the_value(command, expected):
    shaped = shape(command)
    assert shaped == expected
    assert "S3cret" not in shaped and "Hunter2" not in shaped
