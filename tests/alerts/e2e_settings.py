"""Settings for the end-to-end alert tests' worker and beat: the local defaults, with beat's
two ticks (dispatch due work, sweep the outbox) every second instead of every minute and half."""

from __future__ import annotations

from config.settings.base import *  # noqa: F403
from config.settings.base import CELERY_BEAT_SCHEDULE

CELERY_BEAT_SCHEDULE = {
    **CELERY_BEAT_SCHEDULE,
    "dispatch-due-work": {**CELERY_BEAT_SCHEDULE["dispatch-due-work"], "schedule": 1.0},
    "alerts-sweep": {**CELERY_BEAT_SCHEDULE["alerts-sweep"], "schedule": 1.0},
}
