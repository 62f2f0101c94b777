"""Secrets by breadth: recall and precision of omcm's masking rules and of detect-secrets, on one corpus.

    .venv/bin/python bench/secret_detectors.py             # the table of docs/reliability.md
    .venv/bin/python bench/secret_detectors.py --misses     # also what each detector missed / over-masked
    .venv/bin/python bench/secret_detectors.py --cost       # masking cost per KB (docs/benchmarks.md)

The corpus is tests/reliability/secret_corpus.py: every secret shape (a
command line, a tool's output, a config file or an MCP tool's input, with the
random part that must disappear) and ordinary texts that must come out
unchanged (errors, commands, code, paths, hashes, UUIDs, base64 data that is
not a secret). A shape counts as caught when its random part is gone; an
ordinary text counts as a false positive when masking changed it at all.
Precision is caught / (caught + false positives), over items.

Detectors compared: omcm's rules as of e5743f9 (read from git), detect-secrets
1.5 with all its plugins (keyword and high-entropy included) and with only its
provider detectors (what omcm ships), omcm's current rules, and combinations.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reliability"))

from secret_corpus import ordinary_texts, secret_shapes  # noqa: E402

from omcm_core import _redact_library, redact  # noqa: E402

OLD_COMMIT = "e5743f9"
ALL_LIBRARY = _redact_library.PLUGINS + (
    "KeywordDetector",
    "Base64HighEntropyString",
    "HexHighEntropyString",
    "IPPublicDetector",
)


def _old_redact() -> types.ModuleType | None:
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:omcm_core/redact.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("old_redact")
    exec(compile(source, "old_redact.py", "exec"), module.__dict__)
    return module


def _on_text(text_mask: Callable[[str], str]) -> Callable[[Any], Any]:
    """A text detector applied to structured input: on its JSON text, as a library would see it."""

    def run(value: Any) -> Any:
        return text_mask(value if isinstance(value, str) else json.dumps(value))

    return run


def _then(first: Callable[[Any], Any], second: Callable[[str], str]) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        masked = first(value)
        return second(masked) if isinstance(masked, str) else json.loads(second(json.dumps(masked)))

    return run


def detectors() -> dict[str, Callable[[Any], Any]]:
    library_all = _on_text(lambda t: _redact_library.mask(t, ALL_LIBRARY))
    library_shipped = _on_text(_redact_library.mask)
    found: dict[str, Callable[[Any], Any]] = {}
    old = _old_redact()
    if old is not None:
        found[f"omcm rules at {OLD_COMMIT}"] = old.mask_structured
    found["detect-secrets, all plugins"] = library_all
    found["detect-secrets, provider detectors"] = library_shipped
    if old is not None:
        found[f"omcm at {OLD_COMMIT} + detect-secrets all"] = _then(
            old.mask_structured, lambda t: _redact_library.mask(t, ALL_LIBRARY)
        )
    found["omcm rules now"] = lambda v: redact.mask_structured(v, library=False)
    found["omcm rules now + detect-secrets all"] = _then(
        lambda v: redact.mask_structured(v, library=False), lambda t: _redact_library.mask(t, ALL_LIBRARY)
    )
    found["shipped: omcm rules + provider detectors"] = redact.mask_structured
    return found


def _leaked(masked: Any, needle: str) -> bool:
    return needle in (masked if isinstance(masked, str) else json.dumps(masked))


def evaluate(detector: Callable[[Any], Any]) -> tuple[list[str], list[str], int, int]:
    """(names of missed shapes, over-masked ordinary texts, shapes, ordinary texts)."""
    shapes, ordinary = secret_shapes(), ordinary_texts()
    missed = [s.name for s in shapes if _leaked(detector(s.value), s.needle)]
    over = [t for t in ordinary if detector(t) != t]
    return missed, over, len(shapes), len(ordinary)


def table(show_misses: bool) -> None:
    print("| detector | secrets caught (recall) | ordinary texts changed | precision |")
    print("| --- | --- | --- | --- |")
    details = []
    for name, detector in detectors().items():
        missed, over, n_secret, n_plain = evaluate(detector)
        caught = n_secret - len(missed)
        precision = caught / (caught + len(over)) if caught + len(over) else 0.0
        print(f"| {name} | {caught}/{n_secret} ({caught / n_secret:.1%}) | {len(over)}/{n_plain} | {precision:.1%} |")
        details.append((name, missed, over))
    if show_misses:
        for name, missed, over in details:
            print(f"\n## {name}\nmissed: {', '.join(missed)}")
            for text in over:
                print(f"  over-masked: {text[:100]!r}")


def cost(kb: int = 64, rounds: int = 5) -> None:
    """Masking cost per KB of ordinary tool output with secrets sprinkled in, rules alone and shipped."""
    shapes, ordinary = secret_shapes(), ordinary_texts()
    parts: list[str] = []
    i = 0
    while sum(map(len, parts)) < kb * 1024:
        parts.append(ordinary[i % len(ordinary)])
        if i % 10 == 0:
            parts.append(shapes[i % len(shapes)].text)
        i += 1
    dense = "\n".join(parts)[: kb * 1024]
    line = "   Compiling serde_json v1.0.117 (/home/dev/.cargo/registry/src/serde_json-1.0.117)\n"
    build_log = (line * (kb * 1024 // len(line) + 1))[: kb * 1024]
    for label, text in (("the corpus, mixed (dense with keywords and tokens)", dense), ("a build log", build_log)):
        print(f"-- {label}")
        _cost(text, kb, rounds)


def _cost(text: str, kb: int, rounds: int) -> None:
    start = time.perf_counter()
    _redact_library.mask("warm up: import the library xxxxxxxxxxxxxxxx")
    import_ms = (time.perf_counter() - start) * 1000
    print(f"machine: {platform.node()} {platform.machine()} {platform.python_version()}; text {len(text)} chars")
    print(f"first library call (import): {import_ms:.0f} ms")
    old = _old_redact()
    runs: list[tuple[str, Callable[[], Any]]] = []
    if old is not None:
        runs.append((f"omcm rules at {OLD_COMMIT}", lambda: old.mask(text)))
    for label, run in runs + [
        ("omcm rules", lambda: redact.mask(text, library=False)),
        ("omcm rules + provider detectors (shipped)", lambda: redact.mask(text)),
        ("detect-secrets, all plugins", lambda: _redact_library.mask(text, ALL_LIBRARY)),
    ]:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        best = min(times)
        print(f"{label}: {best * 1000 / kb:.2f} ms/KB (best of {rounds}, {best * 1000:.0f} ms for {kb} KB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--misses", action="store_true", help="list what each detector missed or over-masked")
    parser.add_argument("--cost", action="store_true", help="measure masking cost per KB instead")
    args = parser.parse_args()
    if args.cost:
        cost()
    else:
        table(args.misses)


if __name__ == "__main__":
    main()
