"""The gadgets' ``VIGIL_*`` settings (no Django: read while the settings load)."""

from __future__ import annotations

from collections.abc import Callable

VARIABLES = ("VIGIL_GADGETS_CRITICAL_PERCENT",)


def read(setting: Callable[..., object]) -> dict[str, object]:
    return {
        # A gadget reading at least this is critical (70 % of it: a warning).
        "VIGIL_GADGETS_CRITICAL_PERCENT": setting(
            "VIGIL_GADGETS_CRITICAL_PERCENT", "float", default=90.0
        ),
    }
