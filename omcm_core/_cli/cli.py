"""The ``omcm`` command's entry point.

``omcm hook`` is the hot path and is handed to the client here, before argparse
or pluggy are imported; every other subcommand is for people, parsed and run by
:mod:`omcm_core._cli.main`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # importing `typing` costs ~4 ms on every `omcm hook`
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "hook":
        from omcm_core._runtime.client import main as hook_main

        return hook_main(argv[1:])
    from omcm_core._cli.main import run

    return run(argv)
