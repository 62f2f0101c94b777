"""docs/hooks.md is rendered from the hookspecs and the event table, and is never stale."""

from __future__ import annotations

from pathlib import Path

from omcm_core import _hooks_doc
from omcm_core._cli.new_plugin import ALL_HOOKS
from omcm_core.events import EVENTS

DOC = Path(__file__).resolve().parents[1] / "docs" / "hooks.md"


def test_docs_hooks_md_is_the_rendered_reference():
    assert DOC.read_text(encoding="utf-8") == _hooks_doc.render(), (
        "docs/hooks.md is stale: run `python -m omcm_core._hooks_doc > docs/hooks.md`"
    )


def test_every_hook_and_every_event_is_in_it_with_an_example():
    text = _hooks_doc.render()
    sections = text.split("\n## `")[1:]
    assert [s.split("`", 1)[0] for s in sections] == list(ALL_HOOKS)
    assert all("Example:\n\n```python\n" in s and "@hookimpl\ndef " in s.split("Example:")[1] for s in sections)
    for name in EVENTS:
        assert f"\n| {name} | " in text, name


def test_the_honoured_fields_follow_the_row():
    task = _hooks_doc.honoured(EVENTS["TaskCreated"])
    assert task[0] == "`block` + `reason`"
    assert _hooks_doc.honoured(EVENTS["SessionEnd"]) == ["nothing (side effects only)"]
    assert "`permission` (allow/deny/ask) + `reason`" in _hooks_doc.honoured(EVENTS["PreModelSwitch"])
    assert "`additional_context` (a continuation, not cut by the budget)" in _hooks_doc.honoured(EVENTS["Stop"])
