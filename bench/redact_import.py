"""Masking's import and per-KB cost: what lazy rule compiling (issue 35 item 3) saves and must not cost.

    .venv/bin/python bench/redact_import.py [--tree DIR]   # DIR: another checkout's root, to compare

Prints, each in a fresh interpreter (best of 7): the time to import
``omcm_core.redact``, the first ``mask()`` (compiles the rules when they are
lazy), and omcm's rules' cost per KB on a mixed 64 KB text (best of 5).
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = r"""
import time
t0 = time.perf_counter()
import omcm_core.redact as r
t1 = time.perf_counter()
r.mask("password=hunter2hunter2 and nothing else", library=False)
t2 = time.perf_counter()
text = ("   Compiling serde v1.0 (/home/dev/.cargo/registry)\nexport API_TOKEN=Zx81kQm2Lr7Vp0aa\n"
        "GET https://example.com/?page=2 200 OK\nerror: invalid token\n") * 400
text = text[:65536]
best = min((lambda s: (r.mask(text, library=False), time.process_time() - s)[1])(time.process_time()) for _ in range(5))
print(f"{(t1 - t0) * 1000:.2f} {(t2 - t1) * 1000:.2f} {best * 1000 / 64:.3f}")
"""


def main() -> None:
    tree = Path(sys.argv[sys.argv.index("--tree") + 1]) if "--tree" in sys.argv else ROOT
    probe = f"import sys; sys.path.insert(0, {str(tree)!r})\n" + PROBE
    rows = []
    for _ in range(7):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tree)
        rows.append([float(x) for x in out.stdout.split()])
    print(f"tree: {tree}")
    print(f"machine: {platform.node()} {platform.machine()} Python {platform.python_version()}")
    print(f"import omcm_core.redact: {min(r[0] for r in rows):.2f} ms (best of 7)")
    print(f"first mask(): {min(r[1] for r in rows):.2f} ms (best of 7)")
    print(f"omcm rules per KB (64 KB mixed text): {min(r[2] for r in rows):.3f} ms/KB of CPU (best of 7x5)")


if __name__ == "__main__":
    main()
