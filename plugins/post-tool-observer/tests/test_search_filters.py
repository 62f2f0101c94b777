"""Search filters match literally: `_` and `%` in a file filter are characters, not LIKE wildcards."""

import omcm_post_tool_observer
import pytest
from omcm_post_tool_observer import search

from omcm_core.store import Store
from omcm_core.testing import post_tool_payload

ENV = {"OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}
FILES = ["/p/a_b.py", "/p/axb.py", "/p/100%.py", "/p/1000.py", "/p/back\\slash.py", "/p/backxslash.py"]


@pytest.fixture
def store(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    for path in FILES:
        response = {"type": "text", "file": {"filePath": path, "content": "needle in the file"}}
        dispatch(post_tool_payload("Read", {"file_path": path}, response, session_id="f"))
    return Store(omcm_home)


@pytest.mark.parametrize(
    "file_filter,expected",
    [
        ("a_b", ["/p/a_b.py"]),
        ("100%", ["/p/100%.py"]),
        ("back\\slash", ["/p/back\\slash.py"]),
        ("/p/", FILES),
    ],
)
def test_file_filter_is_a_literal_substring(store, file_filter, expected):
    assert len(search.full_text(store, "needle")) == len(FILES)  # the query alone matches every file
    hits = search.full_text(store, "needle", search.Filters(file=file_filter))
    assert sorted(h["file"] for h in hits) == sorted(expected)
