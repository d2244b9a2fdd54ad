"""POST /api/galera/nodes/<id>/report with a node's own token, the judging of pushed reports
(and of their absence), the token page and the agent's download. Reports are real published
``SHOW STATUS`` texts from shared/fixtures; the real cluster is in test_push.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.galera import tasks
from apps.galera.models import Cluster, Node
from apps.regions.models import Region
from tests.helpers import SHARED_FIXTURES

pytestmark = pytest.mark.django_db

SYNCED = (SHARED_FIXTURES / "wsrep" / "deimosfr-4node-synced-primary.txt").read_text()


@pytest.fixture
def cluster() -> Cluster:
    site = Region.objects.create(code="dc-2", name="Data centre 2", kind=Region.Kind.SITE)
    return Cluster.objects.create(region=site, name="pushed", expected_data_nodes=1)


@pytest.fixture
def node(cluster: Cluster) -> Node:
    return Node.objects.create(
        cluster=cluster, name="db1", host="127.0.0.11", port=3306, mode=Node.Mode.PUSH
    )


def push(api_client, node: Node, token: str, body, content_type: str = "text/plain"):
    url = f"/api/galera/nodes/{node.pk}/report"
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if content_type == "json":
        return api_client.post(url, body, format="json", **auth)
    return api_client.post(url, body, content_type=content_type, **auth)


def test_a_node_pushes_its_status_with_its_own_token(api_client, node):
    response = push(api_client, node, node.issue_token(), SYNCED)
    assert response.status_code == 200, response.content
    assert response.json() == {
        "node": node.pk,
        "cluster": node.cluster_id,
        "state": "primary",
        "detail": "Synced",
    }
    node.refresh_from_db()
    assert node.report_status == SYNCED
    assert node.reported_at is not None
    assert (node.state, node.detail) == ("primary", "Synced")


def test_the_cluster_is_judged_from_the_report_without_a_connection(api_client, node, cluster):
    options = "base_port = 4567; pc.weight = 2; evs.suspect_timeout = PT3S"
    body = {"status": SYNCED, "provider_options": options}
    assert push(api_client, node, node.issue_token(), body, "json").status_code == 200
    assert tasks.poll_cluster(cluster.pk) == "ok"  # 127.0.0.11 is never connected to
    cluster.refresh_from_db()
    assert cluster.suspect_timeout_s == 3.0
    assert cluster.snapshots.get().nodes["db1"]["weight"] == 2


def test_a_pushing_node_that_stops_reporting_turns_unknown(api_client, node, cluster, settings):
    settings.VIGIL_GALERA_PUSH_STALE_MINUTES = 5
    assert tasks.poll_cluster(cluster.pk) == "unknown"  # nothing pushed yet
    assert "db1: no report received yet" in Cluster.objects.get(pk=cluster.pk).reason
    push(api_client, node, node.issue_token(), SYNCED)
    assert tasks.poll_cluster(cluster.pk) == "ok"
    Node.objects.filter(pk=node.pk).update(reported_at=timezone.now() - timedelta(minutes=6))
    assert tasks.poll_cluster(cluster.pk) == "unknown"
    cluster.refresh_from_db()
    assert "db1: no report since" in cluster.reason
    assert cluster.nodes.get().state == "silent"


def test_a_mixed_cluster_warns_about_its_silent_pushing_node(cluster, node):
    # A polled node that answers (a recorded sample stands in for its poll) and a silent push.
    Node.objects.create(
        cluster=cluster,
        name="db2",
        host="127.0.0.12",
        recorded_sample="deimosfr-4node-synced-primary.txt",
    )
    assert tasks.poll_cluster(cluster.pk) == "warning"
    assert "db1 unknown: no report received yet" in Cluster.objects.get(pk=cluster.pk).reason


def test_it_refuses_an_unreadable_report_and_keeps_nothing(api_client, node):
    response = push(api_client, node, node.issue_token(), "wsrep_cluster_size\t9999\n")
    assert response.status_code == 400
    assert response.json()["error"].startswith(
        "unreadable wsrep status: line 1: wsrep_cluster_size"
    )
    node.refresh_from_db()
    assert (node.report_status, node.reported_at) == ("", None)


RECORDED = SHARED_FIXTURES / "wsrep" / "readings" / "mariadb-10.11-delayed-node1.txt"


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ("wsrep_evs_delayed\tnode3:tcp://10.0.0.3:4567:1", "does not start with a UUID"),
        ("wsrep_evs_evict_list\t" + "x," * 300, "lists more than 256 members"),
        ("wsrep_local_recv_queue\t99999999999", "is not a queue length"),
        ("wsrep_flow_control_paused_ns\t-1", "is not a count of nanoseconds"),
    ],
)
def test_it_refuses_a_report_whose_new_readings_no_node_can_have(api_client, node, row, error):
    # The agent's own text (recorded on the test cluster), with one row no node can send.
    text = RECORDED.read_text() + row + "\n"
    response = push(api_client, node, node.issue_token(), text)
    assert response.status_code == 400
    assert response.json()["error"].startswith("unreadable wsrep status: line 75: wsrep_")
    assert error in response.json()["error"]
    node.refresh_from_db()
    assert node.reported_at is None


@pytest.mark.parametrize(
    ("body", "content_type", "error"),
    [
        ({"status": ""}, "json", "'status' must be the text"),
        ({"status": SYNCED, "provider_options": 3}, "json", "'provider_options' must be"),
        (["status"], "json", "Send a JSON object"),
    ],
)
def test_it_refuses_a_report_of_the_wrong_shape(api_client, node, body, content_type, error):
    response = push(api_client, node, node.issue_token(), body, content_type)
    assert response.status_code == 400
    assert error in response.json()["error"]


def test_it_refuses_a_body_over_the_limit_before_reading_it(api_client, node, settings):
    settings.VIGIL_PUSH_MAX_BYTES = 1024
    response = push(api_client, node, node.issue_token(), SYNCED)
    assert response.status_code == 413


def test_a_token_pushes_only_for_its_own_node(api_client, node, cluster):
    other = Node.objects.create(cluster=cluster, name="db2", host="127.0.0.12", mode=Node.Mode.PUSH)
    response = push(api_client, node, other.issue_token(), SYNCED)
    assert response.status_code == 403
    assert response.json() == {"error": "This token belongs to another node"}


def test_a_replaced_or_made_up_token_is_refused(api_client, node):
    old = node.issue_token()
    node.issue_token()
    assert push(api_client, node, old, SYNCED).status_code == 401
    assert push(api_client, node, "vgn_00000000nothing", SYNCED).status_code == 401


def test_a_polled_node_or_a_disabled_cluster_takes_no_push(api_client, node, cluster):
    token = node.issue_token()
    Cluster.objects.filter(pk=cluster.pk).update(enabled=False)
    assert push(api_client, node, token, SYNCED).status_code == 409
    Cluster.objects.filter(pk=cluster.pk).update(enabled=True)
    Node.objects.filter(pk=node.pk).update(mode=Node.Mode.POLL)
    response = push(api_client, node, token, SYNCED)
    assert response.status_code == 409
    assert response.json() == {"error": "Node db1 is polled; set its mode to push"}


def test_an_admins_read_write_key_may_push_and_a_read_only_key_may_not(api_client, node, api_key):
    assert push(api_client, node, api_key(read_only=False), SYNCED).status_code == 200
    assert push(api_client, node, api_key(read_only=True), SYNCED).status_code == 403


def test_the_api_shows_the_mode_and_only_a_hint_of_the_token(api_client, node, api_key):
    token = node.issue_token()
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key()}")
    shown = api_client.get(f"/api/galera/nodes/{node.pk}/").json()
    assert shown["mode"] == "push"
    assert shown["token"] == token[:12] + "…"
    assert token not in str(shown)


def test_the_cluster_page_issues_a_token_once_with_the_agents_settings(
    logged_in_client, node, cluster, settings
):
    settings.VIGIL_BASE_URL = "https://vigil.example.com"
    page = logged_in_client.post(f"/galera/nodes/{node.pk}/token").content.decode()
    token = page.split('<code class="secret">')[1].split("</code>")[0]
    node.refresh_from_db()
    assert node.token_matches(token)
    assert f"VIGIL_URL=https://vigil.example.com\nVIGIL_TOKEN={token}\nVIGIL_NODE={node.pk}" in page
    again = logged_in_client.get(f"/galera/clusters/{cluster.pk}/").content.decode()
    assert token not in again
    assert node.token_hint in again
    assert f"/galera/nodes/{node.pk}/agent/vigil-galera-push.timer" in again


def test_only_an_admin_issues_node_tokens(client, operator, node):
    client.force_login(operator)
    assert client.post(f"/galera/nodes/{node.pk}/token").status_code == 403
    node.refresh_from_db()
    assert node.token_hint == ""


def test_the_agent_comes_with_vigils_url_and_the_nodes_id_filled_in(client, viewer, node, settings):
    settings.VIGIL_BASE_URL = "https://vigil.example.com/x y"
    client.force_login(viewer)
    script = client.get(f"/galera/nodes/{node.pk}/agent/vigil-galera-push")
    assert script.status_code == 200
    text = script.content.decode()
    assert "VIGIL_URL=${VIGIL_URL:-'https://vigil.example.com/x y'}\n" in text
    assert f"VIGIL_NODE=${{VIGIL_NODE:-{node.pk}}}\n" in text
    timer = client.get(f"/galera/nodes/{node.pk}/agent/vigil-galera-push.timer")
    assert b"OnUnitActiveSec=1min" in timer.content
    assert client.get(f"/galera/nodes/{node.pk}/agent/..%2Fmanage.py").status_code == 404
    assert client.get(f"/galera/nodes/{node.pk}/agent/vigil-raid-push").status_code == 404
