"""apps/lib/formats.py: one way to write a size, a speed or a duration (issue 20)."""

from __future__ import annotations

import pytest

from apps.lib import formats


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0 B"),
        (512, "512 B"),
        (1536, "1.5 KiB"),
        (1024**2, "1.0 MiB"),
        (250 * 1024**3, "250 GiB"),
    ],
)
def test_bytes_in_binary_units(value, text):
    assert formats.iec_bytes(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(512, "512 KiB"), (2048, "2.0 MiB"), (1073610752, "1023.9 GiB"), (1024**3, "1.0 TiB")],
)
def test_sizes_counted_in_kib(value, text):
    assert formats.kib(value) == text


@pytest.mark.parametrize(("value", "text"), [(900, "900 KiB/s"), (148213, "144.7 MiB/s")])
def test_speeds_counted_in_kib(value, text):
    assert formats.kib_per_s(value) == text


@pytest.mark.parametrize(("value", "text"), [(4.94, "4.9 MiB/s"), (250.4, "250 MiB/s")])
def test_throughput_in_mibps(value, text):
    assert formats.mibps(value) == text


@pytest.mark.parametrize(("value", "text"), [(3, "3"), (1234.5, "1,234.5"), (0.125, "0.12")])
def test_numbers_drop_trailing_zeros(value, text):
    assert formats.number(value) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(30, "~1 min"), (40 * 60, "~40 min"), (6 * 3600, "~6 h"), (3 * 86400, "~3 d")],
)
def test_it_says_durations_roughly(seconds, text):
    assert formats.rough_duration(seconds) == text


@pytest.mark.parametrize(
    ("minutes", "decimals", "text"),
    [(12.34, 1, "12.3 min"), (75.5, 0, "1 h 16 min"), (50 * 60, 0, "2 d 2 h")],
)
def test_durations_in_minutes(minutes, decimals, text):
    assert formats.duration(minutes, decimals) == text
