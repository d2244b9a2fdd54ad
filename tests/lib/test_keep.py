"""Nothing with history vanishes by accident: deletion is refused with a message (API 409, the
admin's "cannot delete" page, any other path), and what holds nothing is deleted (and audited)."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry
from django.db import transaction
from django.utils import timezone

from apps import alerts
from apps.alerts.models import Channel, Notification, Rule
from apps.galera.models import Cluster, Snapshot
from apps.lib.keep import HistoryKept, allow_deleting_history
from apps.lib.status import Status, Verdict
from apps.raid.models import Array, Host
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet():
    """An account whose region holds a cluster that changed status, routed to a channel."""
    account = Account.objects.create(name="prod")
    region = Region.objects.create(account=account, code="eu-west-1", opt_in_status="opted-in")
    cluster = Cluster.objects.create(region=region, name="db")
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    Rule.objects.filter(is_default=True).first().channels.add(channel)
    alerts.record(cluster, Verdict(Status.CRITICAL, "no Primary"))
    assert Notification.objects.filter(channel=channel, state="pending").exists()
    return account, region, cluster, channel


def test_the_api_refuses_to_delete_an_account_cluster_or_channel_with_history(
    api_client, user, fleet
):
    account, _, cluster, channel = fleet
    api_client.force_login(user)
    answers = {
        what: api_client.delete(url)
        for what, url in (
            ("account", f"/api/accounts/{account.pk}/"),
            ("cluster", f"/api/galera/clusters/{cluster.pk}/"),
            ("channel", f"/api/alerts/channels/{channel.pk}/"),
        )
    }
    assert {what: a.status_code for what, a in answers.items()} == dict.fromkeys(answers, 409)
    assert answers["account"].json() == {
        "error": "Account prod was not deleted: it holds 1 monitored subject, 1 status change, "
        "1 pending notification. To stop it, turn it off (enabled: false) instead."
    }
    assert "1 status changes" in answers["cluster"].json()["error"]
    assert (
        answers["channel"]
        .json()["error"]
        .endswith(
            "it holds 1 pending notifications. To stop it, disable it (disabled: true) instead."
        )
    )
    assert Account.objects.filter(pk=account.pk).exists() and Cluster.objects.exists()
    assert Notification.objects.filter(channel=channel).exists()
    turned_off = api_client.patch(f"/api/accounts/{account.pk}/", {"enabled": False})
    assert turned_off.status_code == 200
    assert LogEntry.objects.get_for_object(account).latest("timestamp").changes_dict == {
        "enabled": ["True", "False"]
    }


def test_what_holds_nothing_is_deleted_and_the_audit_trail_says_who(api_client, user):
    empty = Account.objects.create(name="spare")
    api_client.force_login(user)
    assert api_client.delete(f"/api/accounts/{empty.pk}/").status_code == 204
    deleted = LogEntry.objects.get(action=LogEntry.Action.DELETE, object_repr="spare")
    assert deleted.actor == user


def test_the_admin_says_why_it_cannot_delete(client, user, fleet):
    account, region, cluster, channel = fleet
    host = Host.objects.create(name="db1", region=region)
    Array.objects.create(host=host, region=region, name="md0")
    client.force_login(user)
    for url in (
        f"/admin/regions/account/{account.pk}/delete/",
        f"/admin/regions/region/{region.pk}/delete/",
        f"/admin/galera/cluster/{cluster.pk}/delete/",
        f"/admin/raid/host/{host.pk}/delete/",
        f"/admin/alerts/channel/{channel.pk}/delete/",
    ):
        page = client.post(url, {"post": "yes"})
        assert page.status_code == 200, url
        assert "was not deleted: it holds" in page.content.decode(), url
    bulk = client.post(
        "/admin/galera/cluster/",
        {"action": "delete_selected", "_selected_action": [cluster.pk], "post": "yes"},
    )
    assert "was not deleted" in bulk.content.decode()
    assert Cluster.objects.filter(pk=cluster.pk).exists()
    assert Host.objects.filter(pk=host.pk).exists() and Channel.objects.exists()


def test_no_other_path_deletes_history_either_but_code_that_means_it(fleet):
    account, region, cluster, _ = fleet
    Snapshot.objects.create(cluster=cluster, status="critical")
    with pytest.raises(HistoryKept, match="Region eu-west-1"):
        region.delete()  # a cascade from the region reaches nothing: it is refused first
    with pytest.raises(HistoryKept, match="Account prod"), transaction.atomic():
        Account.objects.filter(pk=account.pk).delete()  # a queryset: pre_delete refuses
    assert Cluster.objects.filter(pk=cluster.pk).exists()
    with allow_deleting_history():
        account.delete()
    assert not Cluster.objects.exists()


def test_the_admin_shows_history_read_only_and_never_deletes_it(client, user, fleet):
    """Deleting the status changes by hand would then let the cluster go, with no audit entry."""
    from apps.alerts.models import Incident, Transition
    from apps.probes.models import Result, Target

    _, region, cluster, _ = fleet
    target = Target.objects.create(region=region, url="https://shop.example.com/")
    result = Result.objects.create(
        target=target, cap_s=60.0, status="ok", started_at=timezone.now()
    )
    host = Host.objects.create(name="db1", region=region)
    array = Array.objects.create(host=host, region=region, name="md0")
    transition, incident = Transition.objects.get(), Incident.objects.get()
    notification = Notification.objects.get()
    rows = {
        "alerts/transition": transition,
        "alerts/incident": incident,
        "alerts/notification": notification,
        "probes/result": result,
        "raid/array": array,
    }
    client.force_login(user)  # an admin
    for path, row in rows.items():
        listed = client.get(f"/admin/{path}/")
        assert listed.status_code == 200, path
        assert 'value="delete_selected"' not in listed.content.decode(), path
        assert client.get(f"/admin/{path}/{row.pk}/change/").status_code == 200, path  # a view
        assert client.post(f"/admin/{path}/{row.pk}/delete/", {"post": "yes"}).status_code == 403
        bulk = client.post(
            f"/admin/{path}/",
            {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"},
        )
        assert bulk.status_code in (200, 302), path
        assert type(row).objects.filter(pk=row.pk).exists(), path

    refused = client.post(f"/admin/galera/cluster/{cluster.pk}/delete/", {"post": "yes"})
    assert "was not deleted: it holds" in refused.content.decode()
    assert Cluster.objects.filter(pk=cluster.pk).exists()
    assert not LogEntry.objects.filter(action=LogEntry.Action.DELETE).exists()


def test_probe_targets_and_discovered_subjects_keep_their_history_in_the_admin_and_the_api(
    client, api_client, user, fleet
):
    """Issue 26: a probe target (or an EFS file system, an EBS volume) was deleted in the admin
    with its results; now refused while it holds history, as clusters and hosts are."""
    from apps.ebs.models import Volume
    from apps.efs.models import FileSystem
    from apps.probes.models import Result, Target

    _, region, _, _ = fleet
    target = Target.objects.create(region=region, url="https://shop.example.com/")
    Result.objects.create(target=target, cap_s=60.0, status="ok", started_at=timezone.now())
    filesystem = FileSystem.objects.create(region=region, filesystem_id="fs-0123")
    alerts.record(filesystem, Verdict(Status.WARNING, "burst credits low"))
    volume = Volume.objects.create(region=region, volume_id="vol-0123")
    alerts.record(volume, Verdict(Status.CRITICAL, "I/O stalled"))
    client.force_login(user)
    for path, row, held in (
        ("probes/target", target, "1 probe results"),
        ("efs/filesystem", filesystem, "1 status changes"),
        ("ebs/volume", volume, "1 status changes"),
    ):
        page = client.post(f"/admin/{path}/{row.pk}/delete/", {"post": "yes"})
        assert page.status_code == 200, path
        assert f"was not deleted: it holds {held}" in page.content.decode(), path
        bulk = client.post(
            f"/admin/{path}/",
            {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"},
        )
        assert "was not deleted" in bulk.content.decode(), path
        assert type(row).objects.filter(pk=row.pk).exists(), path
    assert "To stop it, turn off its region (enabled: false)" in page.content.decode()

    api_client.force_login(user)
    refused = api_client.delete(f"/api/probes/targets/{target.pk}/")
    assert refused.status_code == 409
    assert refused.json()["error"] == (
        "Target https://shop.example.com/ was not deleted: it holds 1 probe results. "
        "To stop it, turn it off (enabled: false) instead."
    )
    assert Result.objects.filter(target=target).exists()
    assert not LogEntry.objects.filter(action=LogEntry.Action.DELETE).exists()

    # a target that holds nothing goes, and the audit trail says who deleted it
    spare = Target.objects.create(region=region, url="https://spare.example.com/")
    assert (
        client.post(f"/admin/probes/target/{spare.pk}/delete/", {"post": "yes"}).status_code == 302
    )
    assert not Target.objects.filter(pk=spare.pk).exists()
    deleted = LogEntry.objects.get(action=LogEntry.Action.DELETE)
    assert (deleted.object_repr, deleted.actor) == ("https://spare.example.com/", user)
