"""The outbound guard: every address Vigil connects to on a user's behalf passes here.

A name is resolved once, every address it resolves to is judged, and the connection is made to a
judged address, never resolved again (DNS rebinding); the same judgement runs when the object is
saved, a 400 naming the rule. Refused always: unspecified, link-local (the metadata service),
AWS's ``fd00:ec2::/32``, multicast, reserved and broadcast, also inside IPv6 forms that carry an
IPv4 address; loopback only when ``Policy.allow_loopback``; then ``Policy.deny``, and
``Policy.allow`` when not empty; private ranges are allowed by default. ``judge`` and ``Policy``
are pure; ``resolve``, ``resolve_async`` and ``connect`` do DNS and sockets. The rules for
users: docs/security.md.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from .idn import to_ascii

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_ADDRESSES = (
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("fd00:ec2::254"),
)
_UNSPECIFIED_V4 = ipaddress.ip_network("0.0.0.0/8")
_AWS_IPV6_SERVICES = ipaddress.ip_network("fd00:ec2::/32")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

#: What ``VIGIL_OUTBOUND_ALLOW_LOOPBACK=auto`` asks: loopback is allowed while one of these says
#: so, refused when none does. The demo app registers "demo mode is on" (``apps/demo/apps.py``).
_LOOPBACK_WHEN_AUTO: list[Callable[[], bool]] = []


def register_loopback_when_auto(allows: Callable[[], bool]) -> None:
    """Let ``allows()`` turn loopback on under ``ALLOW_LOOPBACK=auto`` (an app's ready())."""
    if allows not in _LOOPBACK_WHEN_AUTO:
        _LOOPBACK_WHEN_AUTO.append(allows)


class OutboundRefused(ValueError):
    """A connection the guard will not make; ``str()`` names the address and the rule."""

    def __init__(self, address: str, rule: str, host: str | None = None) -> None:
        self.address = address
        self.rule = rule
        self.host = host
        shown = address if not host or host == address else f"{host} ({address})"
        super().__init__(f"{shown} is refused: {rule}")


@dataclass(frozen=True)
class Policy:
    allow_loopback: bool = False
    allow: tuple[IPNetwork, ...] = ()
    deny: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_settings(cls) -> Policy:
        loopback = settings.VIGIL_OUTBOUND_ALLOW_LOOPBACK
        if loopback == "auto":
            loopback = any(allows() for allows in _LOOPBACK_WHEN_AUTO)
        return cls(
            allow_loopback=bool(loopback),
            allow=parse_networks(settings.VIGIL_OUTBOUND_ALLOW),
            deny=parse_networks(settings.VIGIL_OUTBOUND_DENY),
        )


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """``["10.0.0.0/8", "192.0.2.7"]`` → networks; raises ValueError naming a bad entry."""
    networks = []
    for value in values:
        value = value.strip()
        if value:
            try:
                networks.append(ipaddress.ip_network(value, strict=False))
            except ValueError as exc:
                raise ValueError(f"{value!r} is not an address or a network: {exc}") from exc
    return tuple(networks)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _always_refused(address: IPAddress) -> str | None:
    if address in METADATA_ADDRESSES:
        return "the instance metadata service"
    if address.is_unspecified or (address.version == 4 and address in _UNSPECIFIED_V4):
        return "an unspecified address"
    if address.version == 6 and address in _AWS_IPV6_SERVICES:
        return "an AWS service address (metadata, DNS, time)"
    if address.is_link_local:
        return "a link-local address (where the instance metadata service lives)"
    if address.is_multicast:
        return "a multicast address"
    if (address.is_reserved and not address.is_loopback) or address.packed == b"\xff" * 4:
        return "a reserved address"
    return None


def judge(address: IPAddress | str, policy: Policy) -> str | None:
    """Why ``address`` is refused under ``policy``, or None when it may be connected to."""
    address = ipaddress.ip_address(address)
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            address = ipaddress.IPv6Address(str(address).split("%", 1)[0])
        # A mapped, NAT64, 6to4 or Teredo address reaches the IPv4 address inside it.
        address = _embedded_ipv4(address) or address
    reason = _always_refused(address)
    if reason:
        return reason
    if address.is_loopback and not policy.allow_loopback:
        return "a loopback address (allowed only with VIGIL_OUTBOUND_ALLOW_LOOPBACK)"
    for network in policy.deny:
        if address.version == network.version and address in network:
            return f"inside {network}, which VIGIL_OUTBOUND_DENY refuses"
    if policy.allow and not any(
        address.version == network.version and address in network for network in policy.allow
    ):
        return "outside the networks VIGIL_OUTBOUND_ALLOW permits"
    return None


def check(address: IPAddress | str, policy: Policy, host: str | None = None) -> None:
    """Raise ``OutboundRefused`` when ``judge`` refuses ``address``."""
    reason = judge(address, policy)
    if reason:
        raise OutboundRefused(str(address), reason, host)


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is one (``[::1]`` too), else None."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Resolved:
    """One judged address to connect to: ``socket.socket(family, ...).connect(sockaddr)``."""

    family: int
    sockaddr: tuple

    @property
    def ip(self) -> str:
        return self.sockaddr[0]


def judge_infos(host: str, infos: list[tuple], policy: Policy) -> list[Resolved]:
    """``getaddrinfo``'s answer for ``host``, each address judged; raises ``OutboundRefused``."""
    return _judge_infos(host, infos, policy)


def _judge_infos(host: str, infos: list[tuple], policy: Policy) -> list[Resolved]:
    resolved: list[Resolved] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        # Refuse the name if any of its addresses is refused: which one a client picks is
        # the resolver's choice, and a name that mixes them is a name someone crafted.
        check(sockaddr[0], policy, host)
        item = Resolved(family, sockaddr)
        if item not in resolved:
            resolved.append(item)
    if not resolved:
        raise OSError(f"{host} resolves to no address")
    return resolved


def resolve(host: str, port: int, policy: Policy | None = None) -> list[Resolved]:
    """Every address of ``host``, each judged; raises ``OutboundRefused`` or ``OSError``."""
    policy = policy or Policy.from_settings()
    infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    return _judge_infos(host, infos, policy)


async def resolve_async(host: str, port: int, policy: Policy | None = None) -> list[Resolved]:
    """``resolve`` without blocking the event loop."""
    policy = policy or Policy.from_settings()
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    return _judge_infos(host, infos, policy)


def connect(host: str, port: int, timeout: float, policy: Policy | None = None) -> socket.socket:
    """A TCP connection to a judged address of ``host`` (the first that answers)."""
    last_error: OSError | None = None
    for address in resolve(host, port, policy):
        sock = socket.socket(address.family, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(address.sockaddr)
        except OSError as error:
            sock.close()
            last_error = error
            continue
        return sock
    assert last_error is not None
    raise last_error


def check_host(host: str, policy: Policy | None = None) -> None:
    """The check made when an address is saved: an IP literal is judged; a name is judged by
    what it resolves to now when it resolves (a name that does not resolve yet is judged at
    connect time). Raises ``OutboundRefused``."""
    policy = policy or Policy.from_settings()
    literal = literal_address(host)
    if literal is not None:
        check(literal, policy, host)
        return
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return
    _judge_infos(host, infos, policy)


def validate_host(value: str) -> None:
    """A Django field validator (models, so the admin, the pages and the API alike): a host
    the guard refuses now is a ``ValidationError`` naming the address and the rule."""
    host = (value or "").strip()
    if not host:
        return
    try:
        check_host(host)
    except OutboundRefused as refused:
        raise ValidationError(str(refused), code="outbound") from None


def validate_url_host(value: str) -> None:
    """``validate_host`` for the host of an http(s) URL."""
    try:
        host = urlsplit(value).hostname
    except ValueError:
        return  # not a URL: the URL validator says so
    if host:
        try:
            host = to_ascii(host)  # the name the probe will resolve (IDNA 2008, as browsers)
        except ValueError:
            return  # not a name that can be probed: the probe's own check says so
        validate_host(host)
