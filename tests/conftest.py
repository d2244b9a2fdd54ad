"""The tests' fixtures and hooks, by subject, in tests/plugins/ (registered below); what test
modules import is in tests/helpers.py."""

from __future__ import annotations

import gc

from hypothesis import HealthCheck, settings

# Property tests judge what they find, not how fast the machine is: on two cores shared with a
# Galera cluster and a browser, drawing an input can take a second (a too_slow health check failed
# test_parse_wsrep.py's mutations so), and one example can outlast hypothesis's 200 ms deadline.
settings.register_profile("vigil", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("vigil")

# A full garbage collection walks every object a test process holds, botocore's and moto's models
# included (about 0.3 s each); by default one runs after every ten younger ones whenever the heap
# grew by a quarter, 15-17 times a worker of make check: 10 s of its 100 s of CPU. After every
# hundred, 4-5 times (2-3 s); cycles are still collected, by the younger generations first.
gc.set_threshold(700, 10, 100)

pytest_plugins = [
    "tests.plugins.marks",
    "tests.plugins.database",
    "tests.plugins.aws",
    "tests.plugins.vigil",
    "tests.plugins.services",
    "tests.plugins.browser",
]
