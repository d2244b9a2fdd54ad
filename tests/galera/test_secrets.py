"""The monitoring password stays where it belongs: a moved node forgets it, password files come
from a directory of their own, and a real node moved by an admin never sends it anywhere new."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry
from pymysql import _auth

from apps.galera import tasks
from apps.galera.models import Cluster, Node, PasswordUnavailable
from apps.galera.secretsdir import shares_secrets
from apps.regions.models import Region
from tests.helpers import bearer
from tests.services.galera import MONITOR_PASSWORD, MONITOR_USER, GaleraCluster
from tests.services.mysql_recorder import SALT, MysqlRecorder

pytestmark = pytest.mark.django_db


@pytest.fixture
def node(monkeypatch) -> Node:
    monkeypatch.setenv("GALERA_PROD_PASSWORD", "PLANTED-prod-password")
    site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    cluster = Cluster.objects.create(region=site, name="prod")
    return Node.objects.create(
        cluster=cluster, host="10.0.0.5", port=3306, password_env="GALERA_PROD_PASSWORD"
    )


@pytest.mark.parametrize(
    ("change", "kept"),
    [
        ({"host": "10.0.0.6"}, ("", "")),
        ({"port": 3307}, ("", "")),
        (
            {"host": "10.0.0.6", "password_env": "GALERA_PROD_PASSWORD"},
            ("GALERA_PROD_PASSWORD", ""),
        ),
        ({"name": "db1"}, ("GALERA_PROD_PASSWORD", "")),
        ({"host": "10.0.0.5"}, ("GALERA_PROD_PASSWORD", "")),
    ],
)
def test_a_moved_node_forgets_its_password_unless_the_same_request_gives_it(
    api_client, api_key, node, change, kept
):
    answer = api_client.patch(
        f"/api/galera/nodes/{node.pk}/", change, format="json", **bearer(api_key(read_only=False))
    )
    assert answer.status_code == 200
    assert answer.json()["password_source"] == ("env" if kept[0] else "none")
    node.refresh_from_db()
    assert (node.password_env, node.password_file) == kept


def test_the_admin_forgets_it_too_unless_it_is_typed_again(client, user, node):
    client.force_login(user)
    url = f"/admin/galera/cluster/{node.cluster_id}/change/"
    form = {
        "name": "prod", "region": node.cluster.region_id, "expected_data_nodes": 3,
        "expected_arbitrators": 0, "interval_s": 60, "enabled": "on",
        "next_due_0": "2026-01-01", "next_due_1": "00:00:00",
        "nodes-TOTAL_FORMS": 1, "nodes-INITIAL_FORMS": 1, "nodes-0-id": node.pk,
        "nodes-0-cluster": node.cluster_id, "nodes-0-host": "10.0.0.5", "nodes-0-port": 3306,
        "nodes-0-user": "vigil_monitor", "nodes-0-tls_verify": "on", "nodes-0-mode": "poll",
    }  # fmt: skip
    page = client.get(url).content.decode()
    assert 'placeholder="GALERA_PROD_PASSWORD"' in page
    assert client.post(url, {**form, "nodes-0-name": "db1"}).status_code == 302
    node.refresh_from_db()
    assert node.password_env == "GALERA_PROD_PASSWORD"  # left empty: kept
    moved = {**form, "nodes-0-host": "10.0.0.7", "nodes-0-password_env": "GALERA_PROD_PASSWORD"}
    assert client.post(url, moved).status_code == 302
    node.refresh_from_db()
    assert (node.host, node.password_env) == ("10.0.0.7", "GALERA_PROD_PASSWORD")
    assert client.post(url, {**form, "nodes-0-host": "10.0.0.8"}).status_code == 302
    node.refresh_from_db()
    assert (node.host, node.password_env) == ("10.0.0.8", "")


def test_it_names_what_a_password_directory_would_expose():
    env = {"VIGIL_RAID_SSH_KEY_FILE": "/run/secrets/raid_key", "SECRET_KEY_FILE": "/etc/vigil/key"}
    assert shares_secrets("/run/secrets/galera", env, "/home/vigil") == []
    assert shares_secrets("/run/secrets", env, "/home/vigil")[0] == (
        "VIGIL_RAID_SSH_KEY_FILE (/run/secrets/raid_key)"
    )
    assert "/var/run/secrets/kubernetes.io" in shares_secrets(
        "/var/run/secrets/kubernetes.io/serviceaccount", {}, "/home/vigil"
    )
    assert shares_secrets("/home/vigil", {}, "/home/vigil")[:2] == [
        "/home/vigil (everything)",
        "/home/vigil/.ssh (SSH keys)",
    ]


def test_it_refuses_password_files_from_a_directory_that_holds_other_secrets(
    api_client, api_key, node, settings, tmp_path, monkeypatch
):
    (tmp_path / "galera_prod").write_text("PLANTED-file-password\n")
    monkeypatch.setenv("VIGIL_RAID_SSH_KEY_FILE", str(tmp_path / "raid_key"))
    settings.VIGIL_GALERA_SECRETS_DIR = str(tmp_path)
    answer = api_client.patch(
        f"/api/galera/nodes/{node.pk}/",
        {"password_env": "", "password_file": "galera_prod"},
        format="json",
        **bearer(api_key(read_only=False)),
    )
    assert answer.status_code == 400
    assert "VIGIL_RAID_SSH_KEY_FILE" in str(answer.json()["fields"]["password_file"])
    Node.objects.filter(pk=node.pk).update(password_env="", password_file="galera_prod")
    node.refresh_from_db()
    with pytest.raises(PasswordUnavailable, match="password reference is not allowed") as refused:
        node.password()
    assert "Galera passwords only" in refused.value.reference  # the worker's log says why
    monkeypatch.delenv("VIGIL_RAID_SSH_KEY_FILE")
    assert node.password() == "PLANTED-file-password"


def test_a_real_node_moved_by_an_admin_never_sends_the_password_to_its_new_host(
    galera: GaleraCluster, api_client, user, monkeypatch
):
    monkeypatch.setenv("GALERA_MOVED_PASSWORD", MONITOR_PASSWORD)
    site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    cluster = Cluster.objects.create(region=site, name="moved", expected_data_nodes=1)
    node = Node.objects.create(
        cluster=cluster,
        host="127.0.0.1",
        port=galera.nodes[0].sql_port,
        user=MONITOR_USER,
        password_env="GALERA_MOVED_PASSWORD",
    )
    assert tasks.poll_cluster(cluster.pk) != "unknown"  # the password opens the real node
    node.refresh_from_db()
    assert node.state == "primary", node.detail

    recorder = MysqlRecorder()
    try:
        api_client.force_login(user)  # an admin, moving the node to a host of its choice
        moved = api_client.patch(
            f"/api/galera/nodes/{node.pk}/", {"port": recorder.port}, format="json"
        )
        assert moved.status_code == 200
        tasks.poll_cluster(cluster.pk)
    finally:
        recorder.close()
    (received,) = recorder.received
    secret = MONITOR_PASSWORD.encode()
    assert secret not in received
    assert _auth.scramble_native_password(secret, SALT) not in received
    assert MONITOR_USER.encode() in received  # it did log in there, without a password
    node.refresh_from_db()
    assert node.password_env == "" and "Access denied (recorder)" in node.detail
    entry = LogEntry.objects.get_for_object(node).latest("timestamp")
    assert entry.actor == user
    assert entry.changes_dict["password_env"] == ["GALERA_MOVED_PASSWORD", ""]
    assert entry.changes_dict["port"] == [str(galera.nodes[0].sql_port), str(recorder.port)]


def test_a_node_host_passes_the_outbound_guard_at_save_and_at_connect(
    api_client, api_key, node, hosts_entry
):
    from apps.galera.mysql import poll_node

    auth = bearer(api_key(read_only=False))
    name = hosts_entry("169.254.169.254")
    refused = api_client.patch(f"/api/galera/nodes/{node.pk}/", {"host": name}, **auth)
    assert refused.status_code == 400
    assert refused.json()["fields"]["host"] == [
        f"{name} (169.254.169.254) is refused: the instance metadata service"
    ]
    literal = api_client.patch(f"/api/galera/nodes/{node.pk}/", {"host": "fe80::1"}, **auth)
    assert literal.status_code == 400 and "link-local" in str(literal.json())
    result = poll_node(name, 3306, "vigil_monitor", "PLANTED-prod-password")
    assert result.error == f"{name} (169.254.169.254) is refused: the instance metadata service"
