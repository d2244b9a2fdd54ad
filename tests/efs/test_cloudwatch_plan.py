"""GetMetricData planning and parsing (apps/efs/cloudwatch_plan.py)."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

import botocore.session
import pytest
from botocore.validate import validate_parameters

from apps.efs.cloudwatch_plan import (
    SPECS,
    SYNC,
    FileSystemRef,
    build_queries,
    destination_of,
    parse_query_id,
    plan_requests,
    query_id,
    samples_from_responses,
    with_late_look,
)
from apps.efs.metrics import Sample
from apps.lib.cloudwatch import (
    MAX_DATAPOINTS_PER_CALL,
    Window,
    batched,
    collection_window,
    min_calls,
)
from tests.helpers import SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES
STATISTICS = ("Minimum", "Maximum", "Average", "Sum", "SampleCount")
FS_A = "fs-0123456789abcdef0"
FS_B = "fs-89abcdef"
T = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _fact_sheet_statistics() -> dict[str, set[str]]:
    """Metric -> valid statistics, read from the fact sheet's metrics table."""
    table = {}
    for line in (FIXTURES / "efs-metrics.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and (name := re.fullmatch(r"`(\w+)`", cells[1])):
            table[name.group(1)] = {s for s in STATISTICS if re.search(rf"\b{s}\b", cells[3])}
    return table


FACT_SHEET_STATISTICS = _fact_sheet_statistics()


def test_it_reads_the_fact_sheet_table():
    assert FACT_SHEET_STATISTICS["ClientConnections"] == {"Sum"}
    assert FACT_SHEET_STATISTICS["PercentIOLimit"] == {"Minimum", "Maximum", "Average"}
    assert len(FACT_SHEET_STATISTICS) == 13
    assert FACT_SHEET_STATISTICS["TimeSinceLastSync"] == {"Minimum", "Maximum", "Average"}


@pytest.mark.parametrize(
    "spec", (*SPECS, SYNC), ids=lambda s: f"{s.metric}-{s.stat}-{s.storage_class}"
)
def test_it_asks_only_for_statistics_the_fact_sheet_lists(spec):
    assert spec.stat in FACT_SHEET_STATISTICS[spec.metric]


def test_it_never_asks_for_the_average_of_an_iobytes_metric():
    stats = {}
    for spec in SPECS:
        stats.setdefault(spec.metric, set()).add(spec.stat)
    for metric in (
        "DataReadIOBytes",
        "DataWriteIOBytes",
        "MetadataIOBytes",
        "MetadataReadIOBytes",
        "MetadataWriteIOBytes",
        "TotalIOBytes",
    ):
        assert stats[metric] == {"Sum", "SampleCount"}
    assert stats["MeteredIOBytes"] == {"Sum"}
    assert stats["PercentIOLimit"] == {"Maximum"}
    assert stats["BurstCreditBalance"] == {"Minimum"}
    assert stats["ClientConnections"] == {"Sum"}


def test_it_builds_complete_metric_data_queries():
    queries = build_queries([FileSystemRef(FS_A)])
    assert len(queries) == 20
    assert queries[0] == {
        "Id": "fs_0123456789abcdef0__read_sum",
        "MetricStat": {
            "Metric": {
                "Namespace": "AWS/EFS",
                "MetricName": "DataReadIOBytes",
                "Dimensions": [{"Name": "FileSystemId", "Value": FS_A}],
            },
            "Period": 60,
            "Stat": "Sum",
        },
        "ReturnData": True,
    }
    standard = next(q for q in queries if q["Id"].endswith("storage_std"))
    assert standard["MetricStat"]["Metric"]["Dimensions"] == [
        {"Name": "FileSystemId", "Value": FS_A},
        {"Name": "StorageClass", "Value": "Standard"},
    ]


@pytest.mark.parametrize(
    ("ref", "count", "missing"),
    [
        (FileSystemRef(FS_A), 20, set()),
        (FileSystemRef(FS_A, performance_mode="maxIO"), 19, {"PercentIOLimit"}),
        (FileSystemRef(FS_A, throughput_mode="elastic"), 19, {"BurstCreditBalance"}),
        (FileSystemRef(FS_A, throughput_mode="provisioned"), 20, set()),
        (FileSystemRef(FS_A, storage_classes=("Standard",)), 18, set()),
    ],
)
def test_it_skips_metrics_a_file_system_does_not_have(ref, count, missing):
    queries = build_queries([ref])
    assert len(queries) == count
    names = {q["MetricStat"]["Metric"]["MetricName"] for q in queries}
    assert not names & missing


@pytest.mark.parametrize("fs_id", [FS_A, FS_B, "fs-1", "fs-abcdef0123456789abcdef0123456789"])
def test_its_ids_follow_cloudwatch_rules_and_map_back(fs_id):
    ids = [q["Id"] for q in build_queries([FileSystemRef(fs_id)])]
    assert len(set(ids)) == len(ids)
    for qid, spec in zip(ids, SPECS, strict=True):
        assert re.fullmatch(r"[a-z][a-zA-Z0-9_]*", qid)
        assert len(qid) <= 255
        assert parse_query_id(qid) == (fs_id, spec)


def test_it_asks_for_time_since_last_sync_once_per_replication_destination():
    # [METRICS]: TimeSinceLastSync has FileSystemId (the source) and DestinationFileSystemId.
    ref = FileSystemRef(FS_A, replica_ids=("fs-0fedcba987654321a", "fs-11111111"))
    queries = build_queries([ref])
    assert len(queries) == 22
    syncs = [q for q in queries if q["MetricStat"]["Metric"]["MetricName"] == "TimeSinceLastSync"]
    assert [q["Id"] for q in syncs] == [
        "fs_0123456789abcdef0__sync_fs_0fedcba987654321a",
        "fs_0123456789abcdef0__sync_fs_11111111",
    ]
    assert syncs[0]["MetricStat"]["Stat"] == "Maximum"
    assert syncs[0]["MetricStat"]["Metric"]["Dimensions"] == [
        {"Name": "FileSystemId", "Value": FS_A},
        {"Name": "DestinationFileSystemId", "Value": "fs-0fedcba987654321a"},
    ]
    source, spec = parse_query_id(syncs[1]["Id"])
    assert (source, destination_of(spec)) == (FS_A, "fs-11111111")
    # The latest value of each destination, not a Sample field.
    page = {
        "MetricDataResults": [
            {
                "Id": syncs[0]["Id"],
                "Timestamps": [T, T - timedelta(minutes=1)],
                "Values": [90.0, 30.0],
            },
            {"Id": syncs[1]["Id"], "Timestamps": [T], "Values": [float("nan")]},
        ]
    }
    got = samples_from_responses([page])
    assert got.syncs == {FS_A: {"fs-0fedcba987654321a": (T, 90.0)}}
    assert got.dropped_count == 1 and not got.rows[FS_A]


@pytest.mark.parametrize("bad", ["", "fs_a__read_sum_x", "q1", "fs_a", "fs_A__read_sum"])
def test_it_rejects_ids_it_did_not_make(bad):
    with pytest.raises(ValueError):
        parse_query_id(bad)


def test_it_rejects_something_that_is_not_a_file_system_id():
    with pytest.raises(ValueError):
        query_id("i-0123", SPECS[0])


def test_it_packs_1000_file_systems_into_full_batches():
    refs = [FileSystemRef(f"fs-{i:08x}") for i in range(1000)]
    queries = build_queries(refs)
    batches = batched(queries)
    assert len(queries) == 20_000
    assert len(batches) == min_calls(20_000) == 40
    assert all(len(b) == 500 for b in batches)
    assert [q for b in batches for q in b] == queries
    assert len(batched(queries[:501])) == 2
    assert batched([]) == []
    with pytest.raises(ValueError):
        batched(queries, 501)


# --- Windows ----------------------------------------------------------------------------------


def test_it_plans_exactly_ceil_queries_over_500_calls_per_cycle():
    refs = [FileSystemRef(f"fs-{i:08x}") for i in range(100)]
    window = collection_window(T, T - timedelta(minutes=5))
    requests = plan_requests(refs, window)
    assert len(requests) == min_calls(2000) == 4
    params = requests[0].params()
    assert params["StartTime"] == T - timedelta(minutes=5)
    assert params["EndTime"] == T - timedelta(minutes=3)
    assert params["ScanBy"] == "TimestampAscending"
    assert len(params["MetricDataQueries"]) == 500


@pytest.mark.slow  # over 1 s of CPU alone (docs/testing.md)
def test_the_late_look_reaches_back_in_the_same_number_of_calls():
    refs = [FileSystemRef(f"fs-{i:08x}") for i in range(1000)]
    window = collection_window(T, T - timedelta(minutes=5))
    since = window.start - timedelta(minutes=60, seconds=20)
    asked = with_late_look(window, since)
    assert asked == Window(window.start - timedelta(minutes=61), window.end)
    plain, looked = plan_requests(refs, window), plan_requests(refs, asked)
    assert len(looked) == len(plain) == min_calls(20_000) == 40
    # Never further back than three hours: 500 queries still fit one call's points.
    far = with_late_look(window, T - timedelta(days=2))
    assert far.start == window.end - timedelta(minutes=180)
    assert all(r.datapoints <= 100_800 for r in plan_requests(refs, far))
    assert len(plan_requests(refs, far)) == 40
    # A window that already reaches further back, or no look, is left as it is.
    long = Window(T - timedelta(hours=5), T)
    assert with_late_look(long, T - timedelta(hours=1)) == long
    assert with_late_look(window, None) == window


def test_it_plans_a_backfill_oldest_window_first_within_limits():
    refs = [FileSystemRef(f"fs-{i:08x}") for i in range(32)]  # 640 queries: 500 + 140
    requests = plan_requests(refs, Window(T - timedelta(hours=24), T))
    assert all(r.datapoints <= MAX_DATAPOINTS_PER_CALL for r in requests)
    assert all(len(r.queries) <= 500 for r in requests)
    starts = [r.window.start for r in requests]
    assert starts == sorted(starts)
    assert len(requests) == 8 * 2
    assert plan_requests([], Window(T - timedelta(hours=1), T)) == []


# --- Responses back into wide samples ---------------------------------------------------------


def _minute(n):
    return T + timedelta(minutes=n)


# Two pages of batch 1 (NextToken), one page of batch 2, as boto3 returns them.
PAGES = [
    {
        "MetricDataResults": [
            {
                "Id": "fs_0123456789abcdef0__read_sum",
                "Label": "DataReadIOBytes",
                "Timestamps": [_minute(0), _minute(1)],
                "Values": [707788800.0, 0.0],
                "StatusCode": "PartialData",
            },
            {
                "Id": "fs_0123456789abcdef0__credits_min",
                "Label": "BurstCreditBalance",
                "Timestamps": [_minute(0), _minute(1), _minute(2)],
                "Values": [2.3e12, 2.29e12, 2.28e12],
                "StatusCode": "Complete",
            },
        ],
        "NextToken": "page-2",
        "Messages": [],
        "ResponseMetadata": {"HTTPStatusCode": 200},
    },
    {
        "MetricDataResults": [
            {
                "Id": "fs_0123456789abcdef0__read_sum",
                "Label": "DataReadIOBytes",
                "Timestamps": [_minute(3)],
                "Values": [1024.0],
                "StatusCode": "Complete",
            },
            {
                "Id": "fs_0123456789abcdef0__read_n",
                "Label": "DataReadIOBytes",
                "Timestamps": [],
                "Values": [],
                "StatusCode": "Complete",
            },
        ],
        "Messages": [],
    },
    {
        "MetricDataResults": [
            {
                "Id": "fs_89abcdef__iolimit_max",
                "Label": "PercentIOLimit",
                # ISO strings, as a JSON-decoded answer would carry them.
                "Timestamps": ["2026-03-02T12:01:00Z", "2026-03-02T12:00:00+00:00"],
                "Values": [84.0, 100.0],
                "StatusCode": "Complete",
            },
            {
                "Id": "fs_89abcdef__permitted_avg",
                "Timestamps": [],
                "Values": [],
                "StatusCode": "Forbidden",
                "Messages": [{"Code": "Forbidden", "Value": "not authorized"}],
            },
        ],
        "Messages": [{"Code": "MaxQueryTimeRangeExceed", "Value": "too long"}],
    },
]


def test_it_merges_pages_and_batches_into_wide_samples():
    collected = samples_from_responses(PAGES)
    a = collected.samples[FS_A]
    assert [s.timestamp for s in a] == [_minute(0), _minute(1), _minute(2), _minute(3)]
    assert a[0].data_read_bytes == 707788800.0
    assert a[0].burst_credit_balance == 2.3e12
    assert a[1].data_read_bytes == 0.0  # CloudWatch said zero: zero
    assert a[2].data_read_bytes is None  # CloudWatch said nothing: a gap
    assert a[3].data_read_bytes == 1024.0 and a[3].burst_credit_balance is None
    assert all(s.data_read_count is None for s in a)
    b = collected.samples[FS_B]
    assert [(s.timestamp, s.percent_io_limit) for s in b] == [
        (_minute(0), 100.0),
        (_minute(1), 84.0),
    ]


def test_it_reports_forbidden_queries_and_call_messages():
    problems = samples_from_responses(PAGES).problems
    assert problems == (
        "fs_89abcdef__permitted_avg: Forbidden: not authorized",
        "MaxQueryTimeRangeExceed: too long",
    )


def test_it_fills_the_asked_window_with_gaps():
    window = Window(_minute(0), _minute(6))
    collected = samples_from_responses(PAGES, window=window, filesystem_ids=[FS_A, "fs-00000000"])
    assert len(collected.samples[FS_A]) == 6
    assert not collected.samples[FS_A][5].has_data()
    silent = collected.samples["fs-00000000"]
    assert [s.timestamp for s in silent] == [_minute(i) for i in range(6)]
    assert not any(s.has_data() for s in silent)


def test_it_notes_a_result_it_cannot_map_back():
    page = {"MetricDataResults": [{"Id": "m1", "Timestamps": [T], "Values": [1.0]}]}
    collected = samples_from_responses([page])
    assert collected.samples == {}
    assert collected.problems == ("not one of our query ids: 'm1'",)


def test_it_round_trips_every_query_it_builds():
    refs = [FileSystemRef(FS_A), FileSystemRef(FS_B)]
    page = {
        "MetricDataResults": [
            {"Id": q["Id"], "Timestamps": [T], "Values": [float(i)], "StatusCode": "Complete"}
            for i, q in enumerate(build_queries(refs))
        ]
    }
    samples = samples_from_responses([page]).samples
    assert samples[FS_A][0].data_read_bytes == 0.0
    assert samples[FS_A][0].storage_ia_bytes == 19.0
    assert samples[FS_B][0].data_read_bytes == 20.0
    assert all(s.has_data() for ss in samples.values() for s in ss)


def test_its_requests_match_botocores_get_metric_data_model():
    # botocore's own service model, so the shapes are AWS's, not ours.
    model = botocore.session.get_session().get_service_model("cloudwatch")
    shape = model.operation_model("GetMetricData").input_shape
    refs = [
        FileSystemRef(FS_A),
        FileSystemRef(FS_B, performance_mode="maxIO", throughput_mode="elastic"),
    ]
    for request in plan_requests(refs, Window(T - timedelta(hours=1), T)):
        validate_parameters(request.params(), shape)  # raises ParamValidationError


def _result(key: str, stamps: list, values: list) -> dict:
    return {"Id": f"fs_89abcdef__{key}", "Timestamps": stamps, "Values": values}


def test_it_drops_and_counts_values_that_cannot_be_true_never_keeping_them():
    window = Window(_minute(0), _minute(4))
    page = {
        "MetricDataResults": [
            _result(
                "iolimit_max",
                [_minute(0), _minute(1), _minute(2), _minute(3)],
                [math.nan, -1.0, math.inf, 50.0],
            ),
            _result("credits_min", [_minute(1), _minute(1), _minute(2)], [5.0, 6.0, 7.0]),
            _result(
                "read_sum",
                [_minute(-1), _minute(4), _minute(2) + timedelta(seconds=30), _minute(3)],
                [1.0, 2.0, 3.0, 4.0],
            ),
            _result("total_sum", [_minute(0)], [1.0, 2.0]),  # a value without its timestamp
            _result("meta_sum", [_minute(0)], ["1.0"]),  # not a number at all
        ]
    }

    collected = samples_from_responses([page], window=window, filesystem_ids=[FS_B])

    b = {s.timestamp: s for s in collected.samples[FS_B]}
    assert [b[_minute(i)].percent_io_limit for i in range(4)] == [None, None, None, 50.0]
    assert [b[_minute(i)].burst_credit_balance for i in range(4)] == [None, None, 7.0, None]
    assert [b[_minute(i)].data_read_bytes for i in range(4)] == [None, None, None, 4.0]
    assert sorted(b) == [_minute(i) for i in range(4)]  # nothing outside the window
    assert [str(d) for d in collected.dropped] == [
        f"{FS_B} BurstCreditBalance Minimum: 2 duplicate timestamp",
        f"{FS_B} DataReadIOBytes Sum: 3 outside the window",
        f"{FS_B} MetadataIOBytes Sum: 1 not a number",
        f"{FS_B} PercentIOLimit Maximum: 1 negative",
        f"{FS_B} PercentIOLimit Maximum: 2 not a number",
        f"{FS_B} TotalIOBytes Sum: 1 without a timestamp",
    ]
    assert collected.dropped_count == 10


def test_a_duplicate_across_pages_is_dropped_too():
    pages = [
        {"MetricDataResults": [_result("iolimit_max", [_minute(0)], [10.0])]},
        {"MetricDataResults": [_result("iolimit_max", [_minute(0)], [90.0])]},
    ]
    collected = samples_from_responses(pages)
    assert all(s.percent_io_limit is None for s in collected.samples[FS_B])
    assert collected.dropped_count == 2


def test_it_drops_every_copy_of_a_value_sent_three_times_and_a_stamp_that_is_no_time():
    pages = [
        {"MetricDataResults": [_result("iolimit_max", [_minute(0)] * 3, [10.0, 20.0, 30.0])]},
        {"MetricDataResults": [_result("credits_min", [[2026], None, _minute(1)], [1, 2, 3])]},
    ]
    collected = samples_from_responses(pages)
    assert collected.rows[FS_B] == {_minute(0): {}, _minute(1): {"burst_credit_balance": 3.0}}
    assert type(collected.rows[FS_B][_minute(1)]["burst_credit_balance"]) is float
    assert [str(d) for d in collected.dropped] == [
        f"{FS_B} BurstCreditBalance Minimum: 2 without a timestamp",
        f"{FS_B} PercentIOLimit Maximum: 3 duplicate timestamp",
    ]


def test_its_rows_and_its_samples_say_the_same():
    window = Window(_minute(0), _minute(4))
    collected = samples_from_responses(PAGES, window=window, filesystem_ids=[FS_A, FS_B])
    for fs, samples in collected.samples.items():
        assert [s.timestamp for s in samples] == [_minute(i) for i in range(4)]
        for s in samples:
            values = collected.rows[fs].get(s.timestamp, {})
            assert s == Sample(s.timestamp, 60, **values)
