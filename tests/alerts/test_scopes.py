"""A rule's or silence's scope is chosen from lists with the labels the pages use, and a scope
that could never match is refused, in the pages and the API alike."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from apps.alerts import scopes
from apps.alerts.models import Rule, Silence
from apps.regions.models import Region
from tests.concern_app.models import Gadget
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def other_region(db):
    return Region.objects.create(kind=Region.Kind.SITE, code="berlin", name="Berlin DC")


def value(subject) -> str:
    return f"{ContentType.objects.get_for_model(subject).pk}:{subject.pk}"


def test_the_rule_form_offers_concerns_regions_and_subjects_by_their_labels(
    logged_in_client, gadget
):
    page = logged_in_client.get("/alerts/rules/new/").content.decode()
    assert '<option value="" selected>Any concern</option>' in page
    assert '<option value="probes">Keep-alive</option>' in page
    assert '<option value="gadgets">Gadgets</option>' in page
    assert ">Any region</option>" in page and ">Lab</option>" in page
    assert '<optgroup label="Gadgets">' in page
    assert f'<option value="{value(gadget)}">Gadgets gadget g1 (Lab)</option>' in page
    assert 'hx-get="/alerts/subjects/"' in page  # the subject list's search box


def test_a_concern_typed_as_its_label_is_refused(logged_in_client, oncall):
    answer = logged_in_client.post(
        "/alerts/rules/new/",
        {"name": "web", "concern": "Keep-alive", "min_severity": "warning",
         "channels": [oncall.pk], "enabled": "on"},
    )  # fmt: skip
    assert answer.status_code == 400
    assert "Select a valid choice. Keep-alive is not one of the available choices." in (
        answer.content.decode()
    )
    assert not Rule.objects.filter(name="web").exists()


def test_a_rule_that_can_never_match_is_not_saved(logged_in_client, gadget, oncall, other_region):
    answer = logged_in_client.post(
        "/alerts/rules/new/",
        {"name": "never", "concern": "probes", "region": other_region.pk,
         "subject": value(gadget), "min_severity": "warning", "channels": [oncall.pk],
         "enabled": "on"},
    )  # fmt: skip
    text = answer.content.decode()
    assert answer.status_code == 400
    assert "Gadgets gadget g1 (Lab) is Gadgets, not Keep-alive: this would never match." in text
    assert "Gadgets gadget g1 (Lab) is not in Berlin DC: this would never match." in text
    assert not Rule.objects.filter(name="never").exists()


def test_the_form_says_so_while_it_is_typed(logged_in_client, gadget, oncall):
    answer = logged_in_client.post(
        "/alerts/rules/new/",
        {"_check": "1", "concern": "probes", "subject": value(gadget)},
        HTTP_HX_REQUEST="true",
        HTTP_HX_TRIGGER_NAME="concern",
    )
    assert "this would never match" in answer.content.decode()
    assert not Rule.objects.exclude(is_default=True).exists()


def test_the_api_refuses_a_rule_that_can_never_match(api_client, api_key, gadget, oncall):
    ct = ContentType.objects.get_for_model(gadget).pk
    answer = api_client.post(
        "/api/alerts/rules/",
        {"name": "never", "concern": "probes", "content_type": ct, "object_id": gadget.pk,
         "channels": [oncall.pk]},
        format="json",
        **bearer(api_key(read_only=False)),
    )  # fmt: skip
    assert answer.status_code == 400
    assert "this would never match" in answer.json()["fields"]["concern"][0]
    typed = api_client.post(
        "/api/alerts/rules/",
        {"name": "typed", "concern": "Keep-alive", "channels": [oncall.pk]},
        format="json",
        **bearer(api_key(read_only=False)),
    )
    assert typed.status_code == 400 and "concern" in typed.json()["fields"]


def test_the_subject_list_narrows_to_a_search_and_the_chosen_concern(logged_in_client, region):
    Gadget.objects.create(region=region, name="array-7")
    Gadget.objects.create(region=region, name="pump-2")
    found = logged_in_client.get("/alerts/subjects/", {"subject_search": "ARRAY"}).content.decode()
    assert "gadget array-7" in found and "pump-2" not in found
    assert found.startswith('<select name="subject" id="id_subject"')
    other = logged_in_client.get("/alerts/subjects/", {"concern": "probes"}).content.decode()
    assert "gadget" not in other and "Any subject" in other


def test_a_chosen_subject_stays_listed_whatever_the_search(region):
    kept = Gadget.objects.create(region=region, name="array-7")
    found = scopes.find("no such thing", keep=value(kept))
    assert [c.label for c in found] == ["Gadgets gadget array-7 (Lab)"]


def test_the_alerts_page_lists_silences_that_ended(logged_in_client, gadget, user):
    now = timezone.now()
    ct = ContentType.objects.get_for_model(gadget)
    Silence.objects.create(
        content_type=ct,
        object_id=gadget.pk,
        starts=now - timedelta(hours=3),
        ends=now - timedelta(hours=1),
        author=user,
        comment="disk swap done",
    )
    page = logged_in_client.get("/alerts/").content.decode()
    assert "Silences that ended" in page
    assert "Gadgets gadget g1 (Lab)</a>" in page and "disk swap done" in page
