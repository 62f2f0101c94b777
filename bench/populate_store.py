"""Fill an OMCM_HOME store the size issue 7 measures against (run with the bench venv's Python).

python bench/populate_store.py OMCM_HOME [--observations 1000000] [--kb 100000] [--events 1000000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import post_tool_observer_bench  # noqa: E402
import pre_tool_guide_query  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home", type=Path)
    parser.add_argument("--observations", type=int, default=1_000_000)
    parser.add_argument("--kb", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    post_tool_observer_bench.populate(args.home, args.observations)
    pre_tool_guide_query.populate(args.home, args.kb, args.events)


if __name__ == "__main__":
    main()
