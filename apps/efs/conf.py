"""EFS (apps/efs): its ``VIGIL_*`` settings, read while the settings load.

No Django here: ``config/settings/base.py`` imports this module for every installed app that
has one, adds ``VARIABLES`` to the known variables (a typo stops the start) and the values of
``read(setting)`` to the settings. Each variable is documented in ``.env.example``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured

VARIABLES = (
    "VIGIL_EFS_BACKFILL_HOURS",
    "VIGIL_EFS_COMPARISON_CACHE_SECONDS",
    "VIGIL_EFS_DISCOVERY_MINUTES",
    "VIGIL_EFS_FORECAST_HOURS",
    "VIGIL_EFS_HOUR_RETENTION_DAYS",
    "VIGIL_EFS_INTERVAL_MINUTES",
    "VIGIL_EFS_LATE_DATA_MINUTES",
    "VIGIL_EFS_MINUTE_RETENTION_DAYS",
    "VIGIL_EFS_PRICES",
    "VIGIL_EFS_PRICE_PER_MIBPS_MONTH",
    "VIGIL_EFS_SETTLE_MINUTES",
    "VIGIL_EFS_STALE_MINUTES",
)


def efs_prices(setting: Callable[..., object]) -> dict:
    """VIGIL_EFS_PRICES: a JSON object of per-region EFS prices over the built-in table
    (apps/efs/costs.py), checked now so that a typo stops the start."""
    from apps.efs.costs import price_table  # pure, no Django

    value = setting("VIGIL_EFS_PRICES", "json", default={})
    try:
        price_table(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"Invalid value for VIGIL_EFS_PRICES: {exc}") from exc
    return value


def read(setting: Callable[..., object]) -> dict[str, object]:
    """The values, from the environment through ``setting(name, cast, default)``."""
    # How often each account-region is collected, and how often its file systems are listed.
    VIGIL_EFS_INTERVAL_MINUTES = setting("VIGIL_EFS_INTERVAL_MINUTES", "int", default=5)
    VIGIL_EFS_DISCOVERY_MINUTES = setting("VIGIL_EFS_DISCOVERY_MINUTES", "int", default=60)
    # Collect up to this many minutes ago: CloudWatch values converge for a few minutes.
    VIGIL_EFS_SETTLE_MINUTES = setting("VIGIL_EFS_SETTLE_MINUTES", "int", default=3)
    # After an outage, fetch at most this far back (older gaps stay gaps).
    VIGIL_EFS_BACKFILL_HOURS = setting("VIGIL_EFS_BACKFILL_HOURS", "int", default=24)
    # Each cycle asks CloudWatch once more for the last this-many minutes, in the same calls, and
    # fills the minutes that were empty when collected (data delivered late). 0: never.
    VIGIL_EFS_LATE_DATA_MINUTES = setting("VIGIL_EFS_LATE_DATA_MINUTES", "int", default=60)
    # Burst credits' drain rate (and so the time to exhaustion) is fitted over this many hours.
    VIGIL_EFS_FORECAST_HOURS = setting("VIGIL_EFS_FORECAST_HOURS", "float", default=3.0)
    # A file system with no data for this long is "unknown".
    VIGIL_EFS_STALE_MINUTES = setting("VIGIL_EFS_STALE_MINUTES", "int", default=15)
    # Per-minute rows are kept this long, then rolled up into hours; hours are kept this long.
    VIGIL_EFS_MINUTE_RETENTION_DAYS = setting("VIGIL_EFS_MINUTE_RETENTION_DAYS", "int", default=7)
    VIGIL_EFS_HOUR_RETENTION_DAYS = setting("VIGIL_EFS_HOUR_RETENTION_DAYS", "int", default=400)
    # The file system page's mode comparison reads 30 days of usage: kept this long per file system.
    VIGIL_EFS_COMPARISON_CACHE_SECONDS = setting(
        "VIGIL_EFS_COMPARISON_CACHE_SECONDS", "int", default=3600
    )

    # EFS prices per region over the built-in us-east-1 table, e.g.
    # {"eu-west-1": {"standard": 0.33, "ia": 0.0175, "elastic_read": 0.033, ...}}.
    VIGIL_EFS_PRICES = efs_prices(setting)
    # Dollars per MiB/s of provisioned throughput per month, in every region; empty: the table's.
    price = setting("VIGIL_EFS_PRICE_PER_MIBPS_MONTH", default="").strip()
    try:
        VIGIL_EFS_PRICE_PER_MIBPS_MONTH = float(price) if price else None
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"Invalid value for VIGIL_EFS_PRICE_PER_MIBPS_MONTH: {exc}"
        ) from exc
    if (
        VIGIL_EFS_PRICE_PER_MIBPS_MONTH is not None
        and not 0 <= VIGIL_EFS_PRICE_PER_MIBPS_MONTH < 10_000
    ):
        raise ImproperlyConfigured("Invalid value for VIGIL_EFS_PRICE_PER_MIBPS_MONTH: 0 to 10,000")
    values = locals()
    return {name: values[name] for name in VARIABLES}
