"""gzip for answers that are kept (the API's cached list): who accepts it, and the same bytes
wherever they are compressed.

``accepts_gzip`` reads ``Accept-Encoding`` as RFC 9110 does (``gzip`` or ``x-gzip``, else
``*``, with a q-value above 0). ``compress`` is deterministic (no time in the header, one level),
so a body kept under a tag is compressed to the same bytes by every process; callers compress a
body once and keep the result, never on every request.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from typing import Any

#: Below this a body goes as it is: gzip's header and the extra header cost more than it saves.
MIN_SIZE = 1024
LEVEL = 6


def _q(parameters: list[str]) -> float:
    for parameter in parameters:
        name, _, value = parameter.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def accepts_gzip(meta: Mapping[str, Any]) -> bool:
    """Whether a request's ``Accept-Encoding`` (its WSGI ``meta``) accepts gzip."""
    header = meta.get("HTTP_ACCEPT_ENCODING", "")
    if not header:
        return False
    star = None
    for item in header.split(","):
        coding, *parameters = item.split(";")
        coding = coding.strip().lower()
        if coding in ("gzip", "x-gzip"):
            return _q(parameters) > 0
        if coding == "*":
            star = _q(parameters) > 0
    return bool(star)


def compress(body: bytes) -> bytes:
    """``body`` gzipped, the same bytes for the same body."""
    return gzip.compress(body, compresslevel=LEVEL, mtime=0)
