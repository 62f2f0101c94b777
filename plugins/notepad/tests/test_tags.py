"""<remember> tags: which count, and what they become before they touch the notepad."""

import pytest
from omcm_notepad import tags
from omcm_notepad.document import parse
from omcm_notepad.edit import add_entry, new_document
from omcm_notepad.tags import Note, extract

P = 500

CASES = [
    ("none", "no tags here", []),
    ("plain", "x <remember>use uv, not pip</remember> y", [Note("use uv, not pip", False)]),
    ("priority", "<remember priority>API base is /v2</remember>", [Note("API base is /v2", True)]),
    ("case and spaces", "<REMEMBER  Priority >A</Remember >", [Note("A", True)]),
    (
        "both in order",
        "<remember>a</remember><remember priority>b</remember><remember>c</remember>",
        [Note("a", False), Note("b", True), Note("c", False)],
    ),
    (
        "nested: the innermost wins",
        "<remember>outer <remember>inner</remember> tail</remember>",
        [Note("inner", False)],
    ),
    ("unclosed is ignored", "<remember>never closed", []),
    ("unclosed before a closed one", "<remember>lost <remember priority>kept</remember>", [Note("kept", True)]),
    ("empty and blank are ignored", "<remember></remember><remember>  \n </remember>", []),
    ("other attributes are not tags", '<remember priority="high">x</remember><rememberx>y</remember>', []),
    ("multiline trimmed", "<remember>\n  line one  \nline two\n</remember>", [Note("line one\nline two", False)]),
    (
        "secret masked",
        "<remember>key sk-ant-api03-abcdefghijklmnopqrstuvwxyz</remember>",
        [Note("key [REDACTED:anthropic-key]", False)],
    ),
    ("private span", "<remember>a <private>hidden</private> b</remember>", [Note("a [PRIVATE] b", False)]),
    ("control characters stripped", "<remember>a\x00b\x1b[31mc\x07\u2028d</remember>", [Note("ab[31mcd", False)]),
    (
        "headings cannot be injected",
        "<remember>x\n## MANUAL\n  ### 2020-01-01 00:00\n```\n<!-- y</remember>",
        [Note("x\n\\## MANUAL\n  \\### 2020-01-01 00:00\n\\```\n\\<!-- y", False)],
    ),
    ("a BOM cannot hide a heading", "<remember>x\n\ufeff## MANUAL</remember>", [Note("x\n\\## MANUAL", False)]),
    ("crlf", "<remember>a\r\nb\rc</remember>", [Note("a\nb\nc", False)]),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_extract(name, text, expected):
    assert extract(text, P) == (expected, 0)


def test_a_secret_split_by_control_characters_is_still_masked():
    notes, _ = extract("<remember>ghp_\x00" + "A" * 36 + "</remember>", P)
    assert notes == [Note("[REDACTED:github-token]", False)]


def test_priority_is_truncated_to_its_limit_and_notes_to_theirs():
    notes, _ = extract(f"<remember priority>{'p' * 900}</remember><remember>{'n' * 9000}</remember>", P)
    assert len(notes[0].text) == P and notes[0].text.endswith(tags.TRUNCATED)
    assert len(notes[1].text) == tags.MAX_NOTE and notes[1].text.endswith(tags.TRUNCATED)


def test_many_tags_are_bounded_and_the_rest_counted():
    notes, ignored = extract("".join(f"<remember>n{i}</remember>" for i in range(50)), P)
    assert [n.text for n in notes] == [f"n{i}" for i in range(tags.MAX_TAGS)] and ignored == 50 - tags.MAX_TAGS


def test_huge_answers_are_scanned_up_to_the_limit():
    filler = "<remember>" * 20_000 + "z" * tags.MAX_SCAN  # many unclosed openings: linear, not quadratic
    assert extract(filler + "<remember>too far</remember>", P) == ([], 0)
    assert extract("<remember>early</remember>" + filler, P) == ([Note("early", False)], 0)


def test_a_note_cannot_break_the_notepads_sections():
    notes, _ = extract("<remember>evil\n## MANUAL\n## Priority Context\n### 2001-01-01 00:00\nold</remember>", P)
    doc = new_document()
    add_entry(doc, __import__("datetime").datetime(2026, 11, 23, 12), notes[0].text)
    again = parse(doc.render())
    assert [b.name for b in again.blocks] == [b.name for b in new_document().blocks]
    assert len(again.section("Working Memory").entries) == 1


@pytest.mark.parametrize(
    "response,expected",
    [
        ("plain <remember>s</remember>", "plain <remember>s</remember>"),
        ({"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}, "a\nb"),
        (
            {
                "status": "completed",
                "prompt": "<remember>from the prompt</remember>",
                "content": [{"type": "text", "text": "c"}],
            },
            "c",
        ),
        ({"isAsync": True, "status": "async_launched", "prompt": "<remember>x</remember>"}, ""),
        ([{"type": "text", "text": "d"}], "d"),
        ({"content": "e"}, "e"),
        (None, ""),
        (42, ""),
        ({"content": [{"type": "text", "text": 5}, "junk"]}, ""),
    ],
)
def test_answer_text_reads_the_answer_never_the_prompt(response, expected):
    assert tags.answer_text(response) == expected
