"""The fair share of the context budget: water-filling, line-boundary cuts, markers, caps."""

import pytest

from omcm_core._runtime.context_budget import SEPARATOR, cut_to, fair_shares, fit, marker


@pytest.mark.parametrize(
    ("asks", "budget", "caps", "shares"),
    [
        # Two plugins asking for 9,000 each under 10,000: an even split, not 9,000 and 1,000.
        ([9000, 9000], 10_000, [], [5000, 5000]),
        # One small ask is met in full; the others split what it leaves.
        ([500, 9000, 9000], 10_000, [], [500, 4750, 4750]),
        ([9000, 500, 9000], 10_000, [], [4750, 500, 4750]),
        # Five plugins, mixed: 10, 20 and 30 met, 470 each for the two big ones.
        ([10, 20, 30, 5000, 8000], 1000, [], [10, 20, 30, 470, 470]),
        # Everything fits: every ask in full.
        ([100, 200, 300], 10_000, [], [100, 200, 300]),
        # A cap lowers one plugin's demand; the freed room goes to the other.
        ([9000, 9000], 10_000, [2000, None], [2000, 8000]),
        # The odd characters go to the first ones in order, never above the budget.
        ([50, 50, 50], 10, [], [4, 3, 3]),
        ([5, 5], 0, [], [0, 0]),
        ([], 100, [], []),
    ],
)
def test_fair_shares_are_max_min_fair(asks, budget, caps, shares):
    got = fair_shares(asks, budget, caps)
    assert got == shares
    assert sum(got) <= max(budget, 0)
    assert all(0 <= s <= a for s, a in zip(got, asks, strict=True))


def lines(name: str, count: int, width: int = 60) -> str:
    return "\n".join(f"{name} {n}".ljust(width, ".") for n in range(1, count + 1))


def test_cut_at_a_line_boundary_with_a_marker_saying_how_much():
    text = lines("a", 100)  # 6,099 characters
    kept, lost = cut_to(text, 1000, "plug")
    assert len(kept) <= 1000
    head, last = kept.rsplit("\n", 1)
    assert last == marker(lost, "plug")
    assert text.startswith(head + "\n")  # whole lines only
    assert all(len(line) == 60 for line in head.split("\n"))
    assert lost == len(text) - len(head)


def test_a_single_long_line_is_cut_at_a_word_and_nothing_is_cut_when_it_fits():
    text = "word " * 400
    kept, lost = cut_to(text, 500, "p")
    assert len(kept) <= 500 and lost > 0 and kept.split("\n")[0].endswith("word")
    assert cut_to("short", 5, "p") == ("short", 0)


def test_no_room_even_for_the_marker_drops_the_text():
    assert cut_to(lines("x", 10), 20, "p") == ("", len(lines("x", 10)))


@pytest.mark.parametrize("count", [2, 3, 5])
def test_joined_result_never_exceeds_the_budget_and_everyone_speaks(count):
    pieces = [(f"p{i}", lines(f"p{i}", 200)) for i in range(count)]
    fitted = fit(pieces, 10_000)
    joined = "\n\n".join(text for _, text in fitted.texts)
    assert len(joined) <= 10_000
    assert [p for p, _ in fitted.texts] == [p for p, _ in pieces]
    sizes = [len(t) for _, t in fitted.texts]
    assert max(sizes) - min(sizes) <= 60  # equal shares, give or take the line they were cut at
    assert set(fitted.cut) == {p for p, _ in pieces}


def test_a_small_speaker_keeps_everything_and_empty_answers_take_no_share():
    small = "remember: run the tests with -x"
    fitted = fit([("a", lines("a", 200)), ("b", ""), ("c", small)], 10_000)
    assert dict(fitted.texts)["c"] == small
    assert "b" not in dict(fitted.texts)
    assert set(fitted.cut) == {"a"}
    share = 10_000 - len(small) - SEPARATOR
    assert share - 61 < len(dict(fitted.texts)["a"]) <= share  # all that is left, less the part-line cut off


def test_per_plugin_caps():
    fitted = fit([("memory", lines("m", 200)), ("guide", lines("g", 200))], 10_000, {"memory": 1200})
    texts = dict(fitted.texts)
    assert len(texts["memory"]) <= 1200
    assert len(texts["guide"]) > 8000


def test_a_tail_is_never_cut_and_the_body_gives_way():
    request = "[MEMORY_KEEPER] 1 summaries not generated yet:\n[MEMORY_KEEPER_ROTATE] file=memory_1.md"
    body = "\n".join(f"memory line {i} " + "x" * 80 for i in range(100))
    fitted = fit([("memory-rotation", body), ("notepad", "n" * 6000)], 10_000, tails={"memory-rotation": request})
    texts = dict(fitted.texts)
    assert texts["memory-rotation"].endswith("\n" + request)
    assert "cut to fit the context budget" in texts["memory-rotation"] and fitted.cut["memory-rotation"] > 0
    assert sum(map(len, texts.values())) + SEPARATOR <= 10_000
    # A tail alone (no body) speaks too, whole; a cap lowers the body, not the tail.
    fitted = fit([("a", ""), ("b", "b" * 50)], 100, caps={"a": 10}, tails={"a": request})
    assert dict(fitted.texts)["a"] == request
    # Tails that cannot fit even alone are cut like bodies: the budget still holds.
    fitted = fit([("a", "x"), ("b", "y")], 60, tails={"a": "t" * 500, "b": "u" * 500})
    assert sum(len(t) for _, t in fitted.texts) + SEPARATOR <= 60


def test_the_summary_request_reaches_session_start_with_a_memory_over_its_share(tmp_path):
    """Through `omcm hook`, the default budget: notepad's notes and a memory of ~9,600 characters share it."""
    import json
    import os
    import subprocess
    import sys

    pytest.importorskip("omcm_memory_rotation")
    pytest.importorskip("omcm_notepad")
    from omcm_memory_rotation import index, layout

    from omcm_core.testing import run_hook

    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    folder = layout.memory_dir(project)
    index.ensure_structure(folder)
    (folder / "memory.md").write_text("".join(f"- decision {i}: " + "d" * 175 + "\n" for i in range(50)))
    (folder / "memory_20260101_000000.md").write_text("## 2026-01-01\nrotated, not summarised yet\n")
    env = {
        **os.environ,
        "OMCM_HOME": str(home),
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM_LOAD_PLUGINS": "memory-rotation,notepad",
        "OMCM__NOTEPAD__INJECT_ENTRIES": "3",
        "OMCM_DAEMON": "0",
    }
    for i in range(3):
        note = [sys.executable, "-m", "omcm_core", "notepad", "add", f"note {i} " + "n" * 1900]
        subprocess.run(note, env=env, check=True, capture_output=True, cwd=project)
    payload = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
    proc = run_hook(payload, env=env, cwd=str(project), strict=False)  # the cut is the point here
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "characters from memory-rotation cut" in context  # the memory was over its share
    assert "[MEMORY_KEEPER_ROTATE] file=memory_20260101_000000.md" in context
    assert len(context) <= 10_000
