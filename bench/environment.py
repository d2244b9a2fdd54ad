"""What a benchmark sets before ``django.setup()``: the base settings, its database (a new
SQLite file when no URL is given), no demo, no broker, no debug, quiet logs."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def django_environment(database_url: str, name: str, log_level: str = "WARNING") -> None:
    """Set the environment of benchmark ``name`` (``bench/<name>.py``) for Django."""
    if not database_url:
        work = Path(tempfile.mkdtemp(prefix=f"vigil-bench-{name}-"))
        database_url = f"sqlite:///{work / 'bench.sqlite3'}"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ.update(
        {
            "DEBUG": "false",
            "VIGIL_DEMO": "false",
            "LOG_LEVEL": log_level,
            "CELERY_BROKER_URL": "memory://",
        }
    )
    os.environ.setdefault("SECRET_KEY", f"bench-{name}-not-secret")
