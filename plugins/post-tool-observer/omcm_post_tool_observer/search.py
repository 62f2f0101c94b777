"""Search the observations: FTS5 ranked by bm25, optional semantic and hybrid ranking.

Full-text always works; semantic needs the ``[embeddings]`` extra and vectors
made by the worker, and hybrid falls back to full text where vectors are
missing. Results stored under older masking rules (their ``masked_with`` stamp
is not :func:`omcm_core.redact.rules_version`) are masked again on the way out.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from omcm_core.redact import mask, rules_version

_TOKEN = re.compile(r"[\w./-]+", re.UNICODE)


class Filters(NamedTuple):
    """What a search keeps to (a NamedTuple, not attrs: the fast `omcm search` route imports this module)."""

    tool: str | None = None
    file: str | None = None
    session: str | None = None
    failures_only: bool = False
    #: Only calls made in this project folder (None: every project, and calls recorded before projects were).
    project: str | None = None


#: The default: every call (a NamedTuple is immutable, so one shared instance is safe).
NO_FILTERS = Filters()


def fts_query(text: str, operator: str = "OR") -> str | None:
    """User text -> an FTS5 query of quoted terms, so no input is FTS syntax."""
    terms = [t.replace('"', '""') for t in _TOKEN.findall(text)]
    return f" {operator} ".join(f'"{t}"' for t in terms) if terms else None


def _where(filters: Filters) -> tuple[str, list]:
    clauses, params = [], []
    if filters.tool:
        clauses.append("e.tool_name = ? COLLATE NOCASE")  # --tool read finds Read
        params.append(filters.tool)
    if filters.file:
        clauses.append("e.file_path LIKE ? ESCAPE '\\'")
        params.append("%" + filters.file.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    if filters.session:
        clauses.append("e.session_id = ?")
        params.append(filters.session)
    if filters.failures_only:
        clauses.append("e.success = 0")
    if filters.project:
        clauses.append("e.project = ?")
        params.append(filters.project)
    return "".join(f" AND {c}" for c in clauses), params


#: Marks around the matched words in a snippet.
MARK = ("«", "»")


def _row(row) -> dict[str, Any]:
    event_id, ts, session, tool, success, file_path, command, output, payload, masked_with, score, *rest = row
    data = json.loads(payload)
    # Masked when stored; masked again only if stored under other rules than today's (before a pattern existed).
    again = mask if masked_with != rules_version() else _same
    return {
        "event_id": event_id,
        "ts": ts,
        "session_id": session,
        "tool": tool,
        "success": bool(success),
        "file": again(file_path) if file_path else None,
        "command": again(command) if command else None,
        "error": again(data["errorMessage"]) if data.get("errorMessage") else None,
        "output": again(output),
        # The part that matched (full-text hits only), matched words between MARK.
        "snippet": again(rest[0]) if rest and rest[0] else None,
        "score": round(score, 6) if score is not None else None,
    }


def _same(text: str) -> str:
    return text


def with_relevance(hits: list[dict]) -> list[dict]:
    """Add ``relevance``: each score over the best one, 0-1, 1.0 for the top hit.

    Raw scores mean little to a person: bm25 grows with the corpus and falls
    towards zero for words found in most observations, and cosine and fused
    ranks have their own scales.
    """
    best = max((h["score"] for h in hits if h["score"]), default=0)
    return [{**h, "relevance": round(h["score"] / best, 2) if best and h["score"] else 0.0} for h in hits]


COLUMNS = (
    "e.event_id, e.ts, e.session_id, e.tool_name, e.success, e.file_path, e.command, e.output, e.payload_json, "
    "e.masked_with"
)
SNIPPET = f"snippet(observer_fts, -1, '{MARK[0]}', '{MARK[1]}', '…', 16)"


def recent(store, filters: Filters = NO_FILTERS, limit: int = 10) -> list[dict]:
    """The latest observations, newest first (a search without words)."""
    where, params = _where(filters)
    rows = store.query(
        f"SELECT {COLUMNS}, NULL FROM observer_events e WHERE 1{where} ORDER BY e.ts DESC, e.id DESC LIMIT ?",
        [*params, limit],
    )
    return [_row(r) for r in rows]


def full_text(store, text: str, filters: Filters = NO_FILTERS, limit: int = 10) -> list[dict]:
    """Observations with all the words first; if too few, any of them (bm25 ranks both)."""
    hits = _full_text(store, fts_query(text, "AND"), filters, limit)
    if len(hits) < limit and len(_TOKEN.findall(text)) > 1:
        seen = {h["event_id"] for h in hits}
        hits += [h for h in _full_text(store, fts_query(text, "OR"), filters, limit) if h["event_id"] not in seen]
    return hits[:limit]


#: bm25 costs a read of every matching row's sizes: a query matching more rows than this ranks the
#: newest this many of them (a word found in most calls finds the recent ones), then the next older
#: slice while too few pass the filters, at most MAX_SLICES slices (the newest 25,000 matches).
MAX_RANKED = 5_000
MAX_SLICES = 5


def _full_text(store, query: str | None, filters: Filters, limit: int) -> list[dict]:
    if query is None or limit <= 0:
        return []
    where, params = _where(filters)
    if where and not store.query(f"SELECT 1 FROM observer_events e WHERE 1{where} LIMIT 1", params):
        return []  # nothing passes the filters (another project's folder): no match needs ranking
    rows: list = []
    upper = None  # rank the matches at or below this rowid (None: from the newest)
    for _ in range(MAX_SLICES):
        lower = _slice_start(store, query, upper)
        bounds = "".join(
            clause for clause, value in ((" AND f.rowid > ?", lower), (" AND f.rowid <= ?", upper)) if value is not None
        )
        bound_params = [value for value in (lower, upper) if value is not None]
        # Ranked first (bm25 only), then snippets and rows for the winners, filtered; most calls pass the
        # usual filter (this project), so a few more winners than asked for do.
        want = limit - len(rows)
        window = want if not where else want * 4
        ids = _ranked(store, query, bounds, bound_params, "", [], window)
        found = _hits(store, query, ids, where, params, want)
        if len(found) >= want or not where:
            rows += found
        else:
            # The filters in the ranking query (through a join), snippets still only for the winners.
            ids = _ranked(store, query, bounds, bound_params, where, params, want)
            rows += _hits(store, query, ids, "", [], want)
        if len(rows) >= limit or lower is None:
            break
        upper = lower
    return [_row(r) for r in rows]


#: The index's own ranking (storage.MIGRATIONS sets the same as its 'rank'), called by name: ordering by the
#: ``rank`` column made FTS5 sort inside its own statement, 1.5-2.5x slower over a 5,000-match slice.
BM25 = "bm25(observer_fts, 2.0, 3.0, 3.0, 1.0, 3.0)"


def _ranked(
    store, query: str, bounds: str, bound_params: list, where: str, params: list, limit: int
) -> list[tuple[int, float]]:
    """(rowid, score) of the best ``limit`` matches in the slice (and passing ``where``), best first."""
    # CROSS JOIN keeps the index first: given the choice, the planner walks a project's rows and asks FTS5 of each.
    join = " CROSS JOIN observer_events e ON e.id = f.rowid" if where else ""
    return [
        (r[0], -r[1])
        for r in store.query(
            f"SELECT f.rowid, {BM25} AS score FROM observer_fts f{join} "
            f"WHERE observer_fts MATCH ?{bounds}{where} ORDER BY score LIMIT ?",
            [query, *bound_params, *params, limit],
        )
    ]


def _hits(store, query: str, ranked: list[tuple[int, float]], where: str, params: list, limit: int) -> list:
    """Rows of the ``ranked`` calls that pass ``where``, best first, at most ``limit``, with score and snippet.

    Rows by id (NOT INDEXED: left to choose, the planner walked the project's
    index, 300 ms at 1,000,000 calls), then snippets for the kept ones alone;
    joined in one statement, the planner walked the table and asked FTS5 of each row.
    """
    by_id = {}
    for part in _parts([rowid for rowid, _ in ranked]):
        by_id.update(
            (r[0], r[1:])
            for r in store.query(
                f"SELECT e.id, {COLUMNS} FROM observer_events e NOT INDEXED "
                f"WHERE e.id IN ({','.join('?' * len(part))}){where}",
                [*part, *params],
            )
        )
    kept = [(rowid, score) for rowid, score in ranked if rowid in by_id][:limit]
    snippets = {}
    for part in _parts([rowid for rowid, _ in kept]):
        snippets.update(
            store.query(
                f"SELECT rowid, {SNIPPET} FROM observer_fts WHERE observer_fts MATCH ? "
                f"AND rowid IN ({','.join('?' * len(part))})",
                [query, *part],
            )
        )
    return [(*by_id[rowid], score, snippets.get(rowid)) for rowid, score in kept]


def _parts(ids: list[int], size: int = 500) -> list[list[int]]:
    """``ids`` in lists short enough for any SQLite's limit on parameters (999 before 3.32)."""
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def _slice_start(store, query: str, upper: int | None) -> int | None:
    """The rowid above which the newest MAX_RANKED matches (below ``upper``) lie; None if there are fewer."""
    below, params = ("AND rowid <= ? ", [upper]) if upper is not None else ("", [])  # noqa: S608
    row = store.query(
        f"SELECT rowid FROM observer_fts WHERE observer_fts MATCH ? {below}ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        [query, *params, MAX_RANKED],
    )
    return row[0][0] if row else None


def semantic(store, text: str, filters: Filters = NO_FILTERS, limit: int = 10) -> list[dict] | None:
    """Cosine ranking over stored vectors; None when the model or vectors are not available."""
    ranked = _vector_ranking(store, text, limit)
    return None if ranked is None else _vector_rows(store, ranked(), filters, limit)


def _vector_ranking(store, text: str, limit: int):
    """A function giving the best (score, event id) pairs, computed in a thread meanwhile; None: no vectors.

    The store is read here, on the caller's thread; the thread only encodes the
    query and scans the matrix (numpy releases the GIL), so a hybrid search runs
    its full-text query at the same time.
    """
    from omcm_post_tool_observer import embedder

    if not embedder.available():
        return None
    from omcm_post_tool_observer.minilm import MODEL_NAME

    # Before numpy is first imported (vector_matrix imports it): OpenBLAS threads that busy-wait for each
    # other made the encoding and the scan several times slower on a loaded machine.
    embedder.limit_threads()
    from omcm_post_tool_observer.vector_scan import EXACT_BELOW, best_rows

    ids, matrix, bits = embedder.vector_index(store, MODEL_NAME, embedder.cache_dir(store), populate_below=EXACT_BELOW)
    if ids is None or len(ids) == 0:
        return None
    import threading

    result: list = []

    def work() -> None:
        try:
            model = embedder.load()
            result.append(
                None if model is None else best_rows(matrix, bits, model.encode([text])[0], _candidates(limit))
            )
        except BaseException as exc:  # raised again on the caller's thread
            result.append(exc)

    thread = threading.Thread(target=work, name="omcm-vector-search", daemon=True)
    thread.start()

    def ranked() -> list[tuple[float, str]] | None:
        thread.join()
        if isinstance(result[0], BaseException):
            raise result[0]
        if result[0] is None:
            return None
        return [(score, _decode(ids[index])) for score, index in result[0]]

    return ranked


def _candidates(limit: int) -> int:
    return max(limit * 5, 50)


def _decode(event_id) -> str:
    return event_id.decode() if isinstance(event_id, bytes) else str(event_id)


def _vector_rows(store, ranked, filters: Filters, limit: int) -> list[dict] | None:
    if ranked is None:
        return None
    where, params = _where(filters)
    out, seen = [], set()
    for score, event_id in ranked:
        if event_id in seen:  # an older copy of a vector stored again (see embedder.vector_matrix)
            continue
        seen.add(event_id)
        rows = store.query(
            f"SELECT {COLUMNS}, ? FROM observer_events e WHERE e.event_id = ?{where}", [score, event_id, *params]
        )
        out += [_row(r) for r in rows]
        if len(out) >= limit:
            break
    return out


def vectors_ready(store) -> bool:
    """Semantic ranking can run: the [embeddings] extra is installed and some calls are embedded."""
    from omcm_post_tool_observer import embedder

    return embedder.available() and bool(store.query("SELECT 1 FROM observer_vectors LIMIT 1"))


def hybrid(store, text: str, filters: Filters = NO_FILTERS, limit: int = 10) -> list[dict]:
    """Reciprocal-rank fusion of full-text and semantic results (full text alone without vectors)."""
    ranked = _vector_ranking(store, text, limit * 3)  # scans the vectors while full text runs
    lexical = full_text(store, text, filters, limit * 3)
    vector = None if ranked is None else _vector_rows(store, ranked(), filters, limit * 3)
    if not vector:
        return lexical[:limit]
    fused: dict[str, tuple[float, dict]] = {}
    for ranking in (lexical, vector):
        for rank, hit in enumerate(ranking):
            score, _ = fused.get(hit["event_id"], (0.0, hit))
            fused[hit["event_id"]] = (score + 1.0 / (60 + rank), hit)
    best = sorted(fused.values(), key=lambda item: -item[0])[:limit]
    return [{**hit, "score": round(score, 5)} for score, hit in best]
