"""The tests' fixtures and hooks, by subject, in tests/plugins/ (registered below); what test
modules import is in tests/helpers.py."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Property tests judge what they find, not how fast the machine is: on two cores shared with a
# Galera cluster and a browser, drawing an input can take a second (a too_slow health check failed
# test_parse_wsrep.py's mutations so), and one example can outlast hypothesis's 200 ms deadline.
settings.register_profile("vigil", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("vigil")

pytest_plugins = [
    "tests.plugins.marks",
    "tests.plugins.database",
    "tests.plugins.aws",
    "tests.plugins.vigil",
    "tests.plugins.services",
    "tests.plugins.browser",
]
