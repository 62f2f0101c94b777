"""Full-text search's query plan (rank first, rows and snippets for the winners) gives bm25's own order."""

import contextlib
import random

import pytest
from omcm_post_tool_observer import search, storage

from omcm_core.redact import rules_version
from omcm_core.store import Store

WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "zeta"]


@pytest.fixture
def store(omcm_home):
    store = Store(omcm_home)
    storage.ready(store)
    rng = random.Random(7)
    with store.transaction() as conn:
        for i in range(400):
            output = " ".join(rng.choices(WORDS, k=rng.randint(3, 40)))
            conn.execute(
                "INSERT INTO observer_events(event_id, ts, tool_name, success, command, output, payload_json, bytes, "
                "project, masked_with) VALUES(?, ?, 'Bash', ?, ?, ?, '{}', 0, ?, ?)",
                (f"e{i}", i, i % 5 != 0, f"run {rng.choice(WORDS)}", output, f"/p{i % 7 == 0}", rules_version()),
            )
    with contextlib.closing(store):
        yield store


def test_the_ranking_is_the_index_own(store):
    ((config,),) = store.query("SELECT v FROM observer_fts_config WHERE k = 'rank'")
    assert config.replace("bm25(", "bm25(observer_fts, ") == search.BM25


def _reference(store, text, filters, limit):
    where, params = search._where(filters)
    return [
        (event_id, round(-score, 6))
        for event_id, score in store.query(
            f"SELECT e.event_id, {search.BM25} AS s FROM observer_fts f JOIN observer_events e ON e.id = f.rowid "
            f"WHERE observer_fts MATCH ?{where} ORDER BY s, e.id LIMIT ?",
            [search.fts_query(text, "AND"), *params, limit],
        )
    ]


@pytest.mark.parametrize(
    "filters",
    [
        search.Filters(),
        search.Filters(project="/pFalse"),  # most calls
        search.Filters(project="/pTrue"),  # one in seven: the filtered ranking after the first window
        search.Filters(project="/pTrue", failures_only=True),
        search.Filters(project="/nowhere"),
    ],
)
@pytest.mark.parametrize("text", ["alpha", "omega zeta", "run kappa"])
def test_full_text_gives_bm25_order_with_snippets(store, text, filters):
    hits = search._full_text(store, search.fts_query(text, "AND"), filters, 10)
    assert [(h["event_id"], h["score"]) for h in hits] == _reference(store, text, filters, 10)
    assert all(search.MARK[0] in h["snippet"] for h in hits)


def test_more_hits_than_sqlite_takes_parameters(store, monkeypatch):
    monkeypatch.setattr(search, "_parts", lambda ids, size=7: [ids[i : i + size] for i in range(0, len(ids), size)])
    hits = search._full_text(store, search.fts_query("alpha", "AND"), search.Filters(project="/pFalse"), 40)
    assert [(h["event_id"], h["score"]) for h in hits] == _reference(
        store, "alpha", search.Filters(project="/pFalse"), 40
    )
