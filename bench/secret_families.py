"""Secrets by family (issue 34 item 5): recall and precision on the development and the held-out part.

    .venv/bin/python bench/secret_families.py                # both parts, overall and by family
    .venv/bin/python bench/secret_families.py --misses       # also what the DEVELOPMENT part missed

The corpus is tests/reliability/secret_families.py (how it is split is said
there and in docs/reliability.md §9b). A secret counts as caught when its
needle is gone from the shipped masking's output (omcm's rules then
detect-secrets' provider detectors, ``mask_structured``); a look-alike is a
false positive when masking changed it at all. Precision = caught / (caught +
false positives). Misses are listed for the development part only: rules are
written against it, never against the held-out part.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reliability"))

from secret_families import development, held_out  # noqa: E402

from omcm_core.redact import mask_structured  # noqa: E402


def _leaked(masked: Any, needle: str) -> bool:
    return needle in (masked if isinstance(masked, str) else json.dumps(masked))


def score(part) -> dict[str, Any]:
    shapes, plain = part
    missed = [s for s in shapes if _leaked(mask_structured(s.value), s.needle)]
    over = [(name, text) for name, text in plain if mask_structured(text) != text]
    caught = len(shapes) - len(missed)
    return {
        "secrets": len(shapes),
        "plain": len(plain),
        "caught": caught,
        "over": len(over),
        "recall": caught / len(shapes),
        "precision": caught / (caught + len(over)) if caught + len(over) else 0.0,
        "missed": missed,
        "over_items": over,
        "by_family": {
            f: (n - sum(1 for s in missed if s.name.split("/")[0] == f), n)
            for f, n in Counter(s.name.split("/")[0] for s in shapes).items()
        },
        "over_by_family": dict(Counter(name.split("/")[0] for name, _t in over)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the development part's misses")
    args = parser.parse_args()
    for label, part in (("development", development()), ("held-out", held_out())):
        r = score(part)
        print(
            f"{label}: recall {r['caught']}/{r['secrets']} ({r['recall']:.1%}), "
            f"look-alikes changed {r['over']}/{r['plain']}, precision {r['precision']:.1%}"
        )
        print("  by family: " + ", ".join(f"{f} {c}/{n}" for f, (c, n) in r["by_family"].items()))
        print("  look-alikes changed by family: " + (json.dumps(r["over_by_family"]) or "{}"))
        if args.misses and label == "development":
            for s in r["missed"]:
                print(f"  MISSED {s.name}: {s.text[:160]!r}")
            for name, text in r["over_items"]:
                print(f"  OVER {name}: {text[:160]!r} -> {mask_structured(text)[:160]!r}")


if __name__ == "__main__":
    main()
