"""The one way alerts leave over HTTP: POST through the outbound guard, with urllib3.

The URL's host is resolved once and every address is judged (``apps.lib.outbound``); the
connection goes to a judged address, never to the name again (no second DNS lookup), with the
``Host`` header, TLS SNI and certificate verification on the name. urllib3 (already here under
requests, boto3 and anymail) takes that split natively: a connection pool for the address with
``server_hostname`` and ``assert_hostname`` set to the name. Redirects are not followed (a 3xx
is a failure naming where it pointed), every call has a total timeout, and at most
``MAX_BODY`` bytes of an answer are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from urllib3.exceptions import HTTPError as Urllib3Error

from apps.lib import outbound

from .base import RECIPIENT, TRANSIENT, TransportError

MAX_BODY = 64 * 1024
USER_AGENT = "Vigil-alerts/1"


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes  # at most MAX_BODY bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a channel's URL (scheme, host, the outbound guard), or None."""
    try:
        parts = urlsplit(url.strip())
        _ = parts.port  # raises ValueError for a port that is not one
    except ValueError as exc:
        return f"Not a URL: {exc}."
    if parts.scheme not in ("http", "https"):
        return "The URL must start with https:// (or http://)."
    if not parts.hostname:
        return "The URL has no host."
    if parts.username or parts.password:
        return "Put credentials in the secret, not in the URL."
    try:
        outbound.check_host(parts.hostname)
    except outbound.OutboundRefused as refused:
        return str(refused)
    return None


def _host_header(host: str, port: int | None) -> str:
    """The ``Host`` header of a URL's host and explicit port (an IPv6 address in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def _pool(
    ip: str, port: int, host: str, https: bool, limit: urllib3.Timeout
) -> urllib3.HTTPConnectionPool:
    """A one-connection pool to the address the guard resolved, TLS verified against ``host``
    (the name, not the address) and Vigil's CA file when set; no retries of its own."""
    if not https:
        return urllib3.HTTPConnectionPool(ip, port, timeout=limit, retries=False)
    return urllib3.HTTPSConnectionPool(
        ip,
        port,
        timeout=limit,
        retries=False,
        maxsize=1,
        cert_reqs="CERT_REQUIRED",
        ca_certs=settings.VIGIL_ALERT_CA_FILE or None,
        server_hostname=host,
        assert_hostname=host,
    )


def post(url: str, body: bytes, headers: dict[str, str], timeout: float | None = None) -> Answer:
    """POST ``body`` to ``url``; raises ``TransportError`` (recipient or transient) on failure.

    Any answer is returned, whatever its status, but a redirect, which is refused."""
    timeout = timeout or settings.VIGIL_ALERT_HTTP_TIMEOUT
    parts = urlsplit(url)
    host = parts.hostname or ""
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        addresses = outbound.resolve(host, port)
    except outbound.OutboundRefused as refused:
        raise TransportError(str(refused), failure=RECIPIENT) from None
    except OSError as exc:
        raise TransportError(f"Cannot resolve {host}: {exc}", failure=TRANSIENT) from None
    headers = {"Host": _host_header(host, parts.port), "User-Agent": USER_AGENT, **headers}
    limit = urllib3.Timeout(total=timeout, connect=min(5.0, timeout))
    last: Exception | None = None
    for address in addresses:
        pool = _pool(address.ip, port, host, https, limit)
        try:
            response = pool.urlopen(
                "POST",
                path,
                body=body,
                headers=headers,
                redirect=False,
                retries=False,
                preload_content=False,
            )
            try:
                data = response.read(MAX_BODY)
            finally:
                response.release_conn()
        except urllib3.exceptions.NewConnectionError as exc:
            last = exc
            continue
        except urllib3.exceptions.SSLError as exc:
            raise TransportError(f"TLS to {host} failed: {exc}", failure=RECIPIENT) from None
        except (Urllib3Error, OSError) as exc:
            raise TransportError(f"{host}: {type(exc).__name__}: {exc}") from None
        finally:
            pool.close()
        answer = Answer(response.status, {k.lower(): v for k, v in response.headers.items()}, data)
        if 300 <= answer.status < 400:
            where = answer.headers.get("location", "(no Location)")
            raise TransportError(
                f"{host} answered {answer.status}, redirecting to {where}; Vigil does not follow "
                "redirects: put the final URL in the channel",
                failure=RECIPIENT,
            )
        return answer
    raise TransportError(f"Cannot connect to {host}:{port}: {last}")


def raise_for_status(answer: Answer, what: str) -> None:
    """2xx passes; 408, 429 and 5xx are transient; any other 4xx is the recipient's."""
    if 200 <= answer.status < 300:
        return
    excerpt = " ".join(answer.text.split())[:200]
    message = f"{what} answered {answer.status}" + (f": {excerpt}" if excerpt else "")
    if answer.status in (408, 425, 429) or answer.status >= 500:
        raise TransportError(message, failure=TRANSIENT)
    raise TransportError(message, failure=RECIPIENT)
