"""Who may read ``/metrics``: an API key, or a client address in ``VIGIL_METRICS_ALLOW``."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def networks(cidrs: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    """The allow-list as networks (``10.0.0.0/8``, or one address such as ``127.0.0.1``)."""
    return tuple(ipaddress.ip_network(cidr.strip(), strict=False) for cidr in cidrs)


def address_allowed(address: str, allowed: Iterable[IPNetwork]) -> bool:
    """Whether ``address`` (REMOTE_ADDR) lies in one of ``allowed``; False when malformed.

    An IPv4 client seen on a dual-stack socket (``::ffff:10.1.2.3``) is compared as IPv4.
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == net.version and ip in net for net in allowed)
