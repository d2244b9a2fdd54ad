"""EFS (apps/efs): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.efs import documented  # pure: no Django (this module is read with the settings)
from apps.lib.appconf import Setting, checked_by, price, rate


def _figures(name: str, table_name: str):
    """A check of ``name``: figures over ``documented.<table_name>``, checked now."""

    def check(value: dict) -> dict:
        documented.merged(getattr(documented, table_name), value, name)
        return value

    check.kind = 'JSON: {"key": number}'  # type: ignore[attr-defined]
    return check


PRICES = Setting(
    "VIGIL_EFS_PRICES",
    "json",
    {},
    checked_by("apps.efs.costs.price_table", "JSON: prices per region"),
    help="EFS prices per region over the built-in us-east-1 table (apps/efs/costs.py), e.g. "
    '{"eu-west-1": {"standard": 0.33, "ia": 0.0175, "elastic_read": 0.033, ...}}; '
    ".env.example has every key.",
)

SETTINGS = (
    Setting(
        "VIGIL_EFS_INTERVAL_MINUTES",
        "int",
        5,
        help="How often each account-region's EFS metrics are collected.",
    ),
    Setting(
        "VIGIL_EFS_DISCOVERY_MINUTES",
        "int",
        60,
        help="How often each account-region's file systems are listed.",
    ),
    Setting(
        "VIGIL_EFS_SETTLE_MINUTES",
        "int",
        3,
        help="Collect up to this many minutes ago: CloudWatch values converge for a few minutes.",
    ),
    Setting(
        "VIGIL_EFS_BACKFILL_HOURS",
        "int",
        24,
        help="After an outage, fetch at most this far back (older gaps stay gaps).",
    ),
    Setting(
        "VIGIL_EFS_LATE_DATA_MINUTES",
        "int",
        60,
        help="Each cycle asks CloudWatch once more for the last this-many minutes, in the same "
        "calls, and fills the minutes that were empty when collected (data delivered late). "
        "0: never.",
    ),
    Setting(
        "VIGIL_EFS_FORECAST_HOURS",
        "float",
        3.0,
        help="Burst credits' drain rate (and so the time to exhaustion) is fitted over this many "
        "hours.",
    ),
    Setting(
        "VIGIL_EFS_STALE_MINUTES",
        "int",
        15,
        help='A file system with no data for this long is "unknown".',
    ),
    Setting(
        "VIGIL_EFS_MINUTE_RETENTION_DAYS",
        "int",
        7,
        help="Per-minute rows are kept this long, then rolled up into hours.",
    ),
    Setting("VIGIL_EFS_HOUR_RETENTION_DAYS", "int", 400, help="Hour rows are kept this long."),
    Setting(
        "VIGIL_EFS_COMPARISON_CACHE_SECONDS",
        "int",
        3600,
        help="The file system page's mode comparison reads 30 days of usage: kept this long per "
        "file system.",
    ),
    PRICES,
    Setting(
        "VIGIL_EFS_LIMITS",
        "json",
        {},
        _figures("VIGIL_EFS_LIMITS", "LIMITS"),
        help="AWS's documented limits (apps/efs/documented.py, each with its source and the day it "
        'was read) overridden, e.g. {"regional.elastic.read_mibps@eu-north-1": 61440}: a key of '
        "the table (a Region's own value as key@region), a number in its unit.",
    ),
    Setting(
        "VIGIL_EFS_METERING",
        "json",
        {},
        _figures("VIGIL_EFS_METERING", "METERING"),
        help='AWS\'s documented metering overridden, e.g. {"data_minimum_bytes": 32768}.',
    ),
    Setting(
        "VIGIL_EFS_REPLICATION_CRITICAL_MINUTES",
        "int",
        60,
        help="A replica whose last sync is this many minutes old is critical (over AWS's "
        'documented 15-minute RPO, "replication.rpo_minutes" in the limits, it is a warning).',
    ),
    Setting(
        "VIGIL_EFS_PRICE_PER_MIBPS_MONTH",
        default="",
        check=price(10_000),
        help="Dollars per MiB/s of provisioned throughput per month, in every region; empty: the "
        "table's.",
    ),
    Setting(
        "VIGIL_EFS_CLIENT_STALE_MINUTES",
        "int",
        5,
        help="NFS clients (agents/vigil-nfs-push): a client that has not pushed for this many "
        "minutes is named as stale on its file systems' pages.",
    ),
    Setting(
        "VIGIL_EFS_CLIENT_RETENTION_DAYS",
        "int",
        2,
        help="What NFS clients counted between pushes is kept this long.",
    ),
    Setting(
        "VIGIL_EFS_CLIENT_HOUR_RETENTION_DAYS",
        "int",
        31,
        help="...and summed by hour per client and file system (what the page reads) this long.",
    ),
    Setting(
        "VIGIL_EFS_CLIENT_LOOKUP_WARN_SECONDS",
        "float",
        1.0,
        help="A reverse or forward lookup of an NFS server slower than this (seconds) warns: statd "
        "and lockd resolve their peers, and locking hangs while reads and writes work.",
    ),
    Setting(
        "VIGIL_EFS_CLIENT_PUSH_RATE",
        default="6000/min",
        check=rate,
        help="Pushes a fleet's client key may make, all its clients together (they may share one "
        "address behind a NAT gateway, so the API's per-address budget does not apply).",
    ),
)
