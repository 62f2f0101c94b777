"""The context budget through real ``omcm hook`` processes, and what ``omcm stats`` then reports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from reliability_harness import run_hook

from omcm_core.testing import session_start_payload, user_prompt_payload

LOUD = ["loud-a", "loud-b", "loud-c", "loud-d", "loud-e"]


def context_of(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def kept(context: str, name: str) -> int:
    """How many of ``name``'s numbered lines reached the model."""
    return sum(1 for line in context.split("\n") if line.startswith(f"{name} line "))


def ask(rel_site, rel_world, sizes: dict[str, int], payload=None, **extra: str) -> str:
    env = rel_site.env(
        rel_world["home"],
        list(sizes),
        **{f"REL_LOUD_{name[-1].upper()}_CHARS": str(chars) for name, chars in sizes.items()},
        **extra,
    )
    raw = json.dumps(payload or user_prompt_payload("go", cwd=str(rel_world["project"]))).encode()
    return context_of(run_hook(raw, env, cwd=rel_world["project"]))


def test_two_plugins_asking_for_9000_each_get_half_each(rel_site, rel_world):
    context = ask(rel_site, rel_world, {"loud-a": 9000, "loud-b": 9000})
    assert len(context) <= 10_000
    # Before: the first kept 9,010 characters and the second 972. Now within a line of each other.
    assert abs(kept(context, "loud-a") - kept(context, "loud-b")) <= 1
    assert kept(context, "loud-b") >= 75  # ~4,900 characters of 60-character lines
    assert context.count("cut to fit the context budget") == 2


def test_three_plugins_the_small_ask_is_met_in_full(rel_site, rel_world):
    context = ask(rel_site, rel_world, {"loud-a": 9000, "loud-b": 600, "loud-c": 9000})
    assert len(context) <= 10_000
    assert kept(context, "loud-b") == 10  # all of its 600 characters
    assert "from loud-b cut" not in context
    assert abs(kept(context, "loud-a") - kept(context, "loud-c")) <= 1


def test_five_plugins_share_a_lowered_budget_and_a_cap(rel_site, rel_world, tmp_path):
    home = rel_world["home"]
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[core]\ncontext_budget = 3000\ncontext_caps = { "loud-e" = 300 }\n')
    sizes = {"loud-a": 120, "loud-b": 5000, "loud-c": 5000, "loud-d": 5000, "loud-e": 5000}
    context = ask(rel_site, rel_world, sizes)
    assert len(context) <= 3000
    assert kept(context, "loud-a") == 2  # small: whole
    assert 1 <= kept(context, "loud-e") <= 4  # capped at 300 characters, marker included
    counts = [kept(context, name) for name in ("loud-b", "loud-c", "loud-d")]
    assert max(counts) - min(counts) <= 1 and min(counts) >= 8


def test_session_start_is_shared_the_same_way(rel_site, rel_world):
    payload = session_start_payload(cwd=str(rel_world["project"]))
    context = ask(rel_site, rel_world, {"loud-a": 9000, "loud-b": 9000}, payload=payload)
    assert len(context) <= 10_000 and abs(kept(context, "loud-a") - kept(context, "loud-b")) <= 1


def omcm_stats(env: dict, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "stats", "--json", *args], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_stats_count_the_context_each_plugin_put_before_the_model_and_the_cuts(rel_site, rel_world):
    sizes = {"loud-a": 9000, "loud-b": 600}
    for _ in range(3):
        ask(rel_site, rel_world, sizes)
    env = rel_site.env(rel_world["home"], list(sizes))
    rows = {(r["plugin"], r["event"]): r for r in omcm_stats(env)["rows"]}
    a, b = rows[("loud-a", "UserPromptSubmit")], rows[("loud-b", "UserPromptSubmit")]
    assert (a["calls"], b["calls"]) == (3, 3)
    assert b["context_chars"] == 3 * 600 and b["budget_cuts"] == 0
    assert a["budget_cuts"] == 0  # 9,000 + 600 fit in 10,000
    assert a["context_chars"] == 3 * 9000
    assert a["context_tokens_est"] == (3 * 9000 + 3) // 4
    assert a["median_ms"] is not None and a["p95_ms"] >= a["median_ms"]


@pytest.mark.parametrize("budget", [5000])
def test_stats_record_budget_cuts(rel_site, rel_world, budget):
    ask(rel_site, rel_world, {"loud-a": 9000, "loud-b": 9000}, OMCM__CORE__CONTEXT_BUDGET=str(budget))
    env = rel_site.env(rel_world["home"], ["loud-a", "loud-b"])
    rows = {r["plugin"]: r for r in omcm_stats(env)["rows"]}
    assert rows["loud-a"]["budget_cuts"] == rows["loud-b"]["budget_cuts"] == 1
    shown = rows["loud-a"]["context_chars"] + rows["loud-b"]["context_chars"]
    assert shown <= budget
    assert rows["loud-a"]["cut_chars"] + rows["loud-b"]["cut_chars"] > 18_000 - budget
