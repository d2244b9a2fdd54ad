"""HTTP keep-alive probes (apps/probes): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting

SETTINGS = (
    Setting(
        "VIGIL_PROBES_CONCURRENCY",
        "int",
        500,
        help="Probes run concurrently in one asyncio loop per Celery task: at most this many per "
        "task.",
    ),
    Setting(
        "VIGIL_PROBES_CERT_WARN_DAYS",
        "int",
        14,
        help="Warn when a target's TLS certificate expires within this many days.",
    ),
    Setting(
        "VIGIL_PROBES_DRIFT_TOLERANCE_S",
        "float",
        1.0,
        help="Warn when the idle timeout changed by more than this many seconds from the "
        "previous measurement.",
    ),
    Setting(
        "VIGIL_PROBES_RESULT_RETENTION_DAYS",
        "int",
        30,
        help="Results are kept this long, then expired by the beat.",
    ),
)
