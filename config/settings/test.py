"""Test settings: the local defaults, with fast hashing, locmem email and eager nothing.

``DATABASE_URL`` selects PostgreSQL (CI sets it); otherwise the tests run on SQLite.
"""

from __future__ import annotations

import os

from .base import *  # noqa: F403
from .base import DATABASES

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
CELERY_BROKER_URL = "memory://"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # As base.py's, without WAL: a writer waits for the other rather than failing "database is
    # locked" (tests/accounts/test_roles.py's parallel key requests)
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
# Tests point the AWS client factory at a moto server they start (tests/plugins/aws.py).
AWS_ENDPOINT_URL = None
AWS_MAX_ATTEMPTS = 2
VIGIL_DEMO = "false"
VIGIL_OUTBOUND_ALLOW_LOOPBACK = True  # every test server listens on loopback
VIGIL_PAGE_CACHE_SECONDS = 0  # pages show what a test just wrote; the cache is tested alone
VIGIL_METRICS_CACHE_SECONDS = 0  # likewise /metrics
VIGIL_EFS_COMPARISON_CACHE_SECONDS = 0  # and the file system page's mode comparison
VIGIL_API_LIST_CACHE_SECONDS = 0  # and the API's file system list
VIGIL_API_KEY_CACHE_SECONDS = 0  # and API keys with their owner's role
STATIC_ROOT = None  # tests serve static files from the finders, nothing is collected
# Every test client builds the middleware again, and WhiteNoise would walk every static file of
# the finders each time (about 12 ms, 0.4 s the first: some 6 s of make check's CPU); with
# autorefresh it looks a file up when one is asked for, from the same finders.
WHITENOISE_AUTOREFRESH = True
# A minimal concern app, so the concern contract is tested without depending on a real one.
install(globals(), "tests.concern_app")  # noqa: F405  (the tests' concern, as a real one)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory: the fault tests start real Celery workers that share the test database.
    # One per test run, so that two runs on one machine do not share it.
    _name = f"test-db-{os.getpid()}.sqlite3"
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / _name)}  # noqa: F405
