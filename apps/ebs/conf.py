"""EBS (apps/ebs): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting


def _prices(value: dict) -> dict:
    """Per-region prices over the built-in table (apps/ebs/costs.py), checked now."""
    from apps.ebs.costs import price_table  # pure, no Django; read while the settings load

    price_table(value)
    return value


def _positive(value: int) -> int:
    if value < 1:
        raise ValueError("at least 1")
    return value


SETTINGS = (
    # How often each account-region's volume metrics are collected, and its volumes listed.
    Setting("VIGIL_EBS_INTERVAL_MINUTES", "int", 5, _positive),
    Setting("VIGIL_EBS_DISCOVERY_MINUTES", "int", 60, _positive),
    # Collect up to this many minutes ago: CloudWatch values converge for a few minutes.
    Setting("VIGIL_EBS_SETTLE_MINUTES", "int", 3),
    # After an outage, fetch at most this far back (older gaps stay gaps).
    Setting("VIGIL_EBS_BACKFILL_HOURS", "int", 24, _positive),
    # Burst balances' drain rate (and so the time to exhaustion) is fitted over this many
    # hours: a small gp2 volume empties its bucket in about 40 minutes, so less than EFS's 3.
    Setting("VIGIL_EBS_FORECAST_HOURS", "float", 1.0),
    # An attached volume with no data for this long is "unknown".
    Setting("VIGIL_EBS_STALE_MINUTES", "int", 20, _positive),
    # Per-minute rows are kept this long; the gp3 advice reads at most the last
    # VIGIL_EBS_ADVICE_DAYS of them.
    Setting("VIGIL_EBS_MINUTE_RETENTION_DAYS", "int", 14, _positive),
    Setting("VIGIL_EBS_ADVICE_DAYS", "int", 7, _positive),
    # EBS prices per region over the built-in us-east-1 table (apps/ebs/costs.py), e.g.
    # {"eu-west-1": {"gp2": 0.11, "gp3": 0.088, ...}}.
    Setting("VIGIL_EBS_PRICES", "json", {}, _prices),
)
