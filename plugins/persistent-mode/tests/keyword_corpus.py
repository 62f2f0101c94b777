"""The labelled prompt corpus for keyword precision, and its false- and missed-trigger rates.

Two parts: ``keyword_corpus.tsv`` (prompts written for this corpus, in the
words users write, each with the triggers it should fire) and the user prompts
of ``../shared/fixtures`` (real sessions, read at test time, never copied:
``keyword_corpus_fixtures.tsv`` holds only a stable key per prompt and its
labels). A trigger is a mode (ultrawork, ralph-loop, ultrawork-ralph, cancel),
a hint (search, analyze) or a skill (git-master, frontend-ui-ux).

``python plugins/persistent-mode/tests/keyword_corpus.py`` prints the table
that docs/plugins/persistent-mode.md shows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRIGGERS = ("ultrawork", "ralph-loop", "ultrawork-ralph", "cancel", "search", "analyze", "git-master", "frontend-ui-ux")


def _labels(text: str) -> frozenset:
    labels = frozenset(text.split())
    unknown = labels - set(TRIGGERS)
    if unknown:
        raise ValueError(f"unknown labels {sorted(unknown)}")
    return labels


def written() -> list:
    """(prompt, labels) of the written part."""
    rows = []
    for line in (HERE / "keyword_corpus.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip():
            prompt, _, labels = line.partition("\t")
            rows.append((prompt, _labels(labels)))
    return rows


def fixture_labels() -> dict:
    rows = {}
    for line in (HERE / "keyword_corpus_fixtures.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, labels = line.partition("\t")
            rows[key] = _labels(labels)
    return rows


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def _user_text(record: dict) -> str | None:
    if record.get("type") != "user" or record.get("isSidechain") or record.get("isMeta"):
        return None
    content = (record.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        texts = [t for t in texts if isinstance(t, str)]
        return "\n".join(texts) if texts else None
    return None


def fixture_prompts(fixtures: Path) -> Iterable[tuple]:
    """(key, prompt) of every user prompt in the shared fixtures' transcripts and UserPromptSubmit payloads."""
    for path in sorted((fixtures / "transcripts").glob("*.jsonl")):
        for index, line in enumerate(path.read_bytes().split(b"\n")):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            prompt = _user_text(record) if isinstance(record, dict) else None
            if prompt is not None:
                yield f"transcripts/{path.name}:{index}:{_digest(line)}", prompt
    for path in sorted((fixtures / "hook-payloads").glob("UserPromptSubmit-*.json")):
        prompt = json.loads(path.read_text(encoding="utf-8")).get("prompt")
        if isinstance(prompt, str):
            yield f"hook-payloads/{path.name}:0:{_digest(prompt.encode())}", prompt


def predict(prompt: str) -> frozenset:
    """The triggers the plugin's detectors fire for ``prompt`` (default config)."""
    from omcm_persistent_mode import keywords, skills

    found = keywords.detect(prompt)
    fired = set(found.hints)
    if found.cancel:
        fired.add("cancel")
    if found.mode:
        fired.add(found.mode)
    skill = skills.detect(prompt)
    if skill:
        fired.add(skill)
    return frozenset(fired)


def measure(rows: list) -> dict:
    """Per trigger: false triggers among prompts not labelled with it, missed ones among those labelled."""
    table = {}
    for trigger in (*TRIGGERS, "any"):
        false = missed = positives = negatives = 0
        for prompt, labels in rows:
            fired = predict(prompt)
            if trigger == "any":
                wrong, lost = bool(fired - labels), len(labels - fired)
                false += wrong
                missed += lost
                positives += len(labels)
                negatives += 1
                continue
            if trigger in labels:
                positives += 1
                missed += trigger not in fired
            else:
                negatives += 1
                false += trigger in fired
        table[trigger] = (false, negatives, missed, positives)
    return table


def rows(fixtures: Path | None) -> list:
    found = list(written())
    if fixtures is not None:
        labels = fixture_labels()
        found += [(prompt, labels[key]) for key, prompt in fixture_prompts(fixtures) if key in labels]
    return found


def table_lines(table: dict) -> list:
    lines = ["| trigger | false triggers | missed triggers |", "|---|---|---|"]
    for trigger, (false, negatives, missed, positives) in table.items():
        name = "all (prompts with a wrong trigger / labels missed)" if trigger == "any" else trigger
        lines.append(
            f"| {name} | {false}/{negatives} ({100 * false / max(negatives, 1):.1f} %) "
            f"| {missed}/{positives} ({100 * missed / max(positives, 1):.1f} %) |"
        )
    return lines


if __name__ == "__main__":
    from omcm_core.testing import shared_fixtures_dir

    corpus = rows(shared_fixtures_dir())
    print(f"{len(corpus)} prompts")
    print("\n".join(table_lines(measure(corpus))))
