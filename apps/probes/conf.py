"""HTTP keep-alive probes (apps/probes): its ``VIGIL_*`` settings, read while the settings load.

No Django here: ``config/settings/base.py`` imports this module for every installed app that
has one, adds ``VARIABLES`` to the known variables (a typo stops the start) and the values of
``read(setting)`` to the settings. Each variable is documented in ``.env.example``.
"""

from __future__ import annotations

from collections.abc import Callable

VARIABLES = (
    "VIGIL_PROBES_CERT_WARN_DAYS",
    "VIGIL_PROBES_CONCURRENCY",
    "VIGIL_PROBES_DRIFT_TOLERANCE_S",
    "VIGIL_PROBES_RESULT_RETENTION_DAYS",
)


def read(setting: Callable[..., object]) -> dict[str, object]:
    """The values, from the environment through ``setting(name, cast, default)``."""
    # Probes run concurrently in one asyncio loop per Celery task: at most this many per task.
    VIGIL_PROBES_CONCURRENCY = setting("VIGIL_PROBES_CONCURRENCY", "int", default=500)
    # Warn when a target's TLS certificate expires within this many days.
    VIGIL_PROBES_CERT_WARN_DAYS = setting("VIGIL_PROBES_CERT_WARN_DAYS", "int", default=14)
    # Warn when the idle timeout changed by more than this from the previous measurement.
    VIGIL_PROBES_DRIFT_TOLERANCE_S = setting("VIGIL_PROBES_DRIFT_TOLERANCE_S", "float", default=1.0)
    # Results are kept this long, then expired by the beat (apps/lib/retention.py).
    VIGIL_PROBES_RESULT_RETENTION_DAYS = setting(
        "VIGIL_PROBES_RESULT_RETENTION_DAYS", "int", default=30
    )
    values = locals()
    return {name: values[name] for name in VARIABLES}
