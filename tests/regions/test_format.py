from __future__ import annotations

import random

import pytest
from django.template.defaultfilters import floatformat
from django.template.loader import render_to_string

from apps.lib.status import Status
from apps.regions.templatetags.vigil_format import badge, number


def test_a_number_reads_as_djangos_floatformat_writes_it(settings):
    rng = random.Random(26)
    values = [0, 0.0, -0.0, -0.3, 0.5, 1.5, 2.5, -2.5, 0.125, 12.04, 34.0, 1e14 + 0.5, 99.995, 7]
    values += [rng.uniform(-1e6, 1e6) for _ in range(300)] + [rng.random() for _ in range(100)]
    values += [float("nan"), float("inf"), 1e20, True, "12.5"]  # left to floatformat itself
    for decimals in (0, 1, 2, 3, "-1", "-2", "0", "1", "2g"):
        for value in values:
            assert number(value, decimals) == floatformat(value, decimals), (value, decimals)
    settings.USE_THOUSAND_SEPARATOR = True
    assert number(1234567.5, 1) == floatformat(1234567.5, 1) == "1,234,567.5"


@pytest.mark.parametrize("status", [*Status, "ok", None, ""])
def test_a_badge_reads_as_the_status_badge_template_writes_it(status):
    included = render_to_string("status_badge.html", {"status": status})
    assert badge(status) == included.strip()


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/St_Johns", "Asia/Kolkata"])
def test_ago_writes_its_local_time_as_djangos_date_format_does(zone):
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from django.utils import timezone
    from django.utils.dateformat import format as date_format

    from apps.regions.templatetags.vigil_time import ago

    with timezone.override(ZoneInfo(zone)):
        for at in (
            datetime(2026, 1, 15, 9, 5, tzinfo=UTC),
            datetime(2026, 7, 1, 23, 59, tzinfo=UTC),
        ):
            local = date_format(timezone.localtime(at), "Y-m-d H:i T")
            assert f'title="{local} ({at:%Y-%m-%d %H:%M} UTC)"' in ago(at)
