"""`omcm search` as a person meets it: the part that matched, a readable rank, one line per call."""

import json
import os
import subprocess
import sys

import omcm_post_tool_observer
import pytest

from omcm_core.testing import post_tool_payload

ENV = {"OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}
FILLER = "\n".join(f"line {i} of unrelated build output" for i in range(60))


@pytest.fixture
def home(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    dispatch(
        post_tool_payload(
            "Bash", {"command": "make all"}, {"stdout": FILLER + "\nlinker: undefined symbol zorblax_init\n"}
        )
    )
    dispatch(
        post_tool_payload("Bash", {"command": "for f in *.py; do\n  python $f\ndone"}, {"stdout": "ran 3 scripts"})
    )
    failure = post_tool_payload("Bash", {"command": "cargo build"}, {})
    failure.update(hook_event_name="PostToolUseFailure", error="error[E0425]: cannot find value quuxle in this scope")
    failure.pop("tool_response", None)
    dispatch(failure)
    for i in range(5):
        dispatch(
            post_tool_payload("Read", {"file_path": f"/src/mod{i}.py"}, {"type": "text", "file": {"content": "pass"}})
        )
    return omcm_home


def search(home, *args, text=True):
    env = {**os.environ, **ENV, "OMCM_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "omcm_core", "search", *args], capture_output=True, text=text, env=env)


def test_result_shows_the_part_that_matched_with_a_readable_rank(home):
    proc = search(home, "zorblax")
    assert proc.returncode == 0, proc.stderr
    head, detail = proc.stdout.splitlines()[:2]
    assert "«zorblax»_init" in detail and "line 0 of" not in detail
    assert "relevance 1.00" in head


def test_json_has_the_full_output_snippet_and_relevance(home):
    (hit,) = json.loads(search(home, "zorblax", "--json").stdout)["results"]
    assert len(hit["output"]) > 1000 and "line 0 of" in hit["output"] and "zorblax_init" in hit["output"]  # nothing cut
    assert "«zorblax»_init" in hit["snippet"]
    assert hit["relevance"] == 1.0 and hit["score"] > 0


def test_error_text_of_a_failed_call_is_searchable(home):
    (hit,) = json.loads(search(home, "quuxle", "--json").stdout)["results"]
    assert hit["command"] == "cargo build" and not hit["success"]
    assert "«quuxle»" in hit["snippet"]


@pytest.mark.parametrize("query", [[], ["*"]])
def test_no_query_lists_the_most_recent_calls(home, query):
    hits = json.loads(search(home, *query, "--json", "--limit", "3").stdout)["results"]
    assert [h["file"] for h in hits] == ["/src/mod4.py", "/src/mod3.py", "/src/mod2.py"]
    lines = search(home, *query).stdout.splitlines()
    assert "/src/mod4.py" in lines[0]


def test_limit_bounds_the_results(home):
    assert len(json.loads(search(home, "--json", "--limit", "2").stdout)["results"]) == 2
    assert len(json.loads(search(home, "mod", "src", "--json", "--limit", "4").stdout)["results"]) == 4


def test_a_multi_line_command_stays_on_one_line(home):
    lines = search(home, "scripts").stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].split("Bash", 1)[1].strip().startswith("for f in *.py; do …")


def test_piping_into_head_prints_no_traceback(home):
    from omcm_core.store import Store

    # More output than a pipe holds, so the search is still writing when head leaves.
    with Store(home).transaction() as conn:
        conn.executemany(
            "INSERT INTO observer_events(event_id, ts, tool_name, success, command, output, payload_json, bytes) "
            "VALUES(?, ?, 'Bash', 1, 'echo', ?, '{}', 10)",
            [(f"bulk-{i}", 1e9 + i, "x" * 200) for i in range(2000)],
        )
    env = {**os.environ, **ENV, "OMCM_HOME": str(home)}
    proc = subprocess.run(
        f"{sys.executable} -m omcm_core search --limit 5000 | head -1",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
    )
    assert len(proc.stdout.splitlines()) == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_the_error_migration_indexes_calls_recorded_before_it(omcm_home):
    from omcm_post_tool_observer import search, storage

    from omcm_core.store import Store

    store = Store(omcm_home)
    store.migrate(storage.PLUGIN, storage.MIGRATIONS[:2])  # a store from before the error column
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO observer_events(event_id, ts, tool_name, success, command, output, payload_json, bytes) "
            "VALUES('old', 1, 'Bash', 0, 'cargo build', '', ?, 10)",
            ['{"errorMessage": "cannot find value frobnitz"}'],
        )
    storage.ready(store)
    (hit,) = search.full_text(store, "frobnitz")
    assert hit["event_id"] == "old" and "«frobnitz»" in hit["snippet"]
    assert search.full_text(store, "cargo")[0]["event_id"] == "old"  # the old columns are still indexed


def test_the_tool_filter_ignores_case(home):
    # People type `--tool read`; the client records "Read".
    for spelling in ("read", "READ", "Read"):
        hits = json.loads(search(home, "--tool", spelling, "--json").stdout)["results"]
        assert len(hits) == 5 and {h["tool"] for h in hits} == {"Read"}, spelling
