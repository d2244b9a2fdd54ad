"""Host names as browsers send them: UTS #46 mapping, then A-labels (IDNA 2008).

Pure module. ``to_ascii`` is what the probes put in DNS, ``Host`` and SNI, and what the
outbound guard judges when a URL is saved, so both look at the same name (Python's own
``idna`` codec is IDNA 2003, which maps ``faß.de`` to another name).
"""

from __future__ import annotations

import ipaddress
import re

import idna

MAX_HOST = 253  # DNS: a name is at most 253 characters, a label at most 63
MAX_LABEL = 63
_ASCII_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?", re.ASCII)


def to_ascii(host: str) -> str:
    """An IP address as it is, a name in ASCII (A-labels), lower-case; ValueError otherwise."""
    bare = host.strip("[]")
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        if getattr(address, "scope_id", None):
            raise ValueError(f"an IPv6 zone cannot be probed: {host!r}")
        return str(address)
    try:
        mapped = idna.uts46_remap(bare, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        raise ValueError(f"not a valid host name: {host!r}: {exc}") from None
    labels = mapped.split(".")
    if labels and labels[-1] == "":
        labels.pop()  # a trailing dot (fully qualified) is allowed
    encoded = []
    for label in labels:
        if label.isascii():
            ascii_label = label.lower()
        else:
            try:
                ascii_label = idna.alabel(label).decode("ascii")
            except (idna.IDNAError, UnicodeError, ValueError) as exc:
                raise ValueError(f"not a valid host name: {host!r}: {exc}") from None
        if not _ASCII_LABEL.fullmatch(ascii_label):
            raise ValueError(f"not a valid host name: {host!r}")
        encoded.append(ascii_label)
    name = ".".join(encoded)
    if not name or len(name) > MAX_HOST:
        raise ValueError(f"not a valid host name: {host!r}")
    return name
