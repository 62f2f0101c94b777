"""Recalled text made inert: omcm's own control tags, quoted back to Claude, must not act again.

A plugin that recalls text (memory-rotation's "Previous session's end", the
notepad's notes) may quote a message that ended with
``<promise>TASK_COMPLETE</promise>`` or ``<story-done>US-001</story-done>``.
Put back in front of the model, the tag reads as an instruction, and read
back from the transcript it would end persistent-mode's loop. :func:`inert`
swaps the angle brackets of those tags for look-alikes (``‹promise›``): the
text still reads the same to a person, and no tag parser matches it.
"""

from __future__ import annotations

import re

#: The tags omcm's plugins act on (persistent-mode, notepad).
CONTROL_TAGS = ("promise", "story-done", "oracle-approved", "oracle-rejected", "remember")

_CONTROL = re.compile(r"<(/?)\s*(" + "|".join(CONTROL_TAGS) + r")\b([^<>\n]{0,200})>", re.I)


def inert(text: str) -> str:
    """``text`` with each of :data:`CONTROL_TAGS` (opening, closing, with attributes) made a look-alike."""
    return _CONTROL.sub(lambda m: f"‹{m[1]}{m[2]}{m[3]}›", text)
