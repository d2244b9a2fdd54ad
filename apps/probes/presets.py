"""Public sites the seed measured by hand, offered as one-click targets (added disabled).

The seed timed ``openssl s_client -ign_eof`` after one keep-alive request; ``seen`` is what it
reported, and the expected range is set around it, so a change at the site shows as a warning.
Pure data: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

PRESET_INTERVAL_S = 3600  # be polite to other people's servers: once an hour


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    url: str
    seen: str  # what the seed measured, in words
    expected_min_s: float
    expected_max_s: float
    cap_s: float = 1200.0


PRESETS = (
    Preset("slashdot", "Slashdot", "https://slashdot.org/", "0 s (closes at once)", 0, 1),
    Preset("lwn", "LWN.net", "https://lwn.net/", "5-10 s", 5, 10),
    Preset("yahoo", "Yahoo", "https://www.yahoo.com/", "5-10 s", 5, 10),
    Preset("nginx", "nginx.org", "https://nginx.org/", "1 min", 55, 65),
    Preset("wikipedia", "Wikipedia", "https://www.wikipedia.org/", "1 min", 55, 65),
    Preset("google", "Google", "https://www.google.com/", "4 min", 230, 250),
    Preset("twitter", "Twitter", "https://twitter.com/", "15 min", 880, 920),
)


def preset(key: str) -> Preset | None:
    return next((p for p in PRESETS if p.key == key), None)
