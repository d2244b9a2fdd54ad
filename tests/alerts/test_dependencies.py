"""Declared dependencies (Alertmanager's inhibition rules): a probe target that depends on a
cluster. While the cluster is failing, the target's failure joins the cluster's incident as
inhibited (listed on it) instead of paging; the cluster's recovery sends what of the target
still fails. Outbox level, as the cause unit tests (tests/raid/test_causes.py)."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType

from apps import alerts
from apps.alerts import delivery
from apps.alerts.models import Cause, Dependency, Incident, Notification
from apps.lib.status import Status, Verdict

DOWN = Verdict(Status.CRITICAL, "down")
UP = Verdict(Status.OK, "back")


@pytest.fixture
def pair(make_gadgets):
    """``site`` depends on ``cluster``."""
    cluster, site, other = make_gadgets(3)
    kind = ContentType.objects.get_for_model(cluster).pk
    Dependency.objects.create(
        content_type_id=kind, object_id=site.pk, upstream_type_id=kind, upstream_id=cluster.pk
    )
    return cluster, site, other


def text(outbox) -> str:
    return " | ".join(m.subject + m.body for m in outbox)


def test_the_dependent_joins_the_upstream_incident_and_pages_nobody(pair, oncall, mailoutbox):
    cluster, site, other = pair
    alerts.record(cluster, DOWN)
    delivery.send_due()
    assert len(mailoutbox) == 1 and "gadget g00" in mailoutbox[0].subject
    alerts.record(site, DOWN)
    alerts.record(other, DOWN)  # no dependency declared: pages on its own
    delivery.send_due()
    assert len(mailoutbox) == 2 and "gadget g02" in mailoutbox[1].subject
    (cause,) = Cause.objects.filter(closed=None)
    assert cause.label == "gadget g00 (declared dependency)"
    assert {i.subject_label for i in cause.incidents.filter(closed=None)} == {
        "gadget g00",
        "gadget g01",
    }
    held = Notification.objects.get(transition__subject_label="gadget g01")
    assert held.state == Notification.State.INHIBITED

    alerts.record(site, UP)  # recovers while the cluster is down: no news either
    delivery.send_due()
    assert len(mailoutbox) == 2
    alerts.record(site, DOWN)
    alerts.record(cluster, UP)  # the cluster back: its recovery, and the site still down
    delivery.send_due()
    sent = text(mailoutbox[2:])
    assert (
        "RECOVERED" in sent and "gadget g00" in sent and "CRITICAL" in sent and "gadget g01" in sent
    )
    cause.refresh_from_db()
    assert cause.closed is not None
    assert Incident.objects.get(closed=None, subject_label="gadget g01").cause_id is None
    alerts.record(site, UP)  # told of it alone now: hears it recovered
    delivery.send_due()
    assert mailoutbox[-1].subject.startswith("RECOVERED") and "gadget g01" in mailoutbox[-1].subject


def test_a_dependent_failing_first_pages_on_its_own(pair, oncall, mailoutbox):
    cluster, site, _ = pair
    alerts.record(site, DOWN)
    alerts.record(cluster, DOWN)
    delivery.send_due()
    assert {n.state for n in Notification.objects.all()} == {"sent"}
    assert Notification.objects.count() == 2 and not Cause.objects.exists()


def test_the_incident_by_cause_lists_the_held_dependent(pair, oncall, admin_client):
    cluster, site, _ = pair
    alerts.record(cluster, DOWN)
    delivery.send_due()
    alerts.record(site, DOWN)
    cause = Cause.objects.get()
    page = admin_client.get(f"/alerts/causes/{cause.pk}/").content.decode()
    assert (
        "gadget g00 (declared dependency)" in page
        and "gadget g01" in page
        and "inhibited" in page.lower()
    )
    (item,) = admin_client.get("/api/alerts/causes/?open=true").json()["results"]
    assert {s["subject_label"]: s["inhibited"] for s in item["subjects"]} == {
        "gadget g00": False,
        "gadget g01": True,
    }


def test_admins_declare_dependencies_and_bad_ones_are_refused(
    make_gadgets, admin_client, client, django_user_model
):
    from django.contrib.auth.models import Group

    a, b = make_gadgets(2)
    kind = ContentType.objects.get_for_model(a).pk
    url = "/api/alerts/dependencies/"
    body = {"content_type": kind, "object_id": a.pk, "upstream_type": kind, "upstream_id": b.pk}
    made = admin_client.post(url, {**body, "comment": "behind it"}, content_type="application/json")
    assert made.status_code == 201, made.content
    assert made.json()["subject"] == "gadget g00" and made.json()["upstream"] == "gadget g01"
    for bad in ({**body, "upstream_id": a.pk}, {**body, "upstream_id": 999999}):
        answer = admin_client.post(url, bad, content_type="application/json")
        assert answer.status_code == 400, answer.content
    assert Dependency.objects.count() == 1

    operator = django_user_model.objects.create_user("op", password="pw-long-enough-1")
    operator.groups.add(Group.objects.get_or_create(name="Operator")[0])
    client.force_login(operator)
    assert client.post(url, body, content_type="application/json").status_code == 403
    assert client.get(url).status_code == 200


@pytest.fixture
def chain(make_gadgets):
    """``site`` depends on ``proxy``, which depends on ``cluster``; ``other`` on nothing."""
    cluster, proxy, site, other = make_gadgets(4)
    kind = ContentType.objects.get_for_model(cluster).pk
    for dependent, upstream in ((site, proxy), (proxy, cluster)):
        Dependency.objects.create(
            content_type_id=kind,
            object_id=dependent.pk,
            upstream_type_id=kind,
            upstream_id=upstream.pk,
        )
    return cluster, proxy, site, other


def held_metric() -> dict[tuple[str, str], float]:
    from apps.alerts.prometheus import held_by_dependencies

    return {tuple(s.labels.values()): s.value for s in held_by_dependencies().samples}


def test_the_root_upstream_failing_holds_its_dependents_through_others(chain, oncall, mailoutbox):
    cluster, proxy, site, other = chain
    assert held_metric() == {}
    alerts.record(cluster, DOWN)
    alerts.record(proxy, DOWN)
    alerts.record(site, DOWN)  # depends on proxy, which the cluster holds: held by the cluster
    delivery.send_due()
    assert len(mailoutbox) == 1 and "gadget g00" in mailoutbox[0].subject
    (cause,) = Cause.objects.filter(closed=None)
    assert cause.label == "gadget g00 (declared dependency)"
    assert cause.incidents.filter(closed=None).count() == 3
    assert held_metric() == {("gadgets", "lab"): 2.0}

    alerts.record(cluster, UP)  # the root back: its recovery, and both still down, once each
    delivery.send_due()
    sent = text(mailoutbox[1:])
    assert "RECOVERED" in sent and "gadget g01" in sent and "gadget g02" in sent
    assert held_metric() == {}


def test_a_dependency_that_would_close_a_circle_is_refused_at_save(chain, admin_client):
    from django.core.exceptions import ValidationError

    cluster, proxy, site, _ = chain
    kind = ContentType.objects.get_for_model(cluster).pk
    circle = Dependency(
        content_type_id=kind, object_id=cluster.pk, upstream_type_id=kind, upstream_id=site.pk
    )
    with pytest.raises(ValidationError, match="would make a circle"):
        circle.full_clean()
    answer = admin_client.post(
        "/api/alerts/dependencies/",
        {"content_type": kind, "object_id": cluster.pk, "upstream_type": kind,
         "upstream_id": proxy.pk},
        content_type="application/json",
    )  # fmt: skip
    assert answer.status_code == 400 and "circle" in answer.content.decode()
    page = admin_client.post(
        "/alerts/dependencies/new/",
        {"subject": f"{kind}:{cluster.pk}", "upstream": f"{kind}:{site.pk}"},
    )
    assert page.status_code == 400 and "would make a circle" in page.content.decode()
    # editing a link of the chain is no circle with itself
    link = Dependency.objects.get(object_id=site.pk)
    link.comment = "behind the proxy"
    link.full_clean()
    assert Dependency.upstreams_of(kind, site.pk) == [(kind, proxy.pk), (kind, cluster.pk)]
