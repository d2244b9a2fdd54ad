"""The cost model (apps/efs/costs.py), pinned against the published us-east-1 prices:
Standard $0.30/GB-month, Elastic $0.03/GB read and $0.06/GB written, provisioned $6.00 per
MiB/s-month (IA $0.016 with Elastic and $0.025 with the legacy modes, Archive $0.008)."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ImproperlyConfigured

from apps.efs.costs import (
    GB_BYTES,
    MONTH_HOURS,
    PRICES,
    HourTotals,
    ModeCost,
    Workload,
    billed_bytes,
    compare,
    compare_modes,
    credit_drain,
    price_table,
    prices_for,
    workload_from,
)
from apps.efs.documented import credit_cap_bytes
from apps.efs.metrics import GIB, KIB, MIB, TIB

BASELINE_100_GIB = 100 * 50 / 1024  # 4.8828125 MiB/s


def test_a_billed_gb_is_two_to_the_thirtieth_bytes_and_a_month_730_hours():
    assert GB_BYTES == 2**30 == GIB
    assert MONTH_HOURS == 730


def test_it_holds_the_published_us_east_1_prices():
    p = PRICES["us-east-1"]
    assert (p.standard, p.elastic_read, p.elastic_write, p.provisioned) == (0.30, 0.03, 0.06, 6.00)
    assert (p.ia, p.legacy_ia, p.archive) == (0.016, 0.025, 0.008)
    assert "aws.amazon.com/efs/pricing" in p.source


def test_it_ranks_the_modes_cheapest_first_with_whether_each_fits():
    got = compare_modes("us-east-1", 100, 900, 120, p95_mibps=45, peak_mibps=80, provision="p95")
    assert got == [
        ModeCost("bursting", 30.0, False),  # 100 GB x $0.30; the p95 is above its 4.9 MiB/s
        ModeCost("elastic", 64.2, True),  # 30 + 900 x 0.03 + 120 x 0.06
        ModeCost("provisioned", round(30 + (45 - BASELINE_100_GIB) * 6, 2), False),  # 270.70
    ]
    mode, usd, fits = got[1]
    assert (mode, usd, fits) == ("elastic", 64.2, True)


def test_provisioning_pays_only_above_the_baseline_and_fits_when_set_to_the_peak():
    got = compare_modes("us-east-1", 100, 900, 120, 45, 80)  # at the peak by default
    provisioned = next(m for m in got if m.mode == "provisioned")
    assert provisioned.monthly_usd == pytest.approx(30 + (80 - BASELINE_100_GIB) * 6, abs=0.005)
    assert provisioned.fits
    # 2 TiB of Standard earns 100 MiB/s, more than 64 MiB/s provisioned: nothing extra to pay.
    big = compare_modes("us-east-1", 2048, 0, 0, 60, 64, provision="peak")
    assert next(m for m in big if m.mode == "provisioned").monthly_usd == 2048 * 0.30


def test_it_keeps_a_quiet_file_system_in_bursting():
    work = Workload(
        standard_gib=100, read_gib=50, write_gib=10, p95_mibps=2, peak_mibps=60, mean_mibps=1.5
    )
    c = compare(work, "us-east-1", current_mode="bursting")
    assert c.best.mode == "bursting" and c.best.monthly_usd == 30.0
    assert c.saving_usd == 0
    assert c.reason.startswith("Bursting would cost $30/month: its 4.9 MiB/s baseline covers")


def test_it_says_what_elastic_and_the_p95_would_cost_in_one_sentence():
    work = Workload(
        standard_gib=22.7, read_gib=900, write_gib=120, p95_mibps=45, peak_mibps=80, mean_mibps=9
    )
    c = compare(
        work, "us-east-1", provision="p95", current_mode="provisioned", current_provisioned_mibps=64
    )
    assert c.best.mode == "elastic"
    assert c.best.monthly_usd == pytest.approx(22.7 * 0.3 + 27 + 7.2)
    assert c.reason.startswith("Elastic would cost $41/month for 900 GB read and 120 GB written")
    assert "provisioning the p95 (45 MiB/s) would cost $270/month" in c.reason
    assert "bursting ($6.81/month) would throttle: the 9.0 MiB/s mean is above" in c.reason
    assert c.current_usd == pytest.approx(22.7 * 0.3 + (64 - 22.7 * 50 / 1024) * 6)
    assert c.saving_usd == pytest.approx(c.current_usd - c.best.monthly_usd)


def test_a_steady_heavy_workload_is_cheaper_provisioned_than_elastic():
    # 60 MiB/s of writes all month: 60 x 3,600 x 730 / 1,024 = 154,000 GB written.
    written = 60 * 3600 * MONTH_HOURS / 1024
    got = compare_modes("us-east-1", 500, 0, written, 60, 62, provision="peak", mean_mibps=60)
    assert [m.mode for m in got][0] == "bursting" and not got[0].fits
    assert got[1] == ModeCost("provisioned", round(150 + (62 - 500 * 50 / 1024) * 6, 2), True)
    assert got[2].mode == "elastic" and got[2].monthly_usd == pytest.approx(
        150 + written * 0.06, abs=0.01
    )


def test_storage_classes_are_priced_per_mode():
    work = Workload(standard_gib=10, ia_gib=100, mean_mibps=0.1, p95_mibps=0.2, peak_mibps=1)
    rows = {r.mode: r for r in compare(work, "us-east-1").rows}
    # IA costs $0.016 with Elastic, $0.025 with the legacy modes.
    assert rows["elastic"].storage_usd == pytest.approx(10 * 0.30 + 100 * 0.016)
    assert rows["bursting"].storage_usd == pytest.approx(10 * 0.30 + 100 * 0.025)


def test_a_file_system_with_archive_data_is_offered_elastic_only():
    # AWS allows the Archive class only with Elastic throughput: the switch would be refused.
    work = Workload(
        standard_gib=10, ia_gib=100, archive_gib=1000, mean_mibps=0.1, p95_mibps=0.2, peak_mibps=1
    )
    c = compare(work, "us-east-1", current_mode="elastic")
    rows = {r.mode: r for r in c.rows}
    assert rows["elastic"].storage_usd == pytest.approx(10 * 0.30 + 100 * 0.016 + 1000 * 0.008)
    assert not rows["bursting"].available and not rows["provisioned"].available
    assert not rows["bursting"].fits and not rows["provisioned"].fits
    assert c.best.mode == "elastic" and c.saving_usd == 0
    assert "it holds 1,000 GB in Archive, which AWS allows only with Elastic" in c.reason


def test_elastic_is_not_offered_to_max_io_file_systems():
    c = compare(
        Workload(standard_gib=100, read_gib=1, p95_mibps=300, peak_mibps=400, mean_mibps=200),
        "us-east-1",
        performance_mode="maxIO",
    )
    elastic = next(r for r in c.rows if r.mode == "elastic")
    assert not elastic.available and not elastic.fits and c.rows[-1] is elastic
    assert "not available with Max I/O" in c.reason


def test_bursting_throttles_above_the_burst_rate_or_when_a_burst_outlasts_the_credits():
    peaky = Workload(standard_gib=100, p95_mibps=1, peak_mibps=150, mean_mibps=1)
    assert "150 MiB/s peak is above the 100 MiB/s burst rate" in compare(peaky, "us-east-1").reason
    long_burst = Workload(
        standard_gib=100, p95_mibps=4, peak_mibps=90, mean_mibps=4, drain_gib=2200
    )
    c = compare(long_burst, "us-east-1")
    assert not next(r for r in c.rows if r.mode == "bursting").fits
    assert "spent 2,200 GB of credits, more than the 2.1 TiB it can hold" in c.reason


def test_a_big_file_system_holds_2_1_tib_of_credits_per_tib_of_standard():
    # 4 TiB of Standard: baseline 4,096 x 50 / 1,024 = 200 MiB/s, burst 400 MiB/s, and it holds
    # 4 x 2.1 = 8.4 TiB of credits (2.1 TiB under the 2018 reading). A 12-hour burst at
    # 380 MiB/s spends (380 - 200) x 43,200 s = 7,776,000 MiB = 7,593.75 GiB: it fits now.
    work = Workload(
        standard_gib=4096, p95_mibps=380, peak_mibps=380, mean_mibps=190, drain_gib=7593.75
    )
    c = compare(work, "us-east-1", current_mode="bursting")
    bursting = next(r for r in c.rows if r.mode == "bursting")
    assert bursting.fits and c.best.mode == "bursting"
    assert credit_cap_bytes(4096 * GIB) == pytest.approx(8.4 * TIB)
    assert credit_cap_bytes(100 * GIB) == credit_cap_bytes(1 * TIB) == pytest.approx(2.1 * TIB)


def test_the_credit_drain_is_the_deepest_fall_of_the_balance():
    base = 5.0  # MiB/s: earns 300 MiB a minute
    hour = lambda mibps: HourTotals(60, mibps * MIB * 3600)  # noqa: E731
    hours = [hour(0), hour(50), hour(50), hour(0), hour(20)]
    # Balance (MiB/s-hours): +5, -40, -85, -80, -95: the deepest fall is from 5 to -95.
    assert credit_drain(hours, base) == pytest.approx(100 * MIB * 3600)
    assert credit_drain([hour(1)] * 10, base) == 0
    assert credit_drain([], base) == 0
    # Hours without data neither earn nor spend.
    assert credit_drain([HourTotals(0, 0.0), hour(10)], base) == pytest.approx(5 * MIB * 3600)


def test_it_builds_a_month_from_hourly_totals_and_bills_small_data_requests_as_32_kib():
    # 4,000 reads of 1 KiB are billed as 4,000 x 32 KiB (2018: x 4 KiB, 8 times less); 4,000
    # metadata requests of 1 KiB as 4,000 x 4 KiB; 10 writes of 1 MiB as their bytes.
    assert billed_bytes(4000 * KIB, 4000) == 4000 * 32 * KIB
    assert billed_bytes(4000 * KIB, 4000, 4 * KIB) == 4000 * 4 * KIB
    assert billed_bytes(10 * MIB, 10) == 10 * MIB
    assert billed_bytes(None, None) == 0
    hours = [HourTotals(60, 3 * MIB * 3600, read_bytes=GIB, write_bytes=2 * GIB)] * 73
    w = workload_from(hours, 4.0, 9.0, standard_bytes=100 * GIB, ia_bytes=10 * GIB)
    assert w.hours_of_data == 73
    assert w.read_gib == pytest.approx(730)  # 73 GiB in 73 h, scaled to 730 h
    assert w.write_gib == pytest.approx(1460)
    assert w.mean_mibps == pytest.approx(3.0)
    assert (w.standard_gib, w.ia_gib, w.p95_mibps, w.peak_mibps) == (100, 10, 4.0, 9.0)
    assert w.drain_gib == 0
    assert workload_from([HourTotals(59, 1.0)], 1, 1, standard_bytes=GIB) is None


def test_it_says_when_the_month_is_scaled_from_little_data():
    hours = [HourTotals(60, MIB * 3600, read_bytes=GIB)] * 3
    w = workload_from(hours, 1.0, 2.0, standard_bytes=100 * GIB)
    assert compare(w, "us-east-1").reason.endswith("(from 3 h of data, scaled to a month)")


def test_a_region_missing_from_the_table_falls_back_to_us_east_1_and_says_so():
    region, prices, note = prices_for("ap-east-1", PRICES)
    assert region == "us-east-1" and prices is PRICES["us-east-1"]
    assert note == (
        "no EFS prices for ap-east-1 in Vigil's table: us-east-1 prices shown "
        "(add ap-east-1 to VIGIL_EFS_PRICES)"
    )
    c = compare(Workload(standard_gib=1), "ap-east-1")
    assert c.prices_region == "us-east-1" and c.prices_note == note
    assert prices_for("us-east-1", PRICES)[2] == ""


def test_prices_can_be_overridden_and_regions_added():
    table = price_table(
        {
            "us-east-1": {"provisioned": 5.0},
            "eu-west-1": {
                "standard": 0.33,
                "ia": 0.0175,
                "elastic_read": 0.033,
                "elastic_write": 0.066,
                "provisioned": 6.6,
            },
        }
    )
    assert table["us-east-1"].provisioned == 5.0 and table["us-east-1"].standard == 0.30
    eu = table["eu-west-1"]
    assert (eu.standard, eu.legacy_ia, eu.archive, eu.source) == (
        0.33,
        0.0175,
        None,
        "VIGIL_EFS_PRICES",
    )
    got = compare_modes("eu-west-1", 100, 100, 0, 1, 2, table=table)
    assert next(m for m in got if m.mode == "elastic").monthly_usd == pytest.approx(33 + 3.3)
    assert PRICES["us-east-1"].provisioned == 6.0  # the built-in table is untouched


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ([1, 2], "expected a JSON object of region codes"),
        ({"Ireland": {}}, "'Ireland' is not an AWS region code"),
        ({"eu-west-1": 3}, "eu-west-1: expected an object of prices"),
        (
            {"eu-west-1": {"standard": 0.3}},
            "eu-west-1: missing elastic_read, elastic_write, ia, provisioned",
        ),
        ({"us-east-1": {"storage": 0.3}}, "us-east-1: unknown price storage"),
        ({"us-east-1": {"standard": "cheap"}}, "us-east-1.standard: expected a number of dollars"),
        (
            {"us-east-1": {"standard": -1}},
            "us-east-1.standard: -1 is not a price between 0 and 1000",
        ),
        ({"us-east-1": {"standard": True}}, "us-east-1.standard: expected a number of dollars"),
    ],
)
def test_it_refuses_malformed_price_overrides_naming_what_is_wrong(overrides, message):
    with pytest.raises(ValueError) as error:
        price_table(overrides)
    assert str(error.value) == message


def test_a_malformed_price_setting_stops_the_start(monkeypatch):
    from apps.efs.conf import PRICES
    from config.settings.base import setting

    monkeypatch.setenv("VIGIL_EFS_PRICES", json.dumps({"us-east-1": {"standard": "x"}}))
    with pytest.raises(ImproperlyConfigured, match="VIGIL_EFS_PRICES: us-east-1.standard"):
        PRICES.read(setting)
    monkeypatch.setenv("VIGIL_EFS_PRICES", "{not json")
    with pytest.raises(ImproperlyConfigured, match="VIGIL_EFS_PRICES"):
        PRICES.read(setting)
    monkeypatch.setenv("VIGIL_EFS_PRICES", '{"us-east-1": {"provisioned": 5}}')
    assert PRICES.read(setting) == {"us-east-1": {"provisioned": 5}}


def test_a_one_zone_file_system_says_its_storage_prices_are_the_regional_ones():
    c = compare(Workload(standard_gib=100), "us-east-1", file_system_type="one_zone")
    assert any("no One Zone storage prices in Vigil's table" in n for n in c.notes)
    table = price_table({"us-east-1": {"one_zone_standard": 0.16, "one_zone_ia": 0.0133}})
    priced = compare(
        Workload(standard_gib=100), "us-east-1", table=table, file_system_type="one_zone"
    )
    assert priced.notes == () and priced.best.storage_usd == pytest.approx(16.0)


def test_when_the_mode_it_is_in_throttles_it_says_what_carrying_it_costs_more():
    work = Workload(standard_gib=100, read_gib=2000, p95_mibps=9.6, peak_mibps=9.6, mean_mibps=9.6)
    c = compare(work, "us-east-1", current_mode="bursting")
    assert c.current_fits is False and c.best.mode == "provisioned"
    assert c.saving_usd == 0
    assert c.extra_usd == pytest.approx((10 - BASELINE_100_GIB) * 6)
    assert (
        compare(
            work, "us-east-1", current_mode="provisioned", current_provisioned_mibps=64
        ).extra_usd
        is None
    )
