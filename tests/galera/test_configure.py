"""Galera clusters and nodes added in the app by an admin."""

from __future__ import annotations

import pytest

from apps.galera.models import Cluster, Node
from apps.regions.models import Region

pytestmark = pytest.mark.django_db


def test_an_admin_adds_a_cluster_then_its_node(logged_in_client):
    site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    answer = logged_in_client.post(
        "/galera/clusters/new/",
        {
            "name": "prod-db",
            "region": site.pk,
            "expected_data_nodes": 3,
            "expected_arbitrators": 0,
            "interval_s": 60,
            "enabled": "on",
        },
    )
    cluster = Cluster.objects.get(name="prod-db")
    assert answer["Location"] == f"/galera/clusters/{cluster.pk}/nodes/new/"
    live = logged_in_client.post(
        f"/galera/clusters/{cluster.pk}/nodes/new/",
        {"host": "169.254.169.254", "port": 3306, "user": "vigil_monitor", "_check": "1"},
        headers={"HX-Request": "true", "HX-Trigger-Name": "host"},
    )
    assert "id_host-live-errors" in live.content.decode()
    assert "<p>" in live.content.decode().split("id_host-live-errors", 1)[1].split("</div>")[0]
    saved = logged_in_client.post(
        f"/galera/clusters/{cluster.pk}/nodes/new/",
        {
            "host": "db1.example.com",
            "port": 3306,
            "user": "vigil_monitor",
            "mode": "poll",
            "tls_verify": "on",
        },
    )
    assert saved["Location"] == f"/galera/clusters/{cluster.pk}/edit/"
    assert Node.objects.get(cluster=cluster).host == "db1.example.com"
    page = logged_in_client.get(f"/galera/clusters/{cluster.pk}/edit/").content.decode()
    assert "db1.example.com" in page


def test_a_viewer_may_not_add_a_cluster(client, viewer):
    client.force_login(viewer)
    assert client.get("/galera/clusters/new/").status_code == 403
