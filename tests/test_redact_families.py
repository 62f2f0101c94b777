"""Secrets by family (issue 34 item 5): one fast case per family and per look-alike family, and the corpus figures.

The corpus (tests/reliability/secret_families.py) is split by variant: rules
were written against the development part; the held-out part measures how they
generalise (docs/reliability.md §9b). Its thresholds are the figures measured
when the rules were written (recall 90.9 %, precision 89.7 %; before: 51.7 %,
64.3 %): a change that loses ground on shapes nobody wrote a rule for fails.
"""

import base64
import json
import sys
from pathlib import Path

import pytest

from omcm_core.redact import mask, mask_structured

sys.path.insert(0, str(Path(__file__).resolve().parent / "reliability"))
from secret_families import development, held_out  # noqa: E402

PW = "Xq7" + "vLm29" + "TzR4kp"
TOKEN = "Zr8" + "kQ2mV9xLp4Tn7Wc" + "1bYd5Hs3Jf6"

SECRETS = {
    "netrc over lines": f"machine git.corp.net\n  login alice\n  password {PW}\n",
    "netrc password alone": f"machine git.corp.net login alice\npassword {PW}\n",
    "ini": f'[client]\nuser=root\npassword="{PW}"\n',
    "yaml weak key": f"smtp:\n  auth:\n    pass: {PW[:6]}.{PW[6:]}\n",
    "url with an empty user": f"redis://:{PW}@cache.internal:6379/0",
    "url with @ in the user": f"https://me@corp.com:{PW}@git.corp.net/r.git",
    "slack workflow webhook": f"https://hooks.slack.com/triggers/T012AB/123456789/{TOKEN}",
    "zapier webhook": f"https://hooks.zapier.com/hooks/catch/{PW}/x1y2z3/",
    "mattermost webhook": f"https://chat.corp.net/hooks/{TOKEN.lower()}",
    "ifttt key": f"https://maker.ifttt.com/trigger/done/with/key/{TOKEN}",
    "query string key": f"https://api.example.com/forecast?appid={TOKEN}&q=London",
    "query string camel name": f"fetch('https://x.io/d?limit=10&authToken={TOKEN}')",
    "echo into sudo -S": f"echo {PW} | sudo -S apt-get install -y nginx",
    "echo into passwd --stdin": f'echo "{PW}" | passwd --stdin alice',
    "echo into --password-stdin": f"echo '{PW}' | docker login -u me --password-stdin reg.io",
    "sudo here-string": f"sudo -S -v <<< '{PW}'",
    "base64 of an env file": f"echo {base64.b64encode(f'DB_PASSWORD={PW}'.encode()).decode()} | base64 -d",
    "base64 of a token": f"value: {base64.b64encode(('gh' + 'p_' + TOKEN + 'abcdefghij').encode()).decode()}",
    "service key, unusual prefix": f"Using key xai-{TOKEN}{TOKEN}",
    "service key after =": f"tailscale up --authkey=tskey-auth-{TOKEN}",
    "json inside a json string": '{"input": "{\\"api_key\\": \\"' + TOKEN + '\\"}"}',
}
STRUCTURED = {
    "passcode": {"account": "me", "passcode": "27016750"},
    "pin": {"card": "visa", "pin": "7775"},
    "mfa code": {"user": "me", "mfa_code": "037875"},
    "secret-star key": {"secretAnswer": "bluebird"},
    "headers as name/value objects": {"headers": [{"name": "Authorization", "value": f"Bearer {TOKEN}"}]},
    "headers as pairs": {"headers": [["Accept", "application/json"], ["X-Api-Key", TOKEN]]},
}
LOOK_ALIKES = {
    "publishable key": f"const stripe = Stripe('pk_live_{TOKEN}');",
    "publishable test key": f"STRIPE_PUBLISHABLE_KEY=pk_test_{TOKEN}",
    "usage line": "usage: mysql [-h] [--user USER] [--password PASSWORD] [--host HOST]",
    "argparse error": "mycli: error: argument --password: expected one argument",
    "error about a token": "Error: invalid token",
    "markdown placeholder": "curl -H 'Authorization: Bearer <token>' https://api.example.com/v1/me",
    "changeme": "DB_PASSWORD=changeme  # set a real one in production",
    "${VAR} reference": "password: ${DB_PASSWORD}",
    "echo $VAR into sudo": "echo $SUDO_PASSWORD | sudo -S true",
    "prose with netrc words": "machine learning login page password reset flow",
    "docs about webhooks": "https://api.slack.com/messaging/webhooks",
    "ordinary query": "https://example.com/search?q=rust&page=2&sort=desc",
    "user without password": "https://alice@git.corp.net/repo.git",
    "ordinary base64": "echo aGVsbG8gd29ybGQsIGhvdyBhcmUgeW91 | base64 -d",
    "field names": json.dumps({"fields": ["token", "name"]}),
}


def _gone(masked, text: str) -> None:
    out = masked if isinstance(masked, str) else json.dumps(masked)
    needles = (PW, TOKEN, TOKEN.lower(), "27016750", "7775", "037875", "bluebird")
    needles += tuple(w for w in text.split() if len(w) > 24 and w.isalnum())  # a base64 run
    for needle in needles:
        assert needle not in out or needle not in text, (needle, out)


@pytest.mark.parametrize("name", list(SECRETS))
def test_each_secret_family_is_masked(name):
    text = SECRETS[name]
    masked = mask(text)
    assert masked != text
    _gone(masked, text)


def test_base64_wrapped_secrets_are_masked_whole():
    assert mask(SECRETS["base64 of an env file"]) == "echo [REDACTED:base64] | base64 -d"
    assert mask(SECRETS["base64 of a token"]) == "value: [REDACTED:base64]"


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_structured_input_is_masked_by_key_and_pair(name):
    value = STRUCTURED[name]
    masked = mask_structured(value)
    assert "[REDACTED]" in json.dumps(masked)
    _gone(masked, json.dumps(value))


@pytest.mark.parametrize("name", list(LOOK_ALIKES))
def test_each_look_alike_family_stays_readable(name):
    assert mask(LOOK_ALIKES[name]) == LOOK_ALIKES[name]


def _figures(part):
    shapes, plain = part
    missed = [s.name for s in shapes if s.needle in json.dumps(mask_structured(s.value))]
    over = [name for name, text in plain if mask_structured(text) != text]
    caught = len(shapes) - len(missed)
    return caught / len(shapes), caught / (caught + len(over)), missed, over


def test_the_development_part_is_fully_covered():
    recall, precision, missed, over = _figures(development())
    assert (recall, precision) == (1.0, 1.0), (missed, over)


def test_the_held_out_part_keeps_its_measured_figures():
    shapes, plain = held_out()
    assert len(shapes) >= 200 and len(plain) >= 150
    recall, precision, _missed, _over = _figures((shapes, plain))
    assert recall >= 0.905 and precision >= 0.895, (recall, precision)
