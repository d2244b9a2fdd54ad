"""The audit trail: every change of configuration, from the API, a page or the admin, with its
author, address and fields before and after; secrets masked; the workers' writes left out."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from auditlog.models import LogEntry
from django.contrib.auth.models import Group
from django.utils import timezone

from apps.accounts.models import ApiKey
from apps.alerts.models import Channel, Silence
from apps.raid.models import Host
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


def entries_for(obj) -> list[LogEntry]:
    return list(LogEntry.objects.get_for_object(obj).order_by("timestamp", "pk"))


def everything_recorded() -> str:
    return json.dumps(
        [(e.object_repr, e.changes, e.additional_data) for e in LogEntry.objects.all()]
    )


@pytest.fixture
def region():
    account = Account.objects.create(name="prod")
    return Region.objects.create(account=account, code="eu-west-1", opt_in_status="opted-in")


def test_it_records_an_api_keys_change_as_its_owners_from_the_proxys_client_address(
    api_client, user, region, settings
):
    settings.VIGIL_PROXY_COUNT = 1
    key, raw = ApiKey.issue(user, "deploy", read_only=False)
    response = api_client.patch(
        f"/api/regions/{region.pk}/",
        {"enabled": False},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        # The client's own entry first (forged), then what our one proxy saw.
        HTTP_X_FORWARDED_FOR="198.51.100.66, 203.0.113.7",
        HTTP_X_FORWARDED_PORT="1",
    )
    assert response.status_code == 200
    created, entry = entries_for(region)
    assert created.actor is None  # made outside a request: by "system"
    assert entry.actor == user and entry.action == LogEntry.Action.UPDATE
    assert entry.remote_addr == "203.0.113.7" and entry.remote_port is None
    assert entry.changes_dict == {"enabled": ["True", "False"]}
    assert entry.additional_data == {"via": f"API key {key.display_prefix}…"}


def test_it_records_a_pages_change_with_the_sessions_user(client, operator, region):
    silence = Silence.objects.create(
        region=region, ends=timezone.now() + timedelta(hours=2), author=operator
    )
    client.force_login(operator)
    assert client.post(f"/alerts/silences/{silence.pk}/expire/").status_code == 302
    created, ended = entries_for(silence)
    assert created.actor is None  # made outside a request: by "system"
    assert ended.actor == operator and ended.remote_addr == "127.0.0.1"
    assert set(ended.changes_dict) == {"ends"}


def test_it_records_an_admin_change_and_masks_the_secrets(client, user):
    account = Account.objects.create(name="prod", external_id="PLANTED-external-id-1")
    client.force_login(user)
    response = client.post(
        f"/admin/regions/account/{account.pk}/change/",
        {
            "name": "prod",
            "role_arn": "arn:aws:iam::123456789012:role/vigil-reader",
            "external_id": "PLANTED-external-id-2",
            "home_region": "us-east-1",
            "enabled": "on",
        },
    )
    assert response.status_code == 302
    entry = entries_for(account)[-1]
    assert entry.actor == user
    assert entry.changes_dict == {
        "role_arn": ["", "arn:aws:iam::123456789012:role/vigil-reader"],
        "external_id": ["(hidden)", "(hidden)"],
    }
    host = Host.objects.create(name="db1", region=Region.objects.create(code="site"))
    token = host.issue_token()
    _, raw_key = ApiKey.issue(user, "script", read_only=True)
    user.set_password("PLANTED-user-password")
    user.save()
    recorded = everything_recorded()
    for secret in ("PLANTED-external-id", token, host.token_hash, raw_key, "PLANTED-user-pass"):
        assert secret not in recorded
    assert entries_for(host)[-1].changes_dict == {
        "token_lookup": ["None", host.token_lookup],
        "token_hash": ["", "(hidden)"],
    }


def test_it_records_role_changes_of_users(client, user, viewer):
    client.force_login(user)
    viewer.groups.add(Group.objects.get(name="Operator"))
    (entry,) = [e for e in entries_for(viewer) if "groups" in e.changes_dict]
    assert entry.changes_dict["groups"]["objects"] == ["Operator"]


def test_it_leaves_out_what_workers_write(region):
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    channel.last_error = "SES refused"
    channel.save()
    from apps.galera.models import Cluster

    cluster = Cluster.objects.create(region=region, name="prod")
    cluster.status, cluster.reason, cluster.cluster_size = "critical", "no Primary", 2
    cluster.save()
    assert [e.action for e in entries_for(channel)] == [LogEntry.Action.CREATE]
    assert [e.action for e in entries_for(cluster)] == [LogEntry.Action.CREATE]


def test_the_audit_page_and_list_are_for_admins(client, api_client, user, operator, region):
    client.force_login(user)
    region.enabled = False
    region.save()
    page = client.get("/accounts/audit/?model=regions.region")
    chooser = page.content.decode()
    # Who and what kind are chosen from lists, by the names the pages use.
    assert 'value="regions.region" selected>Region (Accounts and regions)</option>' in chooser
    assert 'value="probes.target">Target (HTTP keep-alive probes)</option>' in chooser
    assert f'value="{user.username}">{user.username}</option>' in chooser
    assert page.status_code == 200 and "eu-west-1" in page.content.decode()
    api_client.force_login(user)
    listed = api_client.get("/api/audit/?model=regions.region").json()["results"]
    assert listed[0]["changes"] == {"enabled": ["True", "False"]}
    assert listed[0]["action"] == "update" and listed[0]["model"] == "regions.region"
    client.force_login(operator)
    assert client.get("/accounts/audit/").status_code == 403
    assert 'href="/accounts/audit/"' not in client.get("/").content.decode()
    api_client.force_login(operator)
    refused = api_client.get("/api/audit/")
    assert refused.status_code == 403
    assert refused.json() == {
        "error": "Your role (operator) may not read this: it needs auditlog.view_logentry"
    }


def test_only_admins_point_a_raid_host_elsewhere_and_the_trail_shows_who(
    client, user, operator, region
):
    host = Host.objects.create(
        name="db1", region=region, collection="ssh", ssh_address="10.0.0.5", ssh_user="vigil"
    )
    form = {
        "name": "db1", "region": region.pk, "collection": "ssh", "enabled": "on",
        "interval_s": 300, "ssh_address": "10.0.0.99", "ssh_port": 22, "ssh_user": "root",
        "known_hosts": "", "domain_rules": "{}", "domain_noun": "failure domain",
    }  # fmt: skip
    client.force_login(operator)
    assert client.post(f"/admin/raid/host/{host.pk}/change/", form).status_code == 403
    client.force_login(user)
    assert client.post(f"/admin/raid/host/{host.pk}/change/", form).status_code == 302
    entry = entries_for(host)[-1]
    assert entry.actor == user
    assert entry.changes_dict == {
        "ssh_address": ["10.0.0.5", "10.0.0.99"],
        "ssh_user": ["vigil", "root"],
    }


def test_a_new_object_s_entry_lists_its_own_fields_not_its_relations(user):
    created = entries_for(user)[0]
    assert created.action == LogEntry.Action.CREATE
    assert "api_keys" not in created.changes_dict  # was "accounts.ApiKey.None"
    assert not any(".None" in str(change) for change in created.changes_dict.values())
    account = Account.objects.create(name="prod")
    assert set(entries_for(account)[0].changes_dict) <= {
        f.name for f in Account._meta.concrete_fields
    }


def test_saving_a_user_in_the_admin_records_only_what_a_person_changed(client, user, viewer):
    client.force_login(user)
    page = client.get(f"/admin/auth/user/{viewer.pk}/change/").content.decode()
    assert "date_joined" in page  # the admin shows it to the second, and saves it so
    joined = timezone.localtime(viewer.date_joined)
    response = client.post(
        f"/admin/auth/user/{viewer.pk}/change/",
        {
            "username": "viewer",
            "email": "viewer@example.org",
            "is_active": "on",
            "date_joined_0": joined.strftime("%Y-%m-%d"),
            "date_joined_1": joined.strftime("%H:%M:%S"),
            "initial-date_joined_0": joined.strftime("%Y-%m-%d"),
            "initial-date_joined_1": joined.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert entries_for(viewer)[-1].changes_dict == {
        "email": ["viewer@example.com", "viewer@example.org"]
    }


def test_setting_the_demo_up_again_at_a_restart_records_nothing(settings):
    from apps.probes import demo
    from apps.regions.demo import ensure_demo_account

    ensure_demo_account(True)
    demo.set_up(base_port=41000)
    before = LogEntry.objects.count()
    demo.set_up(base_port=41000)  # the next start: 15 where the database holds 15.0
    assert LogEntry.objects.count() == before
