"""SHA-256 without ``hashlib``: every cold hook call hashes (the plugin cache's key, the masking stamp).

``hashlib`` loads OpenSSL's shared library (``_hashlib``), 3-7 ms of a cold call on
the bench machine; CPython's own built-in module gives the same digests.
"""

from __future__ import annotations

from typing import Any


def sha256(data: bytes = b"") -> Any:
    """``hashlib.sha256(data)``: the same object interface (``update``, ``hexdigest``) and digests."""
    try:
        from _sha2 import sha256 as built_in  # type: ignore[import-not-found]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256 as built_in  # type: ignore[import-not-found,no-redef]  # 3.10, 3.11
        except ImportError:  # another interpreter, or a build without it
            from hashlib import sha256 as built_in  # type: ignore[no-redef]
    return built_in(data)
