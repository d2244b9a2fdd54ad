"""A host's failure-domain rules: member device name patterns -> domain names.

Pure module: no Django, no I/O. A host's rules are a JSON object such as
``{"sd[b-f]": "storage-a", "sd[g-k]": "storage-b", "sd[l-p]": "storage-c"}``. Patterns are
shell-style (``fnmatch``, case-sensitive): ``*`` any text, ``?`` one character, ``[b-f]`` one
of a set. A pattern is matched against the member's name as /proc/mdstat prints it (``sdb``,
``sdc1``, ``dm-3``, ``nvme0n1p2``); when no pattern matches a partition, its whole disk's name
is tried (``sdc1`` -> ``sdc``), so ``sd[b-f]`` also covers ``sdb1``.

When several rules match, a rule naming the device exactly wins, then the longest pattern,
then the alphabetically first: the outcome never depends on the order of the keys, which
PostgreSQL's ``jsonb`` does not keep.
Devices that no pattern matches are each their own failure domain (``topology.domain_of``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from apps.raid.topology import disk_of

__all__ = ["MAX_RULES", "domain_map", "validate_rules"]

MAX_RULES = 500
_MAX_TEXT = 200


def validate_rules(value: object) -> dict[str, str]:
    """The rules as a plain dict; ``ValueError`` with a readable message if they are not."""
    if value in (None, ""):
        return {}
    if not isinstance(value, Mapping):
        raise ValueError('Give a JSON object of pattern -> domain, e.g. {"sd[b-f]": "storage-a"}')
    if len(value) > MAX_RULES:
        raise ValueError(f"At most {MAX_RULES} rules")
    rules: dict[str, str] = {}
    for pattern, domain in value.items():
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError("Every pattern must be a non-empty text")
        if not isinstance(domain, str) or not domain.strip():
            raise ValueError(f"The domain for {pattern!r} must be a non-empty text")
        if len(pattern) > _MAX_TEXT or len(domain) > _MAX_TEXT:
            raise ValueError(f"Patterns and domains are at most {_MAX_TEXT} characters")
        rules[pattern.strip()] = domain.strip()
    return rules


def _ordered(rules: Mapping[str, str]) -> list[tuple[str, str]]:
    """Exact device names first, then the longest patterns, then alphabetical order."""
    return sorted(
        rules.items(), key=lambda rule: (any(c in rule[0] for c in "*?["), -len(rule[0]), rule[0])
    )


def domain_map(devices: Iterable[str], rules: Mapping[str, str]) -> dict[str, str]:
    """``{device: domain}`` for the devices some rule matches; the others are left out."""
    ordered = _ordered(rules)
    found: dict[str, str] = {}
    for device in devices:
        for name in (device, disk_of(device)):
            if name is None:
                continue
            domain = next((d for pattern, d in ordered if fnmatchcase(name, pattern)), None)
            if domain is not None:
                found[device] = domain
                break
    return found
