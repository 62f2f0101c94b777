"""Secrets in tool calls never reach a file under OMCM_HOME, even through a careless plugin.

A corpus of realistic secret shapes (``secret_corpus``) goes through PostToolUse
in the command, the tool output and an unknown payload key. ``rel-leaky`` logs
the whole call and then fails with the command in its error message, so the
core's log masking and everything the core keeps about failures (log lines,
breaker rows in the store) are exercised. Afterwards no secret's random part
may appear in any byte of any file under OMCM_HOME: database, WAL, logs,
session files.
"""

from __future__ import annotations

import json

import pytest
from reliability_harness import log_entries, parse_stdout, post_tool, run_hook, spawn_hook
from secret_corpus import ISSUE_24_SHAPES, corpus, ordinary_texts, secret_shapes, structured

from omcm_core.redact import mask, mask_structured

PLUGINS = ["rel-answer", "rel-leaky", "rel-rows", "post-tool-observer", "pre-tool-guide", "tool-counter"]
PER_CALL = 7


def _files(home):
    return sorted(p for p in home.rglob("*") if p.is_file())


def _leaks(home, secrets) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in _files(home):
        data = path.read_bytes()
        for name, _text, needle in secrets:
            if needle.encode() in data:
                found.setdefault(name, []).append(str(path.relative_to(home)))
    return found


def test_corpus_is_large_and_each_needle_is_distinctive():
    secrets = corpus()
    assert len(secrets) >= 40
    assert len({needle for _n, _t, needle in secrets}) == len(secrets)
    for name, text, needle in secrets:
        assert needle in text and len(needle) >= 16, name


def test_the_breadth_corpus_is_large_and_distinct():
    shapes, ordinary = secret_shapes(), ordinary_texts()
    assert len(shapes) >= 150 and len(ordinary) >= 150
    assert len(ISSUE_24_SHAPES) == 29
    assert len({s.needle for s in shapes}) == len({s.name for s in shapes}) == len(shapes)
    assert len(set(ordinary)) == len(ordinary)


@pytest.mark.parametrize("shape", secret_shapes(), ids=lambda s: s.name)
def test_every_secret_shape_is_masked(shape):
    """Recall: each shape of the corpus (docs/reliability.md's table) loses its random part."""
    masked = mask_structured(shape.value)
    assert shape.needle not in json.dumps(masked), masked


@pytest.mark.parametrize("text", ordinary_texts(), ids=lambda t: t[:40])
def test_every_ordinary_text_stays_readable(text):
    """Precision: errors, commands, code, paths, hashes, UUIDs and plain base64 come out unchanged."""
    assert mask(text) == text


@pytest.mark.slow
def test_no_secret_reaches_any_file_under_omcm_home(rel_site, tmp_path):
    home = tmp_path / "home"
    secrets = corpus()
    env = rel_site.env(home, PLUGINS, OMCM__CORE__BREAKER_THRESHOLD="1000")
    for start in range(0, len(secrets), PER_CALL):
        batch = secrets[start : start + PER_CALL]
        text = "\n".join(t for _n, t, _s in batch)
        payload = post_tool(
            f"secret-session-{start}",
            tool_input={"command": text, "description": "deploy"},
            tool_response={"stdout": text, "stderr": "error: " + text, "interrupted": False},
            env_dump=text,
        )
        proc = run_hook(json.dumps(payload).encode(), env)
        assert proc.returncode == 0
        parse_stdout("PostToolUse", proc.stdout)
    entries = log_entries(home)
    assert sum(e["event"] == "rel_leaky_saw" for e in entries) == -(-len(secrets) // PER_CALL), (
        "the leaky plugin did not log"
    )
    assert sum(e["event"] == "plugin_failed" for e in entries) == -(-len(secrets) // PER_CALL)
    assert (home / "omcm.db").exists() and (home / "logs" / "omcm.jsonl").exists()
    assert _leaks(home, secrets) == {}


@pytest.mark.slow
def test_no_secret_in_the_wal_while_the_store_is_open(rel_site, tmp_path):
    """The same check while a dispatcher still holds the store open (WAL not yet checkpointed)."""
    home, side = tmp_path / "home", tmp_path / "side.txt"
    secrets = corpus()
    text = "\n".join(t for _n, t, _s in secrets)
    env = rel_site.env(
        home,
        PLUGINS + ["rel-writer"],
        OMCM__CORE__BREAKER_THRESHOLD="1000",
        REL_SIDE_FILE=str(side),
        REL_WRITES="3",
        REL_HOLD_S="20",
    )
    first = run_hook(json.dumps(post_tool("wal-1", tool_input={"command": text})).encode(), rel_site.env(home, PLUGINS))
    assert first.returncode == 0
    proc = spawn_hook(json.dumps(post_tool("wal-2", tool_input={"command": text}, tool_response=text)).encode(), env)
    try:
        import time

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(side.read_text().split() if side.exists() else []) < 3:
            time.sleep(0.01)
        assert (home / "omcm.db-wal").exists(), "the store was not open in WAL mode"
        assert _leaks(home, secrets) == {}
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def test_structured_input_and_cut_secrets_never_reach_disk(rel_site, tmp_path):
    """Secret-named keys of an MCP tool's input, a key cut mid-body and a token on the 10 KB cut."""
    home = tmp_path / "home"
    env = rel_site.env(home, PLUGINS, OMCM__CORE__BREAKER_THRESHOLD="1000")
    cases = structured()
    tool_input = {f"field{i}": value for i, (_k, value, _n) in enumerate(cases)}
    key_body = [f"MIIEow{i:04d}" + "Q" * 54 for i in range(80)]
    lines = [f"log {i}" for i in range(200)] + [
        "-----BEGIN RSA PRIVATE KEY-----",
        *key_body,
        "-----END RSA PRIVATE KEY-----",
        "done",
    ]
    token = "gh" + "p_" + "Abc123XyZ9" * 4
    straddle = "x" * 4976 + " " + token + " " + "y" * 12_000
    needles = [("structured-" + k, "", n) for k, _v, n in cases] + [
        ("pem-body", "", key_body[-1]),
        ("token-prefix", "", token[:12]),
    ]
    for i, output in enumerate(("\n".join(lines), straddle)):
        payload = post_tool(f"cut-{i}", tool_input={"command": "query", **tool_input}, tool_response={"stdout": output})
        proc = run_hook(json.dumps(payload).encode(), env)
        assert proc.returncode == 0
    assert (home / "omcm.db").exists()
    assert _leaks(home, needles) == {}
