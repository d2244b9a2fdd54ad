"""Roles from an identity provider's or a directory's groups, and the lockout's address: pure.

A person who signs in through OpenID Connect or LDAP gets the highest role one of their groups
maps to (``VIGIL_SIGNIN_ADMIN_GROUPS`` ...), read again at every sign-in; with none of them,
``VIGIL_SIGNIN_UNMAPPED`` says whether they are refused or a viewer. Group names are compared
without regard to case; an LDAP group matches by its name (``cn``) or its whole DN.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

ADMIN = "admin"
OPERATOR = "operator"
VIEWER = "viewer"
#: Highest first: the first role any of a person's groups maps to is theirs.
RANKED_ROLES = (ADMIN, OPERATOR, VIEWER)
REFUSE = "refuse"
UNMAPPED_CHOICES = (REFUSE, VIEWER)
#: The most group names read from one sign-in (a claim is outside text).
MAX_GROUPS = 1000
MAX_GROUP_LENGTH = 512


@dataclass(frozen=True)
class GroupMapping:
    """Which groups give which role, and what a person with none of them gets."""

    admin: frozenset[str] = frozenset()
    operator: frozenset[str] = frozenset()
    viewer: frozenset[str] = frozenset()
    unmapped: str = REFUSE  # "refuse" or "viewer"

    @classmethod
    def of(
        cls,
        admin: Iterable[str] = (),
        operator: Iterable[str] = (),
        viewer: Iterable[str] = (),
        unmapped: str = REFUSE,
    ) -> GroupMapping:
        def names(values: Iterable[str]) -> frozenset[str]:
            return frozenset(v.strip().casefold() for v in values if v.strip())

        if unmapped not in UNMAPPED_CHOICES:
            raise ValueError(f"{unmapped!r}: expected refuse or viewer")
        return cls(names(admin), names(operator), names(viewer), unmapped)

    @property
    def empty(self) -> bool:
        return not (self.admin or self.operator or self.viewer)


@dataclass(frozen=True)
class RoleDecision:
    role: str | None  # None: refused
    group: str | None  # the group that gave it (None: the unmapped default, or refused)
    groups: tuple[str, ...]  # what was read, bounded, for the audit trail and the refusal page


def group_names(claim: object) -> tuple[str, ...]:
    """A groups claim as names: a list of strings, or one string (some providers send one
    group as a string); anything else is no groups. Bounded in count and length."""
    if isinstance(claim, str):
        claim = [claim]
    if not isinstance(claim, list | tuple):
        return ()
    found = [g.strip() for g in claim[:MAX_GROUPS] if isinstance(g, str)]
    return tuple(g[:MAX_GROUP_LENGTH] for g in found if g)


def decide(groups: Iterable[str], mapping: GroupMapping) -> RoleDecision:
    """The role of a person in ``groups`` (names, or LDAP DNs with their names beside them)."""
    read = tuple(groups)
    folded = {g.casefold(): g for g in read}
    for role in RANKED_ROLES:
        for name in sorted(getattr(mapping, role)):
            if name in folded:
                return RoleDecision(role, folded[name], read)
    if mapping.unmapped == VIEWER:
        return RoleDecision(VIEWER, None, read)
    return RoleDecision(None, None, read)


def lockout_address(address: str) -> str:
    """The address failed logins are counted under: an IPv4 address as it is, an IPv6 one as
    the first address of its /64 (one subscriber's LAN: its hosts pick any of 2**64 addresses),
    an IPv4-mapped IPv6 address as its IPv4 address. Anything else is returned unchanged."""
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False).network_address)
    return str(parsed)
