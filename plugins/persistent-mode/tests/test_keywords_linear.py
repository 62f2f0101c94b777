"""Keyword detection is linear in the prompt (issue 34: a filler prompt took 22 s for 1.6 MB).

Not a speed target (bench/keyword_scan.py measures that): the CPU time detect()
spends on an 8x longer prompt of the same filler must grow like 8x, not 64x.
Each size runs in its own process, timed by its own CPU clock; a scan that
backtracks (the old `a.a.a…` path: 65 s for 100 KB) is cut off and fails.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from omcm_persistent_mode import keywords

PLUGIN = str(Path(keywords.__file__).resolve().parents[1])
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from omcm_persistent_mode import keywords
unit, size = json.loads(sys.argv[2]), int(sys.argv[3])
prompt = "ultrawork fix it " + unit * (size // len(unit)) + " x"
keywords.detect("warm up")
best = min((lambda s: (keywords.detect(prompt), time.process_time() - s)[1])(time.process_time()) for _ in range(3))
print(best)
"""
SMALL, RATIO = 64 * 1024, 8
FILLERS = ["a.", "a-", "please ", "\u201c", "\u00ab", "- ", " \n", "ulw! ", "/", "a", "and ", "<a ", ": ", "'a "]


def _cpu_seconds(unit: str, size: int) -> float:
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, PLUGIN, json.dumps(unit), str(size)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return float("inf")
    return float(out.stdout)


@pytest.mark.parametrize("unit", FILLERS)
def test_detection_grows_linearly_with_a_filler_prompt(unit):
    small = _cpu_seconds(unit, SMALL)
    big = _cpu_seconds(unit, SMALL * RATIO)
    # Linear: ~8x. Quadratic: ~64x (or cut off: inf). The floor absorbs clock granularity on tiny times.
    assert math.isfinite(small) and math.isfinite(big), (unit, small, big)
    assert big <= 3 * RATIO * max(small, 0.005), (unit, small, big)


def test_a_keyword_survives_four_megabytes_of_filler():
    prompt = "ultrawork: fix the flaky test " + "a." * (2 * 1024 * 1024)
    found = keywords.detect(prompt)
    assert found.mode == keywords.ULTRAWORK and found.task.startswith("fix the flaky test")


def test_lead_words_are_stripped_in_one_pass():
    assert keywords.hints(keywords.prose("please " * 20000 + "find where the config is loaded")) == ("search",)
    assert keywords._clean("uw " + "- " * 50000 + "x - : ") == "uw " + "- " * 50000 + "x"
