"""EBS (apps/ebs): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting, at_least, checked_by

SETTINGS = (
    Setting(
        "VIGIL_EBS_INTERVAL_MINUTES",
        "int",
        5,
        at_least(1),
        help="How often each account-region's volume metrics are collected.",
    ),
    Setting(
        "VIGIL_EBS_DISCOVERY_MINUTES",
        "int",
        60,
        at_least(1),
        help="How often each account-region's volumes and their instances are listed.",
    ),
    Setting(
        "VIGIL_EBS_SETTLE_MINUTES",
        "int",
        3,
        help="Collect up to this many minutes ago: CloudWatch values converge for a few minutes.",
    ),
    Setting(
        "VIGIL_EBS_BACKFILL_HOURS",
        "int",
        24,
        at_least(1),
        help="After an outage, fetch at most this far back (older gaps stay gaps).",
    ),
    Setting(
        "VIGIL_EBS_FORECAST_HOURS",
        "float",
        1.0,
        help="Burst balances' drain rate (and so the time to exhaustion) is fitted over this many "
        "hours: a small gp2 volume empties its bucket in about 40 minutes, so less than EFS's 3.",
    ),
    Setting(
        "VIGIL_EBS_STALE_MINUTES",
        "int",
        20,
        at_least(1),
        help='An attached volume with no data for this long is "unknown".',
    ),
    Setting(
        "VIGIL_EBS_MINUTE_RETENTION_DAYS",
        "int",
        14,
        at_least(1),
        help="Per-minute rows of volumes and instances are kept this long.",
    ),
    Setting(
        "VIGIL_EBS_ADVICE_DAYS",
        "int",
        7,
        at_least(1),
        help="The gp2 to gp3 advice sizes gp3 for the p95 of this many days of minutes.",
    ),
    Setting(
        "VIGIL_EBS_PRICES",
        "json",
        {},
        checked_by("apps.ebs.costs.price_table", "JSON: prices per region"),
        help="EBS prices per region over the built-in us-east-1 table (apps/ebs/costs.py), e.g. "
        '{"eu-west-1": {"gp2": 0.11, "gp3": 0.088, ...}}; .env.example has every key.',
    ),
)
