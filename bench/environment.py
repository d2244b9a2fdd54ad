"""What every benchmark shares: its command line's ``--tiny`` (the run of seconds that
``make test`` makes of each, tests/test_bench.py), and what it sets before ``django.setup()``."""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import tempfile
from pathlib import Path


def django_environment(database_url: str, name: str, log_level: str = "WARNING") -> None:
    """Set the environment of benchmark ``name`` (``bench/<name>.py``) for Django; without a
    database URL, a new SQLite file, removed when the process ends."""
    if not database_url:
        work = Path(tempfile.mkdtemp(prefix=f"vigil-bench-{name}-"))
        atexit.register(shutil.rmtree, work, ignore_errors=True)
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


def parse_args(
    parser: argparse.ArgumentParser, tiny: dict[str, object], argv: list[str] | None = None
) -> argparse.Namespace:
    """The command line, with ``--tiny``: ``tiny``'s values replace the defaults (an option
    given on the command line still wins). The full-size run is the one without it."""
    options = [
        f"--{name.replace('_', '-')}" + ("" if value is True else f" {value!s}" if value else " ''")
        for name, value in tiny.items()
    ]
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="the smallest sizes, a run of seconds (what make test runs): "
        + (" ".join(options) or "the full run, which takes seconds already"),
    )
    if parser.parse_known_args(argv)[0].tiny:
        parser.set_defaults(**tiny)
    return parser.parse_args(argv)
