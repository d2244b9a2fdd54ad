"""The test database on SQLite starts as a copy of a migrated template instead of being migrated
again in every worker of every run (the migrations cost about 15 s of CPU per worker).

The template, ``var/test-template-<key>.sqlite3``, is written by the first run after a change to
any app's migrations, Django's version or the installed apps (the key is a hash of them), and is
copied, never opened, by the runs after it; Django's ``migrate`` still runs on the copy (a no-op,
with the ``post_migrate`` receivers). ``--create-db`` migrates afresh; PostgreSQL (``DATABASE_URL``,
as CI runs) is set up as pytest-django does, migrations and all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT

TEMPLATES = ROOT / "var"


def schema_key() -> str:
    """A hash of what the migrated schema depends on: Django's version and, for each installed
    app, its label and its migration files."""
    import django
    from django.apps import apps

    digest = hashlib.sha256(django.get_version().encode())
    for config in sorted(apps.get_app_configs(), key=lambda config: config.label):
        digest.update(config.label.encode())
        for path in sorted((Path(config.path) / "migrations").glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _sqlite_test_file() -> Path | None:
    """The test database's file when it is SQLite on disk (None for another engine)."""
    from django.db import connection

    if connection.vendor != "sqlite":
        return None
    name = connection.settings_dict.get("TEST", {}).get("NAME")
    return Path(name) if name and name != ":memory:" else None


@pytest.fixture(scope="session")
def django_db_keepdb(
    django_db_keepdb: bool, django_db_createdb: bool, django_db_modify_db_settings: None
) -> Iterator[bool]:
    """pytest-django's (``--reuse-db``), or True once the template is copied into place: Django
    then keeps the file and only runs ``migrate`` on it, and the file goes at the end here."""
    TEMPLATES.mkdir(exist_ok=True)  # the test database's folder too (config/settings/test.py)
    target = _sqlite_test_file()
    template = TEMPLATES / f"test-template-{schema_key()}.sqlite3" if target else None
    if django_db_keepdb or django_db_createdb or template is None or not template.exists():
        yield django_db_keepdb
        return
    shutil.copyfile(template, target)
    yield True
    from django.db import connections

    connections.close_all()
    target.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def django_db_setup(
    django_db_setup: None, django_db_keepdb: bool, django_db_blocker, django_db_createdb: bool
) -> None:
    """pytest-django's, then, on SQLite without a template yet, the migrated database copied
    to the template (``VACUUM INTO`` a file of its own, renamed into place, so that a worker
    copying it meanwhile never sees half of it)."""
    target = _sqlite_test_file()
    if target is None or django_db_createdb:
        return
    key = schema_key()
    template = TEMPLATES / f"test-template-{key}.sqlite3"
    if template.exists():
        return
    from django.db import connection

    partial = template.with_suffix(f".{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("VACUUM INTO %s", [str(partial)])
    os.replace(partial, template)
    for old in TEMPLATES.glob("test-template-*.sqlite3"):
        if old != template:
            old.unlink(missing_ok=True)
