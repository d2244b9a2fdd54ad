"""A stopped node's push (grastate.dat and its recovered position) and
GET /api/galera/clusters/<id>/recovery/: the advice from what the nodes last said."""

from __future__ import annotations

import pytest

from apps.galera import tasks
from apps.galera.models import Cluster, Node, Snapshot
from apps.galera.recovery import BOOTSTRAP_CLEAN, FIND_POSITION, PC_BOOTSTRAP, SET_SAFE, START
from tests.helpers import bearer

pytestmark = pytest.mark.django_db

UUID = "b9f2a2b4-ffde-11ef-bcd1-a3710702a9fb"


def grastate(seqno: int, safe: int = 0, recovered: int | None = None) -> str:
    text = f"# GALERA saved state\nversion: 2.1\nuuid: {UUID}\nseqno: {seqno}\n"
    text += f"safe_to_bootstrap: {safe}\n"
    if recovered is not None:
        text += "vigil_recovered_by: galera_recovery\n"
        text += f"vigil_recovered: --wsrep_start_position={UUID}:{recovered}\n"
    return text


@pytest.fixture
def cluster(site) -> Cluster:
    cluster = Cluster.objects.create(region=site, name="prod-db", expected_data_nodes=3)
    for i in (1, 2, 3):
        Node.objects.create(
            cluster=cluster, name=f"db{i}", host=f"127.0.0.{20 + i}", mode=Node.Mode.PUSH
        )
    return cluster


def push(api_client, node: Node, body, content_type: str = "text/plain"):
    url = f"/api/galera/nodes/{node.pk}/report"
    auth = bearer(node.issue_token())
    if content_type == "json":
        return api_client.post(url, body, format="json", **auth)
    return api_client.post(url, body, content_type=content_type, **auth)


def advice(api_client, api_key, cluster: Cluster) -> dict:
    response = api_client.get(f"/api/galera/clusters/{cluster.pk}/recovery/", **bearer(api_key()))
    assert response.status_code == 200, response.content
    return response.json()


def test_a_stopped_node_pushes_its_grastate_and_the_cluster_sees_it_stopped(api_client, cluster):
    db1 = cluster.nodes.get(name="db1")
    response = push(api_client, db1, grastate(-1, recovered=41))
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "stopped"
    db1.refresh_from_db()
    assert db1.grastate["recovered_seqno"] == 41
    assert db1.report_status == ""
    tasks.poll_cluster(cluster.pk)
    cluster.refresh_from_db()
    assert "mysqld is not running; grastate.dat seqno -1; recovered position 41" in (cluster.reason)


def test_an_unreadable_grastate_is_refused_and_changes_nothing(api_client, cluster):
    db1 = cluster.nodes.get(name="db1")
    response = push(api_client, db1, grastate(5) + "password: hunter2\n")
    assert response.status_code == 400
    assert "unreadable grastate.dat" in response.json()["error"]
    assert "hunter2" not in response.content.decode()
    refused = push(api_client, db1, {"grastate": "uuid: x"}, "json")
    assert refused.status_code == 400
    db1.refresh_from_db()
    assert (db1.grastate, db1.reported_at) == ({}, None)


def test_every_node_stopped_after_a_crash_names_the_most_advanced(api_client, api_key, cluster):
    for name, recovered in (("db1", 40), ("db2", 42), ("db3", 41)):
        node = cluster.nodes.get(name=name)
        assert push(api_client, node, {"grastate": grastate(-1, recovered=recovered)}, "json")
    data = advice(api_client, api_key, cluster)
    assert (data["situation"], data["chosen"]) == ("all_stopped", "db2")
    assert [(s["node"], s["command"]) for s in data["steps"]] == [
        ("db2", SET_SAFE),
        ("db2", BOOTSTRAP_CLEAN),
        ("db1", START),
        ("db3", START),
    ]
    assert data["nodes"][1] == {
        "node": "db2",
        "running": False,
        "position": 42,
        "source": "galera_recovery",
        "safe_to_bootstrap": False,
        "uuid": UUID,
        "mode": "push",
    }


def test_it_waits_for_a_node_that_has_not_said_where_it_stands(api_client, api_key, cluster):
    push(api_client, cluster.nodes.get(name="db1"), grastate(10, safe=1))
    push(api_client, cluster.nodes.get(name="db2"), grastate(-1))
    Node.objects.filter(name="db3").update(mode=Node.Mode.POLL)
    data = advice(api_client, api_key, cluster)
    assert data["situation"] == "waiting"
    assert data["waiting_for"] == ["db2", "db3"]
    assert {s["command"] for s in data["steps"]} == {FIND_POSITION}
    assert data["chosen"] is None


def test_a_partition_promotes_the_survivor(api_client, api_key, cluster):
    push(api_client, cluster.nodes.get(name="db1"), grastate(50))
    push(api_client, cluster.nodes.get(name="db2"), grastate(50))
    Snapshot.objects.create(
        cluster=cluster,
        status="critical",
        nodes={
            "db3": {
                "state": "non-primary",
                "last_committed": 50,
                "cluster_size": 2,
                "incoming_addresses": ["127.0.0.23:3306"],
                "local_state_uuid": UUID,
            }
        },
    )
    data = advice(api_client, api_key, cluster)
    assert (data["situation"], data["chosen"]) == ("partition", "db3")
    assert data["steps"][0] == {
        "node": "db3",
        "command": PC_BOOTSTRAP,
        "why": data["steps"][0]["why"],
    }
    assert data["loses"].startswith("Nothing committed")


def test_the_advice_needs_a_key_or_a_session(api_client, client, viewer, cluster):
    url = f"/api/galera/clusters/{cluster.pk}/recovery/"
    assert api_client.get(url).status_code in (401, 403)
    client.force_login(viewer)
    assert client.get(url).status_code == 200
    assert api_client.get("/api/galera/clusters/999999/recovery/").status_code in (401, 403)


def test_the_quorum_loss_email_and_the_page_say_what_to_do(api_client, cluster, logged_in_client):
    from django.core import mail

    from apps.alerts import delivery
    from apps.alerts.models import Channel, Rule

    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
    rule.channels.add(channel)
    for name, seqno, safe in (("db1", 30, 0), ("db2", 31, 1), ("db3", 29, 0)):
        push(api_client, cluster.nodes.get(name=name), grastate(seqno, safe=safe))
    assert tasks.poll_cluster(cluster.pk) == "critical"
    delivery.send_due()
    (message,) = mail.outbox
    assert "recovery: Every node is stopped: bootstrap db2 (seqno 31)" in message.body
    assert f"recovery steps: db2: {BOOTSTRAP_CLEAN}, db1: {START}, db3: {START}" in message.body
    page = logged_in_client.get(cluster.get_absolute_url()).content.decode()
    assert "Recovery advice" in page
    assert f"<code>{BOOTSTRAP_CLEAN}</code>" in page
    assert "never starts, stops or bootstraps a node" in page
