"""Roles: groups made by the migration, what each may do, and keys that never outrank their owner."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

from apps.accounts.models import ApiKey
from apps.accounts.roles import (
    ADMIN,
    OPERATOR,
    OPERATOR_PERMISSIONS,
    VIEWER,
    can_use_admin_site,
    role_of,
)
from apps.galera.models import Cluster, Node
from apps.regions.models import Account, Region
from tests.helpers import bearer, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def region():
    account = Account.objects.create(name="prod")
    return Region.objects.create(account=account, code="eu-west-1", opt_in_status="opted-in")


def test_the_migration_makes_the_three_groups_with_the_operators_permissions():
    assert set(Group.objects.values_list("name", flat=True)) >= {"Viewer", "Operator", "Admin"}
    operator = Group.objects.get(name="Operator").permissions.all()
    given = {f"{p.content_type.app_label}.{p.codename}" for p in operator}
    assert given == set(OPERATOR_PERMISSIONS)
    assert not Group.objects.get(name="Viewer").permissions.exists()
    assert not Group.objects.get(name="Admin").permissions.exists()  # the backend gives all


@pytest.mark.django_db(transaction=True)
def test_the_groups_and_the_operators_permissions_come_back_after_a_flush():
    """A flush (every transactional test ends with one) empties the tables; ``post_migrate``
    makes the groups again, or the next test's first sign-in through a provider found no group."""
    from django.core.management import call_command

    call_command("flush", "--no-input", verbosity=0)
    assert set(Group.objects.values_list("name", flat=True)) == {"Viewer", "Operator", "Admin"}
    operator = Group.objects.get(name="Operator").permissions.all()
    assert {f"{p.content_type.app_label}.{p.codename}" for p in operator} == set(
        OPERATOR_PERMISSIONS
    )


def test_it_names_each_users_role(django_user_model, viewer, operator, user):
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    root = django_user_model.objects.create_superuser("root")
    in_viewer_group = make_user(django_user_model, "reader", VIEWER)
    assert [role_of(u) for u in (viewer, in_viewer_group, staff, operator, user, root)] == [
        VIEWER, VIEWER, VIEWER, OPERATOR, ADMIN, ADMIN,
    ]  # fmt: skip
    assert [can_use_admin_site(u) for u in (viewer, staff, operator, user)] == [
        False, True, True, True,
    ]  # fmt: skip
    user.is_active = False
    assert role_of(user) == VIEWER and not user.has_perm("regions.add_account")


def test_admins_hold_every_permission_even_of_models_added_later(user, operator):
    later = Permission.objects.create(
        codename="launch_rocket",
        name="Can launch a rocket",
        content_type=ContentType.objects.get_or_create(app_label="later", model="rocket")[0],
    )
    assert user.has_perm("later.launch_rocket") and user.has_module_perms("later")
    assert "later.launch_rocket" in user.get_all_permissions()
    assert not operator.has_perm(f"later.{later.codename}")
    assert operator.has_perm("probes.add_target") and not operator.has_perm("regions.add_account")


def test_a_staff_flag_alone_opens_an_empty_admin(client, django_user_model):
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    client.force_login(staff)
    index = client.get("/admin/")
    assert index.status_code == 200
    assert "You don’t have permission to view or edit anything" in index.content.decode()
    assert client.get("/admin/regions/account/add/").status_code == 403


def test_an_operator_opens_the_admin_for_silences_and_targets_only(client, operator):
    client.force_login(operator)
    page = client.get("/admin/").content.decode()
    assert "/admin/probes/target/" in page and "/admin/alerts/silence/" in page
    assert "/admin/regions/account/" not in page and "/admin/auth/user/" not in page
    assert client.get("/admin/probes/target/add/").status_code == 200
    assert client.get("/admin/galera/cluster/add/").status_code == 403


def test_the_scenarios_of_the_issue_are_refused_to_a_plain_user_with_clear_messages(
    api_client, django_user_model, viewer, region
):
    """A user with no group and no staff flag tried everything, and got 2xx answers."""
    cluster = Cluster.objects.create(region=region, name="prod")
    node = Node.objects.create(cluster=cluster, host="10.0.0.5", password_env="GALERA_PROD")
    api_client.force_login(viewer)
    tries = {
        "regions.add_account": api_client.post("/api/accounts/", {"name": "mine"}),
        "galera.change_node": api_client.patch(
            f"/api/galera/nodes/{node.pk}/", {"host": "203.0.113.9"}
        ),
        "probes.add_target": api_client.post("/api/probes/targets/", {"url": "http://x/"}),
        "regions.change_region": api_client.patch(f"/api/regions/{region.pk}/", {"enabled": False}),
    }
    for needed, response in tries.items():
        assert response.status_code == 403, needed
        assert response.json() == {
            "error": f"Your role (viewer) may not do this: it needs {needed}"
        }
    minted = api_client.post("/api/keys/", {"name": "rw", "read_only": False}, format="json")
    assert minted.status_code == 403
    assert "A viewer's keys are read-only" in minted.json()["error"]
    assert not ApiKey.objects.filter(user=viewer, read_only=False).exists()
    node.refresh_from_db()
    region.refresh_from_db()
    assert node.host == "10.0.0.5" and region.enabled and not Account.objects.filter(name="mine")


def test_it_answers_403_before_reading_the_body(api_client, viewer):
    api_client.force_login(viewer)
    response = api_client.post("/api/accounts/", "{not json", content_type="application/json")
    assert response.status_code == 403


def test_a_viewer_may_hold_read_only_keys_and_the_page_offers_nothing_else(
    client, api_client, viewer
):
    client.force_login(viewer)
    page = client.get("/accounts/keys/").content.decode()
    assert "Read-only" in page and "Read-write" not in page
    refused = client.post("/accounts/keys/", {"name": "rw", "read_only": "0"})
    assert refused.status_code == 403 and "A viewer&#x27;s keys are read-only" in (
        refused.content.decode()
    )
    assert client.post("/accounts/keys/", {"name": "ro", "read_only": "1"}).status_code == 200
    api_client.force_login(viewer)
    made = api_client.post("/api/keys/", {"name": "script"}, format="json")
    assert made.status_code == 201 and made.json()["key"].startswith("vgr_")


def test_demoting_a_user_demotes_their_keys_at_once(api_client, user, region):
    _, raw = ApiKey.issue(user, "deploy script", read_only=False)
    auth = bearer(raw)
    made = api_client.post("/api/accounts/", {"name": "first"}, format="json", **auth)
    assert made.status_code == 201
    user.groups.set([Group.objects.get(name="Operator")])
    refused = api_client.post("/api/accounts/", {"name": "second"}, format="json", **auth)
    assert refused.status_code == 403
    assert refused.json()["error"].startswith("Your role (operator) may not do this")
    made = api_client.post(
        "/api/probes/targets/",
        {"url": "https://shop.example.com/", "region": region.pk},
        format="json",
        **auth,
    )
    assert made.status_code == 201
    user.groups.clear()
    target = f"/api/probes/targets/{made.json()['id']}/"
    assert api_client.delete(target, **auth).status_code == 403
    assert api_client.get(target, **auth).status_code == 200  # still reads


def test_it_limits_the_live_keys_of_a_user(api_client, user, settings):
    settings.VIGIL_API_KEYS_PER_USER = 2
    api_client.force_login(user)
    answers = [api_client.post("/api/keys/", {"name": f"k{n}"}, format="json") for n in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 403]
    assert "VIGIL_API_KEYS_PER_USER" in answers[2].json()["error"]
    api_client.delete(f"/api/keys/{answers[0].json()['id']}/")  # revoked keys do not count
    assert api_client.post("/api/keys/", {"name": "again"}, format="json").status_code == 201


def test_pages_show_each_role_only_what_it_may_do(client, viewer, operator, user, region):
    from apps import alerts
    from apps.lib.status import Status, Verdict
    from apps.probes.models import Target

    target = Target.objects.create(region=region, url="https://shop.example.com/")
    alerts.record(target, Verdict(Status.CRITICAL, "refused"))
    seen = {}
    for who in (viewer, operator, user):
        client.force_login(who)
        seen[role_of(who)] = {
            "acknowledge": "Acknowledge</button>" in client.get("/alerts/").content.decode(),
            "disable": "Disable probing</button>"
            in client.get(f"/probes/targets/{target.pk}/").content.decode(),
            "add channel": "Add channel" in client.get("/alerts/channels/").content.decode(),
            "admin link": 'href="/admin/"' in client.get("/").content.decode(),
        }
    assert seen == {
        VIEWER: dict.fromkeys(("acknowledge", "disable", "add channel", "admin link"), False),
        OPERATOR: {"acknowledge": True, "disable": True, "add channel": False, "admin link": True},
        ADMIN: dict.fromkeys(("acknowledge", "disable", "add channel", "admin link"), True),
    }


@pytest.mark.slow  # over 1 s of CPU alone (docs/testing.md)
@pytest.mark.django_db(transaction=True)
def test_parallel_requests_cannot_pass_the_key_limit_together(user, settings):
    """Twelve requests of one user at once, each in its own thread and database connection."""
    import threading

    from django.db import connection
    from django.test import Client

    settings.VIGIL_API_KEYS_PER_USER = 3
    start = threading.Barrier(12)
    answers: list[int] = []

    def issue(n: int) -> None:
        client = Client()
        client.force_login(user)
        start.wait()
        try:
            response = client.post("/api/keys/", {"name": f"k{n}"}, content_type="application/json")
            answers.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=issue, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(answers) == [201] * 3 + [403] * 9
    assert user.api_keys.filter(revoked=None).count() == 3
