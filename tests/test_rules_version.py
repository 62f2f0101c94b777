"""omcm_core.redact.rules_version: one stamp per set of masking rules, and a different one without the library."""

import subprocess
import sys

CODE = """
from omcm_core import _redact_library, redact
full = redact.rules_version()
assert full == redact.rules_version() and len(full) == 16
_redact_library.defer()  # a cold PreToolUse process: omcm's rules alone
print(full, redact.rules_version())
"""


def test_the_stamp_is_stable_and_says_when_the_library_pass_was_skipped():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout.split()
    full, rules_only = out
    assert rules_only == full + "-rules-only"
    again = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout.split()
    assert again[0] == full  # the same rules in another process: the same stamp, so its rows are not masked again
