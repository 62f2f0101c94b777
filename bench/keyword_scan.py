"""persistent-mode's keyword scan on a 4 MB prompt of repeated filler (issue 34: 1.6 MB took 22 s).

    .venv/bin/python bench/keyword_scan.py [--size BYTES]

Prints the CPU time of ``keywords.detect`` on each filler (best of 3) next to
the plugin budget (``[core] plugin_budget_ms``, 1500 ms by default).
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins" / "persistent-mode"))

from omcm_persistent_mode import keywords  # noqa: E402

FILLERS = {
    "words (please)": "please ",
    "a.a.a": "a.",
    "a-a-a": "a-",
    "dash separators": "- ",
    "blank lines": " \n",
    "opening quotes": "\u201c",
    "slashes": "/",
    "one long token": "a",
    "ulw!": "ulw! ",
    "tags": "<a ",
    "colons": ": ",
    "apostrophes": "'a ",
}


def main() -> None:
    size = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 4 * 1024 * 1024
    print(f"machine: {platform.node()} {platform.machine()} Python {platform.python_version()}; prompt {size} bytes")
    for label, unit in FILLERS.items():
        prompt = "ultrawork fix it " + unit * (size // len(unit)) + " x"
        times = []
        for _ in range(3):
            start = time.process_time()
            keywords.detect(prompt)
            times.append(time.process_time() - start)
        print(f"{label}: {min(times) * 1000:.0f} ms CPU (best of 3)")


if __name__ == "__main__":
    main()
