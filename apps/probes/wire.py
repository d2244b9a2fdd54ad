"""What a browser sends for a typed URL: the host in ASCII (IDNA) and a percent-encoded path.

Pure module: no Django, no I/O. A probe target is stored and shown as it was typed
(``https://пример.рф/café/€?q=ü``); ``to_wire`` turns it into what goes on the network,
following the WHATWG URL Standard that browsers implement (its steps: ``to_wire``). Anything
that cannot be sent raises ``BadURL`` with a message for the probe's error.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from apps.lib import idn

__all__ = ["BadURL", "WireURL", "encode_host", "encode_path", "encode_query", "to_wire"]

# WHATWG: the C0 control set is everything below 0x20 and above 0x7E; then these characters.
_QUERY_SET = frozenset(' "#<>' + "'")
_PATH_SET = frozenset(' "#<>?`{}')


class BadURL(ValueError):
    """A URL that cannot be turned into a request; the message says why."""


@dataclass(frozen=True)
class WireURL:
    scheme: str
    host: str  # ASCII: an A-label name or an IP address (IPv6 without brackets)
    port: int
    server_name: str  # ASCII: SNI, certificate check and Host header
    target: str  # the request target: percent-encoded path and query

    @property
    def host_header(self) -> str:
        name = f"[{self.server_name}]" if ":" in self.server_name else self.server_name
        default = 443 if self.scheme == "https" else 80
        return name if self.port == default else f"{name}:{self.port}"


def to_wire(url: str, *, server_name: str | None = None, path: str | None = None) -> WireURL:
    """The network form of ``url``; ``server_name`` replaces the host in SNI and ``Host``.

    - The host goes through UTS #46 mapping (``idna.uts46_remap``, non-transitional: ``ß``
      stays ``ß``, and ``。`` separates labels), then every non-ASCII label becomes its A-label
      (``пример.рф`` -> ``xn--e1afmkfd.xn--p1ai``) with the ``idna`` package (IDNA 2008, which
      ``requests`` already brings). That name is what DNS is asked, what the ``Host`` header
      says and what TLS sends as SNI and checks the certificate against. ASCII labels keep
      what browsers accept (letters, digits, ``-`` and ``_``).
    - The path is percent-encoded with the "path percent-encode set" and the query with the
      "special-query percent-encode set" (UTF-8 bytes as ``%XX``; an existing ``%XX`` is kept,
      ``\\`` in the path becomes ``/``); the fragment is never sent.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise BadURL(f"not a URL Vigil can probe: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadURL(f"not an http(s) URL: {url!r}")
    host = encode_host(parts.hostname)
    name = encode_host(server_name) if server_name else host
    if path is not None:
        target = encode_path(path)
    else:
        target = encode_path(parts.path or "/")
        if parts.query:
            target += "?" + encode_query(parts.query)
    if port == 0:
        raise BadURL(f"bad port in {url!r}")
    default = 443 if parts.scheme == "https" else 80
    return WireURL(parts.scheme, host, port or default, name, target)


def encode_host(host: str) -> str:
    """An IP address as it is, a name in ASCII (A-labels), lower-case; BadURL otherwise."""
    try:
        return idn.to_ascii(host)
    except ValueError as exc:
        raise BadURL(str(exc)) from None


def _percent_encode(text: str, escape: frozenset[str]) -> str:
    out = []
    for char in text:
        if " " < char <= "~" and char not in escape:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def encode_path(path: str) -> str:
    """``/café/€`` -> ``/caf%C3%A9/%E2%82%AC``; ``%2F`` and other escapes are kept."""
    path = path.replace("\\", "/")
    if not path.startswith("/"):
        path = "/" + path
    return _percent_encode(path, _PATH_SET)


def encode_query(query: str) -> str:
    """``q=ü x`` -> ``q=%C3%BC%20x``."""
    return _percent_encode(query, _QUERY_SET)
