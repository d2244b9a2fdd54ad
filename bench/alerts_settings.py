"""Settings for bench/alerts.py: the local defaults plus the tests' minimal concern (gadgets)."""

from __future__ import annotations

from config.settings.base import *  # noqa: F403
from config.settings.base import install

install(globals(), "tests.concern_app")
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
