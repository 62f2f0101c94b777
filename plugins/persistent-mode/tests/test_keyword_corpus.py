"""Keyword precision measured on a labelled corpus of more than 200 prompts (see keyword_corpus.py)."""

import importlib.util
from pathlib import Path

import pytest

from omcm_core.testing import shared_fixtures_dir

_SPEC = importlib.util.spec_from_file_location("keyword_corpus", Path(__file__).with_name("keyword_corpus.py"))
corpus = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(corpus)

DOC = Path(__file__).resolve().parents[3] / "docs" / "plugins" / "persistent-mode.md"


def test_the_written_corpus_alone_has_over_200_labelled_prompts():
    rows = corpus.written()
    assert len(rows) >= 200
    assert len({p for p, _ in rows}) == len(rows)  # no prompt counted twice
    assert sum(1 for _, labels in rows if not labels) >= 80  # ordinary prose, where false triggers show


def test_every_fixture_prompt_is_labelled_and_every_label_still_matches_a_prompt(shared_fixtures):
    keys = {key for key, _ in corpus.fixture_prompts(shared_fixtures)}
    assert keys == set(corpus.fixture_labels())


def test_false_and_missed_trigger_rates_stay_low():
    table = corpus.measure(corpus.rows(shared_fixtures_dir()))
    false, prompts, missed, labels = table["any"]
    assert false / prompts <= 0.03, corpus.table_lines(table)
    assert missed / labels <= 0.12, corpus.table_lines(table)
    # Modes and hints are asked for in so many words: none missed, none fired by ordinary prose more than once.
    for trigger in ("ralph-loop", "ultrawork-ralph", "cancel", "search", "analyze"):
        assert table[trigger][0] == 0 and table[trigger][2] == 0, trigger


def test_the_docs_show_the_measured_rates(shared_fixtures):
    table = corpus.measure(corpus.rows(shared_fixtures))
    text = DOC.read_text(encoding="utf-8")
    missing = [line for line in corpus.table_lines(table) if line not in text]
    assert not missing, "docs/plugins/persistent-mode.md is out of date; run keyword_corpus.py:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    "prompt",
    [
        "The server log shows a 502 after deploys",
        'the ticket says "search the code and commit the fix"',
        "see ./src/search/find.ts and the git/ folder",
        "what does ultrawork do?",
    ],
)
def test_prose_that_only_mentions_keywords_fires_nothing(prompt):
    assert corpus.predict(prompt) == frozenset()
