"""`omcm memory ...` as a person runs it: plain sentences, every summary problem at once, a bounded search."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from omcm_memory_rotation import summary

ARCHIVE = "memory_20260101_000000.md"


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    (path / ".claude" / "memory").mkdir(parents=True)
    return path


def omcm(tmp_path, project, *args, stdin=None):
    env = {
        **os.environ,
        "OMCM_LOAD_PLUGINS": "memory-rotation",
        "OMCM_HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", "memory", *args], env=env, capture_output=True, text=True, input=stdin
    )


def test_rotate_tells_a_person_what_happened_and_what_is_next(tmp_path, project):
    folder = project / ".claude" / "memory"
    (folder / "memory.md").write_text("".join(f"note {i} " + "r" * 80 + "\n" for i in range(1200)))
    first = omcm(tmp_path, project, "rotate")
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith("rotated 27,023 tokens of memory.md into")
    (archive,) = [p.name for p in folder.glob("memory_2*.md")]
    assert lines[1].split() == [archive, "27,023", "tokens,", "summary", "pending"]
    assert f"omcm memory summary {archive} --from FILE" in first.stdout
    assert "MEMORY_KEEPER" not in first.stdout
    again = omcm(tmp_path, project, "rotate")
    assert again.stdout.startswith("memory.md has ") and "nothing to do" in again.stdout


def test_summary_lists_every_problem_at_once_and_help_shows_the_shape(tmp_path, project):
    folder = project / ".claude" / "memory"
    (folder / ARCHIVE).write_text("## 2026-01-01\nx\n")
    bad = {"themes": [{"name": 1}], "issues": [{"issue": "i", "status": "later"}] * 11, "overallSummary": ""}
    proc = omcm(tmp_path, project, "summary", ARCHIVE, "--from", "-", stdin=json.dumps(bad))
    assert proc.returncode == 1
    problems = [line.strip() for line in proc.stderr.splitlines() if line.startswith("  ")]
    assert [p.split(":")[0] for p in problems] == [
        "overallSummary",
        "themes[0].name",
        "themes[0].summary",
        "keyDecisions",
        "issues",
        *[f"issues[{i}].status" for i in range(11)],
    ]
    assert "16 problems in the summary" in proc.stderr
    help_text = omcm(tmp_path, project, "summary", "--help").stdout
    assert summary.SHAPE in help_text


def test_the_documented_shape_is_the_validated_one():
    # The example in SHAPE, without its notes, is a summary that validates.
    doc = Path(__file__).resolve().parents[3] / "docs" / "plugins" / "memory-rotation.md"
    if doc.exists():
        assert summary.SHAPE in doc.read_text(encoding="utf-8")
    good = {
        "themes": [{"name": "topic", "summary": "s", "sessions": ["2026-01-10"]}],
        "keyDecisions": [{"decision": "what", "reason": "why", "date": "2026-01-11"}],
        "issues": [{"issue": "what went wrong", "status": "resolved", "date": "2026-01-12"}],
        "overallSummary": "all of it",
        "dateRange": {"first": "2026-01-10", "last": "2026-01-12"},
        "sectionCount": 45,
    }
    assert summary.problems(good) == []
    assert summary.problems({**good, "sectionCount": True, "dateRange": "2026"}) == [
        "dateRange: expected {" + '"first": "YYYY-MM-DD", "last": "YYYY-MM-DD"}, got "2026"',
        "sectionCount: expected a whole number, got true",
    ]
    assert summary.problems([]) == ["the summary must be a JSON object, got []"]


def test_search_is_one_line_per_hit_and_limited(tmp_path, project):
    folder = project / ".claude" / "memory"
    (folder / "memory.md").write_text("".join(f"port 8080 note {i}\n" for i in range(50)))
    proc = omcm(tmp_path, project, "search", "PORT 8080")
    assert proc.stdout.splitlines() == [f"memory.md:{i + 1}  port 8080 note {i}" for i in range(20)]
    assert "30 more; --limit 50 shows them all" in proc.stderr
    hits = json.loads(omcm(tmp_path, project, "search", "8080", "--limit", "3", "--json").stdout)
    assert [h["line"] for h in hits] == [1, 2, 3]
    assert omcm(tmp_path, project, "search", "nowhere").stdout == "No memory matches 'nowhere'.\n"
