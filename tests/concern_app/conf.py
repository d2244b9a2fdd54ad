"""The gadgets' ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting

SETTINGS = (
    Setting(
        "VIGIL_GADGETS_CRITICAL_PERCENT",
        "float",
        90.0,
        help="A gadget reading at least this is critical (70 % of it: a warning).",
    ),
)
