"""The client's address as Vigil counts it (``VIGIL_PROXY_COUNT``): for login lockouts, the audit
trail and the ``/metrics`` allow-list."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    """The client's address: the peer, or what the outermost proxy saw.

    With ``VIGIL_PROXY_COUNT`` proxies in front, each appends the address it received from to
    ``X-Forwarded-For``, so the client is the count-th entry from the right; entries further
    left were sent by the client and cannot be trusted (anyone could dodge a lockout by
    sending a new one each time). A header shorter than the count falls back to the peer.
    """
    count = settings.VIGIL_PROXY_COUNT
    peer = request.META.get("REMOTE_ADDR", "")
    if count <= 0:
        return peer
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    return forwarded[-count] if len(forwarded) >= count else peer
