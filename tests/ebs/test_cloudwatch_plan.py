"""The EBS GetMetricData plan and the reading of its answers (apps/ebs/cloudwatch_plan.py),
pure: query ids, the fewest calls, window pieces, and values dropped rather than invented."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import botocore.session
import pytest

from apps.ebs.cloudwatch_plan import (
    InstanceRef,
    VolumeRef,
    build_queries,
    floor_calls,
    parse_query_id,
    plan_requests,
    query_id,
    read_answers,
)
from apps.ebs.limits import VOLUME_METRICS
from apps.lib.cloudwatch import Window

START = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def test_it_names_each_query_after_its_volume_and_reads_the_name_back():
    fact = next(m for m in VOLUME_METRICS if m.metric == "BurstBalance")
    qid = query_id("v", "vol-0123abcdef", fact)
    assert qid == "v_0123abcdef__burst_balance"
    assert parse_query_id(qid) == ("v", "vol-0123abcdef", fact)
    for foreign in ("x_1__burst_balance", "v_0123__nope", "v_ZZ__burst_balance", "junk"):
        with pytest.raises(ValueError):
            parse_query_id(foreign)
    with pytest.raises(ValueError):
        query_id("v", "vol-'; DROP", fact)


def test_it_asks_attached_volumes_only_and_the_checks_with_their_instance():
    queries = build_queries(
        [VolumeRef("vol-0a", "gp2", "i-0b"), VolumeRef("vol-0c", "gp2", None)],
        [InstanceRef("i-0b", "m5.large")],
    )
    assert not any("0c" in q["Id"] for q in queries)
    stalled = next(q for q in queries if q["Id"] == "v_0a__stalled")
    assert stalled["MetricStat"]["Metric"]["Dimensions"] == [
        {"Name": "VolumeId", "Value": "vol-0a"},
        {"Name": "InstanceId", "Value": "i-0b"},
    ]
    balance = next(q for q in queries if q["Id"] == "i_0b__io_balance")
    assert balance["MetricStat"]["Period"] == 300 and balance["MetricStat"]["Stat"] == "Minimum"


def test_its_requests_match_botocores_get_metric_data_model():
    """The adapter skips botocore's validation (apps/efs/cloudwatch.py): the plan's requests
    are held to the model here."""
    from botocore.validate import validate_parameters

    model = botocore.session.get_session().get_service_model("cloudwatch")
    shape = model.operation_model("GetMetricData").input_shape
    volumes = [VolumeRef(f"vol-{i:04x}", "io1", "i-0b") for i in range(3)]
    for request in plan_requests(
        volumes, [InstanceRef("i-0b", "m5.large")], Window(START, START + timedelta(hours=1))
    ):
        validate_parameters(request.params(), shape)


@pytest.mark.slow  # over 1 s of CPU alone (docs/testing.md)
def test_it_puts_a_thousand_volumes_in_the_fewest_calls_and_cuts_long_windows():
    volumes = [VolumeRef(f"vol-{i:05x}", "gp2", f"i-{i // 5:05x}") for i in range(1000)]
    instances = [InstanceRef(f"i-{i:05x}", "m5.large") for i in range(200)]
    queries = build_queries(volumes, instances)
    assert len(queries) == 1000 * 12 + 200 * 4
    hour = Window(START, START + timedelta(hours=1))
    requests = plan_requests(volumes, instances, hour)
    assert len(requests) == math.ceil(len(queries) / 500) == floor_calls(len(queries), hour) == 26
    assert all(len(r.queries) <= 500 for r in requests)
    day = Window(START, START + timedelta(hours=24))
    pieces = {r.window for r in plan_requests(volumes, instances, day)}
    assert len(pieces) == 8  # 200-minute pieces: 500 queries x 200 minutes <= 100,800 points
    assert all(p.start.minute % 5 == 0 for p in pieces)
    assert len(plan_requests(volumes, instances, day)) == floor_calls(len(queries), day)


def test_it_keeps_values_by_minute_and_drops_what_cannot_be_true():
    window = Window(START, START + timedelta(minutes=10))
    pages = [
        {
            "MetricDataResults": [
                {
                    "Id": "v_0a__burst_balance",
                    "Timestamps": [START, START + timedelta(minutes=1), START + timedelta(minutes=2),
                                   START + timedelta(minutes=3, seconds=5), START - timedelta(minutes=1)],
                    "Values": [100.0, float("nan"), -1.0, 50.0, 99.0],
                    "StatusCode": "Complete",
                },
                {"Id": "i_0b__io_balance", "Timestamps": [START] * 2, "Values": [10.0, 20.0]},
                {"Id": "foreign", "Timestamps": [], "Values": []},
            ]
        }
    ]  # fmt: skip
    got = read_answers(pages, window)
    assert got.volumes == {"vol-0a": {START: {"burst_balance": 100.0}}}
    assert got.instances == {"i-0b": {START: {}}}
    reasons = {(d.resource, d.reason): d.count for d in got.dropped}
    assert reasons == {
        ("vol-0a", "not a number"): 1,
        ("vol-0a", "negative"): 1,
        ("vol-0a", "outside the window"): 2,
        ("i-0b", "duplicate timestamp"): 2,
    }
    assert got.problems == ("not one of our query ids: 'foreign'",)
