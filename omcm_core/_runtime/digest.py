"""SHA-256 without ``hashlib``: every cold hook call hashes (the plugin cache's key, the masking stamp).

``hashlib`` loads OpenSSL's shared library (``_hashlib``), 3-7 ms of a cold call on
the bench machine; CPython's own built-in module gives the same digests.
"""

from __future__ import annotations

import importlib
from typing import Any

_FOUND: list = []


def sha256(data: bytes = b"") -> Any:
    """``hashlib.sha256(data)``: the same object interface (``update``, ``hexdigest``) and digests."""
    if not _FOUND:
        for name in ("_sha2", "_sha256"):  # Python 3.12+, then 3.10 and 3.11
            try:
                _FOUND.append(importlib.import_module(name).sha256)
                break
            except (ImportError, AttributeError):
                continue
        else:  # another interpreter, or a build without them
            import hashlib

            _FOUND.append(hashlib.sha256)
    return _FOUND[0](data)
