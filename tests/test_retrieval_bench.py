"""The retrieval benchmark's labels name real calls, and its scoring counts what it says (bench/retrieval.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import retrieval  # noqa: E402


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    from omcm_core.testing import shared_fixtures_dir

    fixtures = shared_fixtures_dir()
    if fixtures is None:
        pytest.skip("../shared/fixtures is not present")
    home = tmp_path_factory.mktemp("retrieval")
    return home, retrieval.replay(home, fixtures / "transcripts", embed=False)


def test_every_labelled_call_was_recorded_once(replayed):
    _, names = replayed
    recorded = list(names.values())
    assert len(recorded) == len(set(recorded))  # the replay records each call once
    for question in retrieval.questions():
        for wanted in retrieval.targets(question):
            assert any(retrieval.hit(name, {wanted}) for name in recorded), (question["q"], wanted)


def test_full_text_scores_are_what_the_ranks_give(replayed):
    home, names = replayed
    figures = retrieval.score(home, names, modes=("full-text",))["full-text"]
    assert 0 < figures["mrr_at_10"] <= figures["recall_at_5"] <= 1
    # One question by hand: an exact command word finds its call first.
    from omcm_post_tool_observer import search

    from omcm_core.store import Store

    store = Store(home)
    top = search.full_text(store, "lucide-react", limit=1)
    store.close()
    assert names[top[0]["event_id"]].endswith("#RFS7AAaY")
