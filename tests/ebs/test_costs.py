"""Monthly costs and the gp2 -> gp3 advice (apps/ebs/costs.py), pure."""

from __future__ import annotations

import pytest

from apps.ebs.costs import PRICES, gp3_advice, monthly_usd, price_table, prices_for
from apps.ebs.metrics import Usage

US = PRICES["us-east-1"]


def test_it_prices_each_type_as_provisioned():
    assert monthly_usd("gp2", 50, None, None, US) == pytest.approx(5.0)
    assert monthly_usd("gp3", 100, 3000, 125, US) == pytest.approx(8.0)
    assert monthly_usd("gp3", 100, 6000, 250, US) == pytest.approx(8.0 + 15.0 + 5.0)
    assert monthly_usd("io1", 100, 1000, None, US) == pytest.approx(12.5 + 65.0)
    assert monthly_usd("st1", 500, None, None, US) == pytest.approx(22.5)
    assert monthly_usd("magnetic?", 1, None, None, US) is None


def test_it_sizes_gp3_for_the_p95_and_says_whether_its_baseline_covers_the_peaks():
    quiet = gp3_advice(50, Usage(600, 400.0, 2900.0, 6.0, 40.0), US)
    assert (quiet.iops, quiet.mibps) == (3000, 125)
    assert quiet.saving_usd == pytest.approx(1.0) and quiet.baseline_covers_peaks
    assert "free baseline" in quiet.reason and "covers even its peaks" in quiet.reason

    busy = gp3_advice(500, Usage(600, 5200.2, 9000.0, 180.0, 300.0), US)
    assert (busy.iops, busy.mibps) == (5201, 180)
    assert busy.gp3_usd == pytest.approx(500 * 0.08 + 2201 * 0.005 + 55 * 0.04)
    assert not busy.baseline_covers_peaks and "go past gp3's baseline" in busy.reason


def test_it_keeps_gp3_within_its_limits():
    tiny = gp3_advice(8, Usage(10, 9000.0, 9000.0, 900.0, 900.0), US)
    assert tiny.iops == 4000  # 500 IOPS a GiB; 900 MiB/s fits 4,000 IOPS x 0.25 MiB/s
    assert tiny.mibps == 900


def test_it_takes_prices_of_other_regions_from_the_setting_and_says_when_it_falls_back():
    names = ("gp2", "gp3", "gp3_iops", "gp3_mibps", "io1", "io2", "io_iops", "st1", "sc1")
    table = price_table({"eu-west-1": dict.fromkeys((*names, "standard"), 0.1)})
    assert prices_for("eu-west-1", table)[1] == ""
    assert "us-east-1" in prices_for("ap-east-1", table)[1]
    assert price_table({"us-east-1": {"gp2": 0.12}})["us-east-1"].gp2 == 0.12
    with pytest.raises(ValueError, match="eu-west-2: missing gp3, "):
        price_table({"eu-west-2": {"gp2": 0.1}})
    with pytest.raises(ValueError, match="not an AWS region"):
        price_table({"Mars": {}})
    with pytest.raises(ValueError, match="number"):
        price_table({"us-east-1": {"gp2": "cheap"}})
