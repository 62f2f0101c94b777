"""parse/render round-trips every byte; omcm's edits touch only what they must."""

from datetime import datetime, timedelta

import pytest
from omcm_notepad import document, edit
from omcm_notepad.document import MANUAL, PRIORITY, WORKING, parse
from omcm_notepad.notes import decode, encode

NOW = datetime(2026, 11, 23, 15, 40)
TEMPLATE = edit.new_document().render()
HAND_EDITED = """# My notes
free text the user wrote before any section

## Priority Context
<!-- ALWAYS loaded. Keep under 500 chars. -->
Deploy only from main.

## Working Memory
<!-- Session notes. Auto-pruned after 7 days. -->
a line the user typed under the comment
### 2026-11-10 09:00
old entry
### 2026-11-22 18:30
recent entry
  with an indented second line
### 2026-13-45 99:99
stamp that is not a date

## Scratch (unknown section)
kept as is

## MANUAL
<!-- User content. Never auto-pruned. -->
```
## Working Memory
this is a code sample inside MANUAL, not a second section
```
"""

CASES = [
    ("empty", ""),
    ("template", TEMPLATE),
    ("hand edited everywhere", HAND_EDITED),
    ("crlf", HAND_EDITED.replace("\n", "\r\n")),
    ("mixed line endings", "## Priority Context\r\nA\n## Working Memory\r### 2026-11-22 10:00\rB\n"),
    ("no final newline", "## Working Memory\n### 2026-11-22 10:00\nlast line"),
    ("only headers", "## priority context\n##   working memory  \n## manual"),
    ("bom", "\ufeff## Priority Context\nX\n"),
    ("no sections at all", "just\nsome\ntext\n"),
    ("garbage bytes", decode(b"\xff\xfe## Working Memory\n\x00\x01\xc3(\n### 2026-11-22 10:00\n\x80\x81\n")),
    ("sections repeated", "## MANUAL\nm1\n## Working Memory\nw\n## Working Memory\nw2\n## MANUAL\nm2\n"),
    ("headers with trailing spaces and tabs", "##\tPriority Context \t\n x\n"),
]


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_render_of_parse_is_the_same_text(name, text):
    assert parse(text).render() == text
    assert encode(parse(text).render()) == encode(text)


def _subsequence(small, big):
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_adding_an_entry_keeps_every_line_and_the_new_entry_parses_back(name, text):
    doc = parse(text)
    edit.add_entry(doc, NOW, "the new note")
    out = doc.render()
    assert _subsequence(
        [line.rstrip("\r\n") for line in text.splitlines()], [line.rstrip("\r\n") for line in out.splitlines()]
    )
    again = parse(out)
    assert again.render() == out
    entries = again.section(WORKING).entries
    assert entries[-1].when == NOW and document.entry_body(entries[-1]) == "the new note"


def test_hand_edited_file_sections_and_entries():
    doc = parse(HAND_EDITED)
    assert [b.name for b in doc.blocks] == [None, PRIORITY, WORKING, None, MANUAL, None]
    assert document.priority_text(doc) == "Deploy only from main."
    entries = doc.section(WORKING).entries
    assert [e.when for e in entries] == [datetime(2026, 11, 10, 9), datetime(2026, 11, 22, 18, 30), None]
    assert document.entry_body(entries[1]) == "recent entry\n  with an indented second line"


def test_edits_leave_the_other_sections_byte_for_byte():
    doc = parse(HAND_EDITED.replace("\n", "\r\n"))
    untouched = [b.render() for b in doc.blocks if b.name in (None, MANUAL)]
    edit.set_priority(doc, "new priority\nsecond line")
    edit.add_entry(doc, NOW, "entry")
    edit.prune(doc, NOW - timedelta(days=7))
    assert [b.render() for b in doc.blocks if b.name in (None, MANUAL)] == untouched
    out = doc.render()
    assert "\r\nnew priority\r\nsecond line\r\n" in out and "\n" not in out.replace("\r\n", "")
    assert "<!-- ALWAYS loaded. Keep under 500 chars. -->\r\nnew priority" in out
    assert "Deploy only from main." not in out


@pytest.mark.parametrize(
    "text,order",
    [
        ("", [None, PRIORITY]),
        ("## MANUAL\nmine\n", [None, PRIORITY, MANUAL]),
        ("## Working Memory\n### 2026-11-22 10:00\nw\n## MANUAL\nm\n", [None, PRIORITY, WORKING, MANUAL]),
        ("intro\n## MANUAL\nm", [None, PRIORITY, MANUAL]),
    ],
)
def test_a_missing_priority_section_is_created_before_the_others(text, order):
    doc = parse(text)
    edit.set_priority(doc, "P")
    out = doc.render()
    assert [b.name for b in parse(out).blocks] == order
    assert document.priority_text(parse(out)) == "P"
    assert out.startswith(text.split("## ")[0])


def test_sections_after_manual_are_the_users():
    doc = parse("## MANUAL\n```\n## Priority Context\nsample\n```\n")
    assert [b.name for b in doc.blocks] == [None, MANUAL, None]
    edit.set_priority(doc, "P")
    out = doc.render()
    assert out.endswith("## MANUAL\n```\n## Priority Context\nsample\n```\n") and out.count("sample") == 1
    assert document.priority_text(parse(out)) == "P"


def test_a_missing_working_memory_goes_before_manual():
    doc = parse("## Priority Context\np\n## MANUAL\nm\n")
    edit.add_entry(doc, NOW, "e")
    out = doc.render()
    assert (
        out
        == "## Priority Context\np\n\n## Working Memory\n<!-- Session notes. Auto-pruned after 7 days. -->\n### 2026-11-23 15:40\ne\n\n## MANUAL\nm\n"
    )


def test_entries_are_pruned_after_seven_days_and_undated_ones_stay():
    doc = parse(HAND_EDITED)
    edit.add_entry(doc, NOW, "fresh")
    cutoff = NOW - timedelta(days=7)  # 2026-11-16 15:40
    assert edit.prune(doc, cutoff) == 1
    bodies = [document.entry_body(e) for e in doc.section(WORKING).entries]
    assert bodies == ["recent entry\n  with an indented second line", "stamp that is not a date", "fresh"]
    assert "old entry" not in doc.render() and "a line the user typed under the comment" in doc.render()


@pytest.mark.parametrize("age,kept", [(timedelta(days=7), True), (timedelta(days=7, minutes=1), False)])
def test_the_seven_day_boundary(age, kept):
    doc = parse("## Working Memory\n")
    edit.add_entry(doc, NOW - age, "x")
    assert edit.prune(doc, NOW - timedelta(days=7)) == (0 if kept else 1)


def test_size_cap_drops_oldest_entries_first_and_the_new_one_last():
    doc = parse(HAND_EDITED)
    for day in range(1, 20):
        edit.add_entry(doc, datetime(2026, 11, day, 12), f"note of day {day} " + "x" * 300)
    new = edit.add_entry(doc, datetime(2026, 11, 5, 12), "the one just added " + "y" * 300)  # an older stamp
    limit = 4096
    dropped = edit.cap(doc, limit, [new])
    assert edit.size(doc) <= limit
    stamps = [e.when for e in dropped]
    assert stamps == sorted(stamps) and new not in dropped
    kept = [e.when for e in doc.section(WORKING).entries if e.when]
    assert max(stamps) <= min(w for w in kept if w != new.when)
    assert "Deploy only from main." in doc.render() and "this is a code sample inside MANUAL" in doc.render()


def test_size_cap_never_drops_text_omcm_does_not_manage():
    manual = "## MANUAL\n" + "m" * 9000 + "\n"
    doc = parse(manual)
    new = edit.add_entry(doc, NOW, "note")
    dropped = edit.cap(doc, 8192, [new])
    assert dropped == [new] and doc.section(WORKING).entries == []
    assert manual in doc.render() and edit.size(doc) > 8192
