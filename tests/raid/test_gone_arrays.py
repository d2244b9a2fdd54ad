"""Arrays gone from /proc/mdstat are bounded: a host keeps at most a setting's number of arrays
(the push past it is refused with a 409 saying so, nothing stored), gone arrays and their
members expire with the other history, and the host page lists them apart, a page at a time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.utils import timezone

from apps.alerts.models import Incident, Transition
from apps.lib import retention
from apps.raid.collect import ingest
from apps.raid.models import Array, Host, Member
from apps.regions import concerns, tasks
from tests.raid.builders import mdstat, mirror

pytestmark = pytest.mark.django_db


def mirrors(*numbers: int) -> str:
    return mdstat(*(mirror(f"md{n}", f"sda{n}", f"sdb{n}") for n in numbers))


def push(host: Host, token: str, text: str):
    return Client().post(
        f"/api/raid/hosts/{host.pk}/report",
        text,
        content_type="text/plain",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_a_push_past_the_hosts_array_limit_is_refused_with_a_409_and_stores_nothing(host, settings):
    settings.VIGIL_RAID_MAX_ARRAYS_PER_HOST = 8
    token = host.issue_token()
    assert push(host, token, mirrors(0, 1, 2, 3)).status_code == 200
    assert push(host, token, mirrors(4, 5, 6, 7)).status_code == 200  # 4 present, 4 gone: 8
    host.refresh_from_db()
    before = (host.mdstat_text, host.last_report)

    refused = push(host, token, mirrors(8, 9, 10, 11))

    assert refused.status_code == 409
    assert refused.json() == {
        "error": "Host storage-client keeps at most 8 arrays (VIGIL_RAID_MAX_ARRAYS_PER_HOST): "
        "this report names 4 new ones beside the 8 it has (8 of them no longer in "
        "/proc/mdstat, kept 30 days after they were last seen, "
        "VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS). Nothing was stored."
    }
    host.refresh_from_db()
    assert (host.mdstat_text, host.last_report) == before
    assert Array.objects.filter(host=host).count() == 8
    assert set(Array.objects.filter(host=host, present=True).values_list("name", flat=True)) == {
        "md4",
        "md5",
        "md6",
        "md7",
    }
    assert "VIGIL_RAID_MAX_ARRAYS_PER_HOST" in host.last_error  # on the host page too
    # the arrays it has may come back, and the host reports again
    assert push(host, token, mirrors(0, 1, 4, 5)).status_code == 200


@pytest.mark.slow  # 1,024 arrays pushed
def test_sixteen_pushes_of_new_names_stop_at_the_limit(host, settings):
    """The report of the issue: 16 pushes of 256 new names made 4,096 arrays."""
    token = host.issue_token()
    answers = [
        push(host, token, mirrors(*range(256 * n, 256 * (n + 1)))).status_code for n in range(4)
    ]
    assert answers == [200, 200, 409, 409]  # the default limit, 512
    assert Array.objects.filter(host=host).count() == 512


def test_gone_arrays_and_their_members_expire_with_the_history(host):
    ingest(host, mirrors(0, 1, 2))
    ingest(host, mirrors(0))  # md1 and md2 gone now, with an open incident each (unknown)
    array = ContentType.objects.get_for_model(Array)
    md1 = Array.objects.get(host=host, name="md1")
    assert Incident.objects.filter(content_type=array, object_id=md1.pk, closed=None).exists()
    assert Member.objects.filter(array=md1).count() == 2
    later = timezone.now() + timedelta(days=31)
    Array.objects.filter(host=host, name="md0").update(last_seen=later)  # md0 is still reported

    deleted = retention.expire_all(later, concerns.histories())

    assert deleted["raid.Array"] == 2
    assert list(Array.objects.filter(host=host).values_list("name", flat=True)) == ["md0"]
    assert not Member.objects.filter(array_id=md1.pk).exists()
    assert Member.objects.filter(array__name="md0").count() == 2
    # their history stays (until its own retention); no reminder is owed for them any more
    assert Transition.objects.filter(content_type=array, object_id=md1.pk).exists()
    assert not Incident.objects.filter(content_type=array, object_id=md1.pk, closed=None).exists()


def test_gone_arrays_within_the_retention_stay(host):
    ingest(host, mirrors(0, 1))
    ingest(host, mirrors(0))
    retention.expire_all(timezone.now() + timedelta(days=29), concerns.histories())
    assert Array.objects.filter(host=host).count() == 2


def test_the_beat_task_expires_gone_arrays(host, settings):
    settings.VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS = 1
    ingest(host, mirrors(0, 1), now=timezone.now() - timedelta(days=3))
    ingest(host, mirrors(0))
    tasks.expire_history()
    assert list(Array.objects.filter(host=host).values_list("name", flat=True)) == ["md0"]


def test_the_host_page_lists_gone_arrays_apart_a_page_at_a_time(logged_in_client, host):
    ingest(host, mirrors(*range(61)))
    ingest(host, mirrors(0))  # md1..md60 gone
    page = logged_in_client.get(f"/raid/hosts/{host.pk}/").content.decode()
    arrays, gone = page.split('id="gone"', 1)
    rows = gone.split("</table>", 1)[0]
    assert "<code>md0</code>" in arrays and "<code>md1</code>" not in arrays
    assert "60 arrays, kept 30 days after they were last seen" in " ".join(gone.split())
    assert rows.count("<tr id=") == 50
    assert rows.index("<code>md1</code>") < rows.index("<code>md50</code>")
    assert '<a href="?gone=2#gone">Older</a>' in gone and "page 1 of 2" in gone

    second = logged_in_client.get(f"/raid/hosts/{host.pk}/?gone=2").content.decode()
    assert second.split('id="gone"', 1)[1].split("</table>", 1)[0].count("<tr id=") == 10
    assert f'hx-get="/raid/hosts/{host.pk}/?gone=2"' in second  # the poll keeps the page
