"""Clusters and nodes (read-write), snapshots (read), and the password that never leaves."""

from __future__ import annotations

import pytest

from apps.galera import demo
from apps.galera.models import Cluster, Node
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def test_it_creates_a_cluster_and_a_node_without_ever_returning_the_password_reference(
    writer, site
):
    created = writer.post(
        "/api/galera/clusters/",
        {"name": "prod", "region": site.pk, "expected_data_nodes": 3, "expected_arbitrators": 1},
        format="json",
    )
    assert created.status_code == 201, created.json()
    cluster = created.json()
    assert (cluster["status"], cluster["headroom"], cluster["cluster_size"]) == (
        "unknown",
        None,
        None,
    )

    node = writer.post(
        "/api/galera/nodes/",
        {
            "cluster": cluster["id"],
            "host": "10.0.0.5",
            "user": "vigil_monitor",
            "password_env": "GALERA_PROD_PASSWORD",
            "tls": True,
            "tls_ca": "/etc/ssl/galera-ca.pem",
        },
        format="json",
    )
    assert node.status_code == 201, node.json()
    body = node.json()
    assert body["password_source"] == "env"
    assert "password_env" not in body and "password_file" not in body
    listed = writer.get(f"/api/galera/nodes/?cluster={cluster['id']}")
    assert "GALERA_PROD_PASSWORD" not in listed.content.decode()
    assert Node.objects.get().password_env == "GALERA_PROD_PASSWORD"
    assert Node.objects.get().ssl() == {
        "check_hostname": True,
        "verify_mode": True,
        "ca": "/etc/ssl/galera-ca.pem",
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"password_env": "VIGIL_GALERA_PROD_PASSWORD"}, "must start with GALERA_"),
        ({"password_env": "AWS_SECRET_ACCESS_KEY"}, "must start with GALERA_"),
        ({"password_env": "not a name"}, "is not an environment variable name"),
        ({"password_file": "/etc/shadow"}, "must be inside /run/secrets"),
        ({"password_file": "../../etc/shadow"}, "must be inside /run/secrets"),
        ({"password_env": "GALERA_A", "password_file": "galera_a"}, "not both"),
    ],
)
def test_it_refuses_an_unusable_password_reference(api_client, api_key, site, fields, message):
    cluster = Cluster.objects.create(region=site, name="prod")
    response = api_client.post(
        "/api/galera/nodes/",
        {"cluster": cluster.pk, "host": "10.0.0.5", **fields},
        format="json",
        **bearer(api_key(read_only=False)),
    )
    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_read_only_key_reads_but_cannot_write(api_client, api_key, site):
    auth = bearer(api_key())
    assert api_client.get("/api/galera/clusters/", **auth).status_code == 200
    refused = api_client.post(
        "/api/galera/clusters/", {"name": "x", "region": site.pk}, format="json", **auth
    )
    assert refused.status_code == 403


def test_it_lists_clusters_and_snapshots_filtered_by_region(api_client, api_key, site):
    Cluster.objects.create(region=site, name="elsewhere")
    clusters = demo.set_up()  # polls each demo cluster once
    region = clusters[0].region_id
    auth = bearer(api_key())

    listed = api_client.get(f"/api/galera/clusters/?region={region}", **auth).json()
    assert [c["name"] for c in listed["results"]] == [c.name for c in clusters]
    four = listed["results"][0]
    assert four["headroom"] == "can lose 2 more nodes one at a time, 1 at once"
    assert (four["one_by_one"], four["simultaneous"], four["primary"]) == (2, 1, True)

    history = api_client.get(f"/api/galera/snapshots/?region={region}", **auth).json()
    assert len(history["results"]) == 2
    snapshot = history["results"][-1]
    assert snapshot["cluster_size"] == 4
    assert snapshot["nodes"]["10.0.0.1:3306"]["local_state_comment"] == "Synced"
    one = api_client.get(f"/api/galera/snapshots/?cluster={clusters[1].pk}", **auth).json()
    assert len(one["results"]) == 1
    assert api_client.get(f"/api/galera/clusters/?region={site.pk}", **auth).json()["count"] == 1


def test_it_documents_the_galera_endpoints_in_the_schema(api_schema):
    for path in ("/api/galera/clusters/", "/api/galera/nodes/", "/api/galera/snapshots/"):
        assert path in api_schema["paths"]
