"""Masking costs nothing at import (issue 35 item 3): the rules compile, and detect-secrets loads, on first use."""

import json
import subprocess
import sys

PROBE = r"""
import json, re, sys
compiled_by = []
original = re._compile
def counting(pattern, flags):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.endswith(("re/__init__.py", "re.py")):
        frame = frame.f_back
    if frame is not None and "redact" in frame.f_code.co_filename:
        compiled_by.append(frame.f_code.co_filename)
    return original(pattern, flags)
re._compile = counting
import omcm_core.redact as redact
from omcm_core import _redact_rules
state = {
    "at_import": len(compiled_by),
    "count_at_import": _redact_rules.compiled_count(),
    "detect_secrets_at_import": "detect_secrets" in sys.modules,
}
masked = redact.mask("export API_TOKEN=Zx81kQm2Lr7Vp0aaQ1", library=False)
state["after_mask"] = len(compiled_by)
state["count_after_mask"] = _redact_rules.compiled_count()
state["masked"] = masked
state["detect_secrets_after_rules_only"] = "detect_secrets" in sys.modules
print(json.dumps(state))
"""


def test_importing_masking_compiles_nothing_and_imports_no_detector():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    state = json.loads(out.stdout)
    assert state["at_import"] == 0 and state["count_at_import"] == 0
    assert state["detect_secrets_at_import"] is False
    # The first mask compiles what it runs (and still masks).
    assert state["after_mask"] > 0 and state["count_after_mask"] > 0
    assert state["masked"] == "export API_TOKEN=[REDACTED]"
    assert state["detect_secrets_after_rules_only"] is False


def test_the_lazy_pattern_behaves_like_the_compiled_one():
    from omcm_core import _redact_rules

    lazy = _redact_rules.R(r"(?i)ab+c")
    assert lazy.sub("x", "ABBC abc") == "x x"
    assert lazy.flags & 2  # re.IGNORECASE, from the inline flag
    assert _redact_rules.compiled(lazy) is _redact_rules.compiled(lazy)
