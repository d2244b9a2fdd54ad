"""The on-call set-up's pages (escalation policies, maintenance windows, dependencies): an admin
adds, edits and deletes each through the page as a browser posts it, every change lands in the
audit trail with who made it, viewers and operators read but may not change, and the forms
offer lists (concerns, regions, subjects, time zones, failure domains) rather than free text."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry
from django.contrib.contenttypes.models import ContentType

from apps.alerts.models import (
    Cause,
    Dependency,
    EscalationLevel,
    EscalationPolicy,
    MaintenanceWindow,
    Rule,
)

pytestmark = pytest.mark.django_db


def levels(*rows: tuple[str, list[int]], initial: int = 0, **more: str) -> dict[str, object]:
    """The levels formset as the page posts it: ``rows`` of (delay, channel ids)."""
    data: dict[str, object] = {
        "levels-TOTAL_FORMS": str(len(rows)),
        "levels-INITIAL_FORMS": str(initial),
        "levels-MIN_NUM_FORMS": "1",
        "levels-MAX_NUM_FORMS": "1000",
    }
    for i, (delay, channels) in enumerate(rows):
        data[f"levels-{i}-delay_minutes"] = delay
        data[f"levels-{i}-channels"] = channels
    data.update(more)
    return data


def logged(model, user) -> list[str]:
    """The audit trail's actions on ``model`` by ``user``: create, update, delete."""
    entries = LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(model), actor=user
    )
    names = {LogEntry.Action.CREATE: "create", LogEntry.Action.UPDATE: "update"}
    return [names.get(e.action, "delete") for e in entries.order_by("pk")]


def test_an_admin_builds_an_escalation_policy_of_two_levels_edits_and_deletes_it(
    logged_in_client, user, oncall, make_channel
):
    lead = make_channel("email", "lead@example.com", name="Team lead")
    page = logged_in_client.get("/alerts/escalations/new/").content.decode()
    assert 'name="levels-0-channels"' in page and "Team lead" in page
    answer = logged_in_client.post(
        "/alerts/escalations/new/",
        {"name": "Storage on call", **levels(("0", [oncall.pk]), ("30", [lead.pk]), ("0", []))},
    )
    assert answer.status_code == 302
    policy = EscalationPolicy.objects.get()
    assert [
        (lv.delay_minutes, [c.name for c in lv.channels.all()]) for lv in policy.levels.all()
    ] == [
        (0, ["On call"]),
        (30, ["Team lead"]),
    ]
    listed = logged_in_client.get("/alerts/escalations/").content.decode()
    assert "Storage on call" in listed and "after 30 min" in listed and "Team lead" in listed

    first, second = policy.levels.all()
    logged_in_client.post(
        f"/alerts/escalations/{policy.pk}/",
        {
            "name": "Storage",
            **levels(("0", [oncall.pk]), ("45", [lead.pk]), initial=2),
            "levels-0-id": first.pk,
            "levels-1-id": second.pk,
            "levels-1-DELETE": "on",
        },
    )
    policy.refresh_from_db()
    assert policy.name == "Storage" and policy.levels.count() == 1
    assert logged(EscalationPolicy, user) == ["create", "update"]
    trail = logged(EscalationLevel, user)  # the channels' m2m changes are updates
    assert trail.count("create") == 2 and trail.count("delete") == 1

    logged_in_client.post(f"/alerts/escalations/{policy.pk}/delete/")
    assert not EscalationPolicy.objects.exists()
    assert logged(EscalationPolicy, user)[-1] == "delete"


def test_a_level_without_a_channel_and_a_policy_in_use_are_refused_with_reasons(
    logged_in_client, oncall
):
    answer = logged_in_client.post(
        "/alerts/escalations/new/", {"name": "Empty", **levels(("10", []))}
    )
    assert answer.status_code == 400 and "this level tells nobody" in answer.content.decode()
    assert not EscalationPolicy.objects.exists()
    policy = EscalationPolicy.objects.create(name="Used")
    Rule.objects.filter(is_default=True).update(escalation=policy)
    answer = logged_in_client.post(f"/alerts/escalations/{policy.pk}/delete/", follow=True)
    assert "still used by Default" in answer.content.decode()
    assert EscalationPolicy.objects.filter(pk=policy.pk).exists()


def test_an_admin_adds_a_weekly_window_from_lists_edits_and_deletes_it(
    logged_in_client, user, region, gadget
):
    Cause.objects.create(
        key="raid/3/domain/storage-b", label="storage server storage-b", region=region,
        concern="gadgets", status="critical",
    )  # fmt: skip
    page = logged_in_client.get("/alerts/windows/new/").content.decode()
    # lists, not free text: concerns, regions, weekdays, zones, failure domains seen
    assert '<select name="concern"' in page and '<select name="time_zone"' in page
    assert 'value="Europe/Berlin"' in page and 'type="checkbox" name="days"' in page
    assert "storage server storage-b (raid/3/domain/storage-b)" in page
    subject = f"{ContentType.objects.get_for_model(gadget).pk}:{gadget.pk}"
    form = {
        "name": "Weekly RAID check", "region": region.pk, "concern": "gadgets",
        "subject": subject, "cause_key": "", "days": ["6"], "start": "02:00",
        "minutes": "120", "time_zone": "Europe/Berlin", "enabled": "on", "comment": "mdadm check",
    }  # fmt: skip
    assert logged_in_client.post("/alerts/windows/new/", form).status_code == 302
    window = MaintenanceWindow.objects.get()
    assert (window.days, window.object_id, window.author) == ([6], gadget.pk, user)
    listed = logged_in_client.get("/alerts/windows/").content.decode()
    assert "Sun at 02:00 for 120 min (Europe/Berlin)" in listed and "gadget g1" in listed

    bad = {**form, "time_zone": "Mars/Olympus", "days": [], "minutes": "0"}
    answer = logged_in_client.post(f"/alerts/windows/{window.pk}/", bad)
    text = answer.content.decode()
    assert answer.status_code == 400
    assert "Select a valid choice" in text
    answer = logged_in_client.post(f"/alerts/windows/{window.pk}/", {**form, "days": []})
    assert answer.status_code == 400 and "or a cron rule" in answer.content.decode()
    logged_in_client.post(f"/alerts/windows/{window.pk}/", {**form, "days": ["0", "3"]})
    window.refresh_from_db()
    assert window.days == [0, 3]
    logged_in_client.post(f"/alerts/windows/{window.pk}/delete/")
    assert not MaintenanceWindow.objects.exists()
    assert logged(MaintenanceWindow, user) == ["create", "update", "delete"]


def test_an_admin_declares_a_dependency_from_two_lists_and_deletes_it(
    logged_in_client, user, make_gadgets
):
    site, cluster = make_gadgets(2)
    kind = ContentType.objects.get_for_model(site).pk
    page = logged_in_client.get("/alerts/dependencies/new/").content.decode()
    assert '<select name="subject"' in page and '<select name="upstream"' in page
    assert "?field=upstream" in page
    search = logged_in_client.get(
        "/alerts/subjects/", {"field": "upstream", "upstream_search": "g01"}
    ).content.decode()
    assert 'name="upstream"' in search and "g01" in search and "g00" not in search
    # both ends are required: the narrowed list asks for one, it offers no "Any subject"
    assert "Choose a subject" in search and "Any subject" not in search
    assert "Choose a subject" in page and "Any subject" not in page
    rule_search = logged_in_client.get("/alerts/subjects/", {"subject_search": "g01"})
    assert "Any subject" in rule_search.content.decode()

    own = logged_in_client.post(
        "/alerts/dependencies/new/",
        {"subject": f"{kind}:{site.pk}", "upstream": f"{kind}:{site.pk}"},
    )
    assert own.status_code == 400 and "cannot depend on itself" in own.content.decode()
    form = {"subject": f"{kind}:{site.pk}", "upstream": f"{kind}:{cluster.pk}", "comment": "VIP"}
    assert logged_in_client.post("/alerts/dependencies/new/", form).status_code == 302
    again = logged_in_client.post("/alerts/dependencies/new/", form)
    assert again.status_code == 400 and "already declared" in again.content.decode()
    dependency = Dependency.objects.get()
    assert (dependency.object_id, dependency.upstream_id, dependency.author) == (
        site.pk,
        cluster.pk,
        user,
    )
    listed = logged_in_client.get("/alerts/dependencies/").content.decode()
    assert "gadget g00" in listed and "gadget g01" in listed and "VIP" in listed
    logged_in_client.post(f"/alerts/dependencies/{dependency.pk}/delete/")
    assert not Dependency.objects.exists()
    assert logged(Dependency, user) == ["create", "delete"]


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_others_read_the_set_up_pages_but_may_not_change_them(client, role, request, region):
    client.force_login(request.getfixturevalue(role))
    policy = EscalationPolicy.objects.create(name="Storage on call")
    window = MaintenanceWindow.objects.create(
        name="Backups", days=[1], start="01:00", minutes=30, time_zone="UTC"
    )
    incidents = client.get("/alerts/").content.decode()
    for page, shown in (
        ("/alerts/escalations/", "Storage on call"),
        ("/alerts/windows/", "Backups"),
        ("/alerts/dependencies/", "No declared dependency"),
    ):
        assert f'href="{page}"' in incidents  # the alerts navigation links it
        text = client.get(page).content.decode()
        assert shown in text and "/new/" not in text
    for url in (
        "/alerts/escalations/new/",
        f"/alerts/escalations/{policy.pk}/",
        f"/alerts/escalations/{policy.pk}/delete/",
        "/alerts/windows/new/",
        f"/alerts/windows/{window.pk}/",
        f"/alerts/windows/{window.pk}/delete/",
        "/alerts/dependencies/new/",
    ):
        assert client.post(url, {"name": "x"}).status_code == 403, url
    assert EscalationPolicy.objects.get().name == "Storage on call"
    assert MaintenanceWindow.objects.get().name == "Backups"
