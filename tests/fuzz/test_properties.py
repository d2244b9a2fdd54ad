"""Generated hostile input for every parser of outside text: a result or a clear error, always.

The targets (``tests/fuzz/targets.py``) call each parser the way Vigil does and check what
would be stored; hypothesis supplies the input (deterministically, ``strategies.fuzz``).
"""

from __future__ import annotations

import contextlib
import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from apps.efs.cloudwatch_plan import SPECS, query_id, samples_from_responses
from apps.galera import collect as galera_collect
from apps.galera.models import Cluster, Node
from apps.galera.mysql import result_from_rows
from apps.lib.cloudwatch import Window
from apps.raid.errors import ParseError
from apps.raid.models import Host
from apps.raid.report import assess
from tests.fuzz import strategies as s
from tests.fuzz import targets

pytestmark = [pytest.mark.fuzz, pytest.mark.slow]


@s.fuzz(600)
@given(s.MDSTAT)
def test_any_mdstat_is_a_report_or_a_parse_error(text):
    targets.mdstat(s.encoded(text))


@s.fuzz(300)
@given(
    s.MDSTAT,
    st.dictionaries(st.sampled_from([f"md{i}" for i in range(8)]), s.DETAIL, max_size=3),
    s.RULES,
)
def test_any_report_with_details_and_rules_is_judged_or_refused(text, details, rules):
    with contextlib.suppress(ParseError):
        targets.check_report(assess(text, details, rules, "server"))


@s.fuzz(400)
@given(s.DETAIL)
def test_any_mdadm_detail_is_read_or_refused(text):
    targets.detail(s.encoded(text))


@s.fuzz(400)
@given(s.WSREP)
def test_any_wsrep_status_text_is_read_or_refused(text):
    targets.wsrep(s.encoded(text))


@s.fuzz(300)
@given(s.OPTIONS)
def test_any_provider_options_are_read_or_refused(text):
    targets.options(s.encoded(text))


@s.fuzz(600)
@given(s.URL)
def test_any_typed_url_becomes_a_request_a_browser_would_send_or_a_clear_error(text):
    targets.url(s.encoded(text))


@s.fuzz(200)
@given(s.HTTP)
def test_any_response_a_server_sends_ends_the_probe_with_a_result_or_its_error(data):
    targets.http(data)


_STAMPS = st.one_of(
    st.datetimes(
        min_value=datetime(2026, 3, 2, 11, 58),
        max_value=datetime(2026, 3, 2, 12, 8),
        timezones=st.sampled_from([UTC, None]),
    ),
    st.sampled_from(["2026-03-02T12:01:00Z", "not a time", "", 5]),
)
_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**30), st.just("1.0")
)


@s.fuzz(300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(SPECS), st.lists(_STAMPS, max_size=6), st.lists(_VALUES, max_size=6)
        ),
        max_size=6,
    )
)
def test_cloudwatch_values_are_kept_only_when_they_can_be_true(results):
    window = Window(
        datetime(2026, 3, 2, 12, 0, tzinfo=UTC), datetime(2026, 3, 2, 12, 5, tzinfo=UTC)
    )
    page = {
        "MetricDataResults": [
            {"Id": query_id("fs-0123abcd", spec), "Timestamps": stamps, "Values": values}
            for spec, stamps, values in results
        ]
    }
    collected = samples_from_responses([page], window=window, filesystem_ids=["fs-0123abcd"])
    kept = 0
    for sample in collected.samples["fs-0123abcd"]:
        assert window.start <= sample.timestamp < window.end
        assert sample.timestamp.second == 0 and sample.timestamp.microsecond == 0
        for spec in SPECS:
            value = getattr(sample, spec.field)
            if value is not None:
                assert math.isfinite(value) and value >= 0
                kept += 1
    assert kept + collected.dropped_count == sum(len(values) for _, _, values in results)


# --- through the database: the push endpoint and the Galera poll ------------------------------


@pytest.fixture
def host(db) -> Host:
    from apps.regions.models import Region

    site = Region.objects.create(code="fuzz", name="Fuzz", kind=Region.Kind.SITE)
    return Host.objects.create(name="fuzz", region=site, domain_rules={"sd*": "a"})


_BODIES = st.one_of(
    st.builds(
        lambda mdstat, details: (
            "application/json",
            json.dumps({"mdstat": mdstat, "details": details}),
        ),
        s.MDSTAT,
        st.dictionaries(
            st.one_of(st.sampled_from(["md0", "md1", "/dev/md2"]), s.WILD_TEXT),
            s.DETAIL,
            max_size=3,
        ),
    ),
    st.builds(lambda text: ("text/plain", text), s.MDSTAT),
    st.tuples(
        st.sampled_from(
            [
                "application/json",
                "text/plain",
                "text/plain; charset=utf-16",
                "text/plain; charset=base64",
                "application/xml",
                "",
            ]
        ),
        st.binary(max_size=200),
    ),
)


def assert_push_answered_below_500(url: str, token: str, body: tuple[str, str | bytes]) -> None:
    """POST ``body`` (content type, data) as an agent pushes: a report taken, or a refusal in
    JSON; never a server error."""
    cache.clear()  # the per-caller write budget (120/min) is not what is tested here
    content_type, data = body
    response = Client().generic(
        "POST",
        url,
        data if isinstance(data, bytes) else s.encoded(data),
        content_type=content_type,
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code in {200, 400, 413, 415}, response.content[:300]
    assert ("error" in response.json()) == (response.status_code != 200)


@s.fuzz(150)
@given(body=_BODIES)
def test_any_push_is_answered_below_500_on_this_database(host, body):
    assert_push_answered_below_500(f"/api/raid/hosts/{host.pk}/report", host.issue_token(), body)


@pytest.fixture
def pushing_node(db) -> Node:
    from apps.regions.models import Region

    site = Region.objects.create(code="fuzz-p", name="Fuzz push", kind=Region.Kind.SITE)
    cluster = Cluster.objects.create(region=site, name="fuzz-push", expected_data_nodes=1)
    return Node.objects.create(cluster=cluster, host="127.0.0.13", mode=Node.Mode.PUSH)


@s.fuzz(150)
@given(body=st.one_of(_BODIES, s.WSREP.map(lambda text: ("text/plain", text))))
def test_any_galera_push_is_answered_below_500_on_this_database(pushing_node, body):
    url = f"/api/galera/nodes/{pushing_node.pk}/report"
    assert_push_answered_below_500(url, pushing_node.issue_token(), body)


@pytest.fixture
def cluster(db) -> Cluster:
    from apps.regions.models import Region

    site = Region.objects.create(code="fuzz-g", name="Fuzz", kind=Region.Kind.SITE)
    cluster = Cluster.objects.create(region=site, name="fuzz", expected_data_nodes=3)
    for i, name in enumerate("abc"):
        Node.objects.create(cluster=cluster, name=name, host="10.9.9.9", port=3306 + i)
    return cluster


@s.fuzz(100)
@given(nodes=st.lists(st.tuples(s.WSREP_ROWS, s.OPTIONS), min_size=3, max_size=3))
def test_any_answers_of_the_nodes_are_judged_and_the_poll_recorded_on_this_database(cluster, nodes):
    results = [
        result_from_rows(name, rows, [("wsrep_provider_options", options)])
        for name, (rows, options) in zip("abc", nodes, strict=True)
    ]
    before = cluster.snapshots.count()
    galera_collect.save_poll(cluster, results, now=datetime.now(UTC) + timedelta(seconds=before))
    assert cluster.snapshots.count() == before + 1
