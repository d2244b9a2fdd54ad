"""The poll task without the Galera cluster: dead nodes, a plain MariaDB, passwords, demo,
split-brain flapping, the queues and flow control between polls, and the dispatcher."""

from __future__ import annotations

import importlib
import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.alerts.models import Transition
from apps.galera import collect, demo, mysql, tasks
from apps.galera.models import Cluster, Node, Snapshot
from apps.galera.parse_wsrep import WsrepStatus
from apps.galera.verdict import NOT_GALERA, NodeResult
from apps.lib.status import Status
from apps.regions.models import Region
from tests.helpers import eager_celery

pytestmark = pytest.mark.django_db
celery_module = importlib.import_module("config.celery_app")

PLAIN_MARIADB = ("127.0.0.1", 3306)  # the machine's standalone MariaDB: root, empty password


def make_cluster(site: Region, **fields) -> Cluster:
    fields = {"name": "prod", "expected_data_nodes": 3, "expected_arbitrators": 0, **fields}
    return Cluster.objects.create(region=site, **fields)


def refused_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as closed:
        closed.bind(("127.0.0.1", 0))
        return closed.getsockname()[1]


def test_it_reports_a_node_that_refuses_connections_as_unreachable(site):
    cluster = make_cluster(site)
    node = Node.objects.create(cluster=cluster, name="db1", host="127.0.0.1", port=refused_port())

    assert tasks.poll_cluster(cluster.pk) == "critical"

    cluster.refresh_from_db()
    node.refresh_from_db()
    assert cluster.reason.startswith("no node reachable")
    assert (node.state, node.detail[:6]) == ("unreachable", "(2003)")
    assert cluster.primary is None  # nothing answered: unknown, not "non-Primary"
    snapshot = cluster.snapshots.get()
    assert snapshot.nodes["db1"]["state"] == "unreachable"
    assert snapshot.cluster_size is None
    transition = Transition.objects.get(object_id=cluster.pk, concern="galera")
    assert (transition.old_status, transition.new_status) == ("unknown", "critical")


def test_it_shows_a_plain_mariadb_as_not_a_galera_node_instead_of_crashing(site):
    cluster = make_cluster(site)
    Node.objects.create(cluster=cluster, host=PLAIN_MARIADB[0], port=PLAIN_MARIADB[1], user="root")

    assert tasks.poll_cluster(cluster.pk) == "critical"

    cluster.refresh_from_db()
    assert cluster.reason == f"no Galera node answered: 127.0.0.1:3306 is {NOT_GALERA}"
    assert cluster.nodes.get().state == "not-galera"


def test_it_shows_the_servers_message_for_wrong_credentials(site, monkeypatch):
    monkeypatch.setenv("GALERA_TEST_PASSWORD", "not-the-password")
    cluster = make_cluster(site)
    Node.objects.create(
        cluster=cluster,
        host=PLAIN_MARIADB[0],
        port=PLAIN_MARIADB[1],
        user="vigil_nobody",
        password_env="GALERA_TEST_PASSWORD",
    )

    tasks.poll_cluster(cluster.pk)

    cluster.refresh_from_db()
    assert "(1045) Access denied for user 'vigil_nobody'@'127.0.0.1'" in cluster.reason
    assert "not-the-password" not in cluster.reason
    assert "not-the-password" not in str(cluster.snapshots.get().nodes)


def test_it_reads_the_password_from_a_secrets_file(site, tmp_path, settings):
    settings.VIGIL_GALERA_SECRETS_DIR = str(tmp_path)
    (tmp_path / "galera-password").write_text("\n")  # root's password here is empty
    cluster = make_cluster(site)
    Node.objects.create(
        cluster=cluster, host="127.0.0.1", port=3306, user="root", password_file="galera-password"
    )

    tasks.poll_cluster(cluster.pk)

    assert cluster.nodes.get().state == "not-galera"  # connected: the password was right


def test_it_never_reads_a_password_reference_outside_the_allowed_places(site, tmp_path, settings):
    settings.VIGIL_GALERA_SECRETS_DIR = str(tmp_path / "secrets")
    cluster = make_cluster(site)
    outside = tmp_path / "elsewhere"
    outside.write_text("worker secret")
    Node.objects.create(cluster=cluster, name="file", host="127.0.0.1", password_file=str(outside))
    Node.objects.create(
        cluster=cluster, name="env", host="127.0.0.1", port=3307, password_env="HOME"
    )

    tasks.poll_cluster(cluster.pk)

    details = dict(cluster.nodes.values_list("name", "detail"))
    refused = (
        "password unavailable: the node's password reference is not allowed "
        "(edit the node to give it again)"
    )
    assert details == {"file": refused, "env": refused}  # neither reference named to viewers


def test_it_does_not_connect_when_the_password_variable_is_missing(site, monkeypatch):
    monkeypatch.delenv("GALERA_MISSING_PASSWORD", raising=False)
    cluster = make_cluster(site)
    Node.objects.create(
        cluster=cluster, host="127.0.0.1", port=3306, password_env="GALERA_MISSING_PASSWORD"
    )

    tasks.poll_cluster(cluster.pk)

    cluster.refresh_from_db()
    assert "password unavailable: its environment variable is not set on the worker" in (
        cluster.reason
    )


def test_viewers_never_read_the_password_variables_name_after_a_failed_poll(
    site, monkeypatch, client, viewer, caplog
):
    monkeypatch.delenv("GALERA_MISSING_PASSWORD", raising=False)
    cluster = make_cluster(site)
    node = Node.objects.create(
        cluster=cluster, host="127.0.0.1", port=3306, password_env="GALERA_MISSING_PASSWORD"
    )
    tasks.poll_cluster(cluster.pk)
    client.force_login(viewer)

    answers = [
        client.get(url).content.decode()
        for url in (
            f"/galera/clusters/{cluster.pk}/",
            f"/api/galera/nodes/{node.pk}/",
            f"/api/galera/clusters/{cluster.pk}/",
            f"/regions/{site.pk}/",
        )
    ]

    assert all("GALERA_MISSING_PASSWORD" not in answer for answer in answers)
    assert "its environment variable is not set on the worker" in answers[1]
    assert "environment variable GALERA_MISSING_PASSWORD" in caplog.text  # for the operator


def test_a_cluster_without_nodes_is_unknown(site):
    cluster = make_cluster(site)
    assert tasks.poll_cluster(cluster.pk) == "unknown"
    cluster.refresh_from_db()
    assert cluster.reason == "no nodes configured"


def test_it_does_not_poll_a_cluster_that_is_already_being_polled(site):
    cluster = make_cluster(site)
    Cluster.objects.filter(pk=cluster.pk).update(lease_until=timezone.now() + timedelta(minutes=1))
    assert tasks.poll_cluster(cluster.pk) is None
    assert not Snapshot.objects.exists()


# --- rules that need history: fed with real-shaped rows through save_poll --------------------


def status(
    name: str,
    conf_id: str = "7",
    recv_queue: int = 0,
    size: int = 3,
    **more: str,
) -> NodeResult:
    rows = [
        ("wsrep_provider_name", "Galera"),
        ("wsrep_cluster_status", "Primary"),
        ("wsrep_cluster_size", str(size)),
        ("wsrep_incoming_addresses", "10.9.9.9:3306,10.9.9.9:3307,10.9.9.9:3308"),
        ("wsrep_cluster_conf_id", conf_id),
        ("wsrep_cluster_state_uuid", "9e9f8568-a025-11e2-0800-be0dc874ac98"),
        ("wsrep_local_state_comment", "Synced"),
        ("wsrep_ready", "ON"),
        ("wsrep_local_recv_queue", f"{recv_queue}"),
        ("wsrep_local_recv_queue_avg", "0.000000"),
        ("wsrep_local_cert_failures", "2"),
        *((f"wsrep_{key}", value) for key, value in more.items()),
    ]
    return NodeResult(name, status=WsrepStatus.from_rows(rows))


def nodes_for(cluster: Cluster, *names: str) -> None:
    for i, name in enumerate(names):
        Node.objects.create(cluster=cluster, name=name, host="10.9.9.9", port=3306 + i)


def test_it_reports_split_brain_only_when_two_polls_in_a_row_see_it(site):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    agreed = [status("a"), status("b"), status("c")]
    split = [status("a", "8"), status("b", "8"), status("c", "7")]

    assert collect.save_poll(cluster, agreed).status is Status.OK
    first = collect.save_poll(cluster, split)  # a node lags behind a view change: no page yet
    assert first.status is Status.OK
    assert first.figures["split_brain"] and not first.figures["split_brain_confirmed"]
    assert collect.save_poll(cluster, agreed).status is Status.OK
    collect.save_poll(cluster, split)
    second = collect.save_poll(cluster, split)

    assert second.status is Status.CRITICAL
    assert second.reason.startswith("possible split-brain: ")
    changes = Transition.objects.filter(object_id=cluster.pk).order_by("created", "pk")
    assert [(t.old_status, t.new_status) for t in changes] == [
        ("unknown", "ok"),
        ("ok", "critical"),
    ]


def test_it_warns_about_a_receive_queue_that_grows_from_poll_to_poll(site):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    for queue in (0, 2):
        verdict = collect.save_poll(
            cluster, [status("a"), status("b", recv_queue=queue), status("c")]
        )
        assert verdict.status is Status.OK
    verdict = collect.save_poll(cluster, [status("a"), status("b", recv_queue=5), status("c")])

    assert verdict.status is Status.WARNING
    assert verdict.reason == "b receive queue growing: 0 → 2 → 5"
    latest = cluster.snapshots.first()
    assert (latest.nodes["b"]["recv_queue"], latest.nodes["b"]["recv_queue_avg"]) == (5, 0.0)
    assert latest.nodes["b"]["cert_failures"] == 2
    assert latest.recv_queue == 5


def test_a_gap_in_the_receive_queue_history_is_not_growth(site):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    collect.save_poll(cluster, [status("a"), status("b", recv_queue=1), status("c")])
    collect.save_poll(cluster, [status("a"), NodeResult("b", error="timed out"), status("c")])
    verdict = collect.save_poll(cluster, [status("a"), status("b", recv_queue=4), status("c")])
    assert "growing" not in verdict.reason


def paused_for(ns: int, **more: str) -> list[NodeResult]:
    """Three nodes whose flow-control counter reads ``ns`` (all paused together)."""
    return [status(name, flow_control_paused_ns=str(ns), **more) for name in ("a", "b", "c")]


def test_it_judges_flow_control_between_two_polls_and_recovers_on_the_next(site):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    start = timezone.now()
    at = [start + timedelta(seconds=60 * i) for i in range(4)]
    first = collect.save_poll(cluster, paused_for(5_000_000_000), at[0])
    assert first.status is Status.OK  # one reading of the counter: nothing to judge yet
    assert cluster.snapshots.get().flow_control_paused_share is None
    # 45 of the next 60 s paused; the lifetime average reads 0.0001 on every node.
    paused = collect.save_poll(
        cluster, paused_for(50_000_000_000, flow_control_paused="0.0001"), at[1]
    )
    assert paused.status is Status.WARNING
    assert paused.reason == (
        "flow control paused replication 75% of the last 60 s (a 75%, b 75%, c 75%)"
    )
    latest = cluster.snapshots.first()
    assert latest.flow_control_paused_share == pytest.approx(0.75)
    assert latest.nodes["a"]["interval_s"] == 60.0
    cluster.refresh_from_db()
    assert cluster.flow_control_paused_share == pytest.approx(0.75)
    # Not paused since, with a lifetime average far above the threshold: ok.
    calm = collect.save_poll(cluster, paused_for(50_000_000_000, flow_control_paused="0.4"), at[2])
    assert calm.status is Status.OK, calm.reason
    assert cluster.snapshots.first().flow_control_paused == 0.4  # kept, not judged


def test_a_restarted_node_counts_its_pause_from_zero(site):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    start = timezone.now()
    collect.save_poll(cluster, paused_for(90_000_000_000), start)
    # Restarted in between: 3 s paused since its start, of the 60 s between the polls.
    verdict = collect.save_poll(cluster, paused_for(3_000_000_000), start + timedelta(seconds=60))
    assert verdict.status is Status.OK
    assert cluster.snapshots.first().flow_control_paused_share == pytest.approx(0.05)


def test_a_long_send_queue_warns_on_the_second_poll_that_sees_it(site):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    long = [status("a", local_send_queue="12"), status("b"), status("c")]
    assert collect.save_poll(cluster, long).status is Status.OK  # a burst, so far
    verdict = collect.save_poll(cluster, long)
    assert verdict.reason == "a send queue 12 write-sets, 12 at the previous poll"
    assert cluster.snapshots.first().send_queue == 12


# --- demo and dispatch ---------------------------------------------------------------------


def test_the_demo_clusters_come_from_recorded_samples_with_headroom_in_words():
    clusters = demo.set_up()
    assert demo.set_up() == clusters  # idempotent: and polled once, from the samples

    assert [c.snapshots.count() for c in clusters] == [1, 1]
    four, three = (Cluster.objects.get(pk=c.pk) for c in clusters)

    assert four.is_demo and four.region.kind == Region.Kind.SITE
    assert four.status == "ok", four.reason
    assert (four.cluster_size, four.data_nodes, four.arbitrators) == (4, 4, 0)
    assert (
        four.reason
        == "Primary, 4 data nodes Synced; can lose 2 more nodes one at a time, 1 at once"
    )
    assert three.status == "ok", three.reason
    assert (three.one_by_one, three.simultaneous) == (1, 1)


def test_dispatch_claims_each_due_cluster_once_and_polls_it_through_celery(site):
    due = make_cluster(site, name="due")
    later = make_cluster(site, name="later", next_due=timezone.now() + timedelta(hours=1))
    Node.objects.create(cluster=due, host="127.0.0.1", port=refused_port())
    now = timezone.now()

    assert Cluster.claim_due(now) == [due.pk]
    assert Cluster.claim_due(now) == []  # the compare-and-set moved next_due on

    Cluster.objects.filter(pk=due.pk).update(next_due=now)
    with eager_celery():
        assert tasks.dispatch_due(timezone.now()) == 1
    assert due.snapshots.count() == 1
    assert not later.snapshots.exists()
    assert celery_module.queue_for(tasks.poll_cluster.name, "dc1", []) == "galera"


def test_a_cluster_whose_polls_stopped_turns_unknown(site):
    cluster = make_cluster(site, next_due=timezone.now() + timedelta(days=1))
    long_ago = timezone.now() - timedelta(hours=1)
    Cluster.objects.filter(pk=cluster.pk).update(status="ok", polled_at=long_ago)

    tasks.dispatch_due(timezone.now())

    cluster.refresh_from_db()
    assert cluster.status == "unknown"
    assert cluster.reason.startswith("not polled since ")


def test_a_node_that_requires_tls_never_falls_back_to_plain_text(site):
    cluster = make_cluster(site)
    Node.objects.create(cluster=cluster, host="127.0.0.1", port=3306, user="root", tls=True)

    tasks.poll_cluster(cluster.pk)

    cluster.refresh_from_db()
    assert "(2026) SSL is required but the server doesn't support it" in cluster.reason
    assert cluster.nodes.get().state == "unreachable"


# --- a node that reports what no cluster can be ------------------------------------------------

HEALTHY_ROWS = [
    ("wsrep_provider_name", "Galera"),
    ("wsrep_cluster_status", "Primary"),
    ("wsrep_cluster_size", "3"),
    ("wsrep_incoming_addresses", "10.9.9.9:3306,10.9.9.9:3307,10.9.9.9:3308"),
    ("wsrep_cluster_conf_id", "7"),
    ("wsrep_cluster_state_uuid", "9e9f8568-a025-11e2-0800-be0dc874ac98"),
    ("wsrep_local_state_comment", "Synced"),
    ("wsrep_ready", "ON"),
    ("wsrep_flow_control_paused", "0.01"),
    ("wsrep_local_recv_queue_avg", "0.5"),
    ("wsrep_local_cert_failures", "2"),
]


def answering(name: str, **overrides: str) -> NodeResult:
    """What mysql.poll_node makes of a node's rows, with some values replaced."""
    rows = [(key, overrides.pop(key, value)) for key, value in HEALTHY_ROWS]
    rows += list(overrides.items())
    return mysql.result_from_rows(name, rows, [("wsrep_provider_options", "pc.weight = 1")])


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        (
            {"wsrep_cluster_size": "1000000000"},
            "unreadable wsrep status: row 3: wsrep_cluster_size is not a cluster size "
            "(0..256): '1000000000'",
        ),
        (
            {"wsrep_cluster_size": "100000"},  # recursed past the limit in the quorum arithmetic
            "unreadable wsrep status: row 3: wsrep_cluster_size is not a cluster size",
        ),
        (
            {"wsrep_flow_control_paused": "nan"},
            "unreadable wsrep status: row 9: wsrep_flow_control_paused is not a number: 'nan'",
        ),
        (
            {"wsrep_local_recv_queue_avg": "inf"},
            "unreadable wsrep status: row 10: wsrep_local_recv_queue_avg is not a number",
        ),
        (
            {"wsrep_local_recv_queue_avg": "1e999"},
            "unreadable wsrep status: row 10: wsrep_local_recv_queue_avg is not a queue length",
        ),
        (
            {"wsrep_local_recv_queue_avg": "-3"},
            "unreadable wsrep status: row 10: wsrep_local_recv_queue_avg is not a queue length",
        ),
        (
            {"wsrep_flow_control_paused": "7.5"},
            "unreadable wsrep status: row 9: wsrep_flow_control_paused is not a fraction",
        ),
        (
            {"wsrep_local_state_comment": "Syn\x00ced"},
            "unreadable wsrep status: row 7: wsrep_local_state_comment holds a NUL character",
        ),
        (
            {"wsrep_incoming_addresses": ",".join(["10.0.0.1:3306"] * 1000)},
            "unreadable wsrep status: row 4: wsrep_incoming_addresses lists more than 256",
        ),
        (
            {"wsrep_cluster_size": "３"},  # full-width digits: int() would take them
            "unreadable wsrep status: row 3: wsrep_cluster_size is not a number",
        ),
    ],
    ids=[
        "size-billion",
        "size-100000",
        "nan",
        "inf",
        "1e999",
        "negative",
        "fraction-over-1",
        "nul",
        "1000-addresses",
        "full-width-digits",
    ],
)
def test_a_figure_no_cluster_can_have_is_that_nodes_error_and_the_poll_is_recorded(
    site, overrides, error
):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    results = [answering("a"), answering("b", **overrides), answering("c")]

    verdict = collect.save_poll(cluster, results)

    assert results[1].error.startswith(error)
    assert verdict.status is Status.WARNING
    assert f"b unreachable: {error}" in verdict.reason
    snapshot = cluster.snapshots.get()  # recorded: PostgreSQL took it
    assert snapshot.nodes["b"]["state"] == "unreachable"
    assert snapshot.cluster_size == 3
    assert Node.objects.get(cluster=cluster, name="b").detail.startswith(error)


def test_odd_text_from_a_node_never_stops_the_poll_from_being_recorded(site):
    cluster = make_cluster(site)
    nodes_for(cluster, "a", "b", "c")
    odd = answering("b", wsrep_local_cert_failures="²", wsrep_cluster_status="Primary")
    weird_error = NodeResult("c", error="(1045) Access denied \x00 for \udcff user")

    collect.save_poll(cluster, [answering("a"), odd, weird_error])

    snapshot = cluster.snapshots.get()
    assert snapshot.nodes["b"]["cert_failures"] is None
    assert "\x00" not in Node.objects.get(cluster=cluster, name="c").detail


def test_an_absurd_weight_is_ignored_and_logged(site, caplog):
    result = mysql.result_from_rows(
        "a", HEALTHY_ROWS, [("wsrep_provider_options", "pc.weight = 99999999999999999999")]
    )
    assert result.error is None and result.options is None
    assert "pc.weight is not an integer 0..255" in caplog.text
