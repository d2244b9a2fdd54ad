"""The push report and the read API: tokens, key scopes, malformed reports, filters."""

from __future__ import annotations

import pytest

from apps.alerts.models import Transition
from apps.raid.collect import ingest
from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array, Host
from tests.helpers import SHARED_FIXTURES

pytestmark = pytest.mark.django_db


def url() -> str:
    """The push URL of the ``host`` fixture (storage-client)."""
    from apps.raid.models import Host

    return f"/api/raid/hosts/{Host.objects.get(name='storage-client').pk}/report"


def push(api_client, token, body, content_type="application/json"):
    if content_type == "application/json":
        return api_client.post(url(), body, format="json", HTTP_AUTHORIZATION=f"Bearer {token}")
    return api_client.post(
        url(), body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def test_it_takes_a_report_with_the_hosts_own_token(api_client, host):
    token = host.issue_token()
    assert token.startswith("vgh_")
    response = push(api_client, token, {"mdstat": seed_layout_mdstat(failed=["sdb"])})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["arrays"]["md1"] == "critical"
    assert body["arrays"]["md99"] == "warning"
    assert body["transitions"] == 6
    host.refresh_from_db()
    assert host.last_report is not None
    assert token not in host.token_hash and host.token_hash  # stored hashed


def test_it_takes_details_keyed_by_array_name(api_client, host, api_key):
    text = (SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text()
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    response = push(
        api_client, api_key(read_only=False), {"mdstat": text, "details": {"md2": detail}}
    )
    assert response.status_code == 200, response.content
    assert Array.objects.get(host=host, name="md2").members.exclude(slot=None).exists()


def test_it_takes_plain_text_mdstat(api_client, host):
    token = host.issue_token()
    response = push(api_client, token, seed_layout_mdstat(), content_type="text/plain")
    assert response.status_code == 200, response.content
    assert response.json()["arrays"]["md99"] == "ok"


def test_a_read_write_api_key_may_push(api_client, host, api_key):
    response = push(api_client, api_key(read_only=False), {"mdstat": seed_layout_mdstat()})
    assert response.status_code == 200


def test_a_read_only_api_key_may_not_push(api_client, host, api_key):
    response = push(api_client, api_key(read_only=True), {"mdstat": seed_layout_mdstat()})
    assert response.status_code == 403
    assert response.json() == {"error": "This API key is read-only"}
    assert not Array.objects.exists()


def test_a_token_of_another_host_or_a_replaced_token_is_refused(api_client, host, site):
    other = Host.objects.create(name="other", region=site)
    response = push(api_client, other.issue_token(), {"mdstat": seed_layout_mdstat()})
    assert response.status_code == 403
    assert response.json() == {"error": "This token belongs to another host"}
    old = host.issue_token()
    host.issue_token()
    response = push(api_client, old, {"mdstat": seed_layout_mdstat()})
    assert response.status_code == 401
    assert "error" in response.json()
    assert api_client.post(url(), {"mdstat": "x"}, format="json").status_code == 401
    assert not Array.objects.exists()


def test_a_report_refused_as_a_whole_is_a_400_naming_the_line_and_stores_nothing(api_client, host):
    token = host.issue_token()
    assert push(api_client, token, {"mdstat": seed_layout_mdstat()}).status_code == 200
    host.refresh_from_db()
    before = (host.last_report, list(Array.objects.values_list("name", "status", "reason")))
    refused = seed_layout_mdstat(failed=["sdb"]).split("\n")
    refused[4] = "md5 : active raid10 sdp[2] sdk[1] sdf[0]\x00"
    response = push(api_client, token, {"mdstat": "\n".join(refused)})
    assert response.status_code == 400
    body = response.json()
    assert body["line"] == 5
    assert body["error"].startswith("/proc/mdstat, line 5: a NUL character, which cannot be")
    host.refresh_from_db()
    assert (host.last_report, list(Array.objects.values_list("name", "status", "reason"))) == before
    assert host.last_error.startswith("report rejected: /proc/mdstat, line 5")  # for the host page
    assert Transition.objects.count() == 6


def test_one_arrays_unreadable_line_makes_only_that_array_unknown(api_client, host):
    token = host.issue_token()
    odd = seed_layout_mdstat(failed=["sdb"]).split("\n")
    odd[4] = "md5 : active raid10 sdp[2] sdk[1] sdf[0"
    response = push(api_client, token, {"mdstat": "\n".join(odd)})
    assert response.status_code == 200, response.content
    arrays = response.json()["arrays"]
    assert arrays == {
        "md99": "unknown",
        "md5": "unknown",
        "md4": "ok",
        "md3": "ok",
        "md2": "ok",
        "md1": "critical",
    }
    md5 = Array.objects.get(host=host, name="md5")
    assert md5.reason == (
        "md5: /proc/mdstat line 5: unreadable member 'sdf[0': "
        "'md5 : active raid10 sdp[2] sdk[1] sdf[0'"
    )


def test_a_refused_detail_is_a_400_naming_the_array_and_line(api_client, host):
    token = host.issue_token()
    body = {"mdstat": seed_layout_mdstat(), "details": {"md1": "/dev/md1:\nnonsense \x00 here\n"}}
    response = push(api_client, token, body)
    assert response.status_code == 400
    assert response.json()["error"] == (
        "mdadm --detail md1, line 2: a NUL character, which cannot be stored: 'nonsense \\x00 here'"
    )
    assert not Array.objects.exists()


def test_an_odd_detail_makes_only_its_array_unknown(api_client, host):
    token = host.issue_token()
    body = {"mdstat": seed_layout_mdstat(), "details": {"md1": "/dev/md1:\nnonsense here\n"}}
    response = push(api_client, token, body)
    assert response.status_code == 200, response.content
    assert response.json()["arrays"]["md1"] == "unknown"
    assert set(response.json()["arrays"].values()) == {"ok", "unknown"}
    assert Array.objects.get(host=host, name="md1").reason.endswith(
        "its mdadm --detail md1, line 2: unreadable line: 'nonsense here'"
    )


@pytest.mark.parametrize(
    "body",
    [{"details": {}}, {"mdstat": 3}, {"mdstat": "x", "details": ["md0"]}, ["mdstat"]],
)
def test_a_report_of_the_wrong_shape_is_a_400(api_client, host, body):
    response = push(api_client, host.issue_token(), body)
    assert response.status_code == 400
    assert "error" in response.json()


def test_an_unknown_host_is_a_404(api_client, api_key):
    response = api_client.post(
        "/api/raid/hosts/999999/report",
        {"mdstat": seed_layout_mdstat()},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {api_key(read_only=False)}",
    )
    assert response.status_code == 404
    assert response.json() == {"error": "No RAID host with id 999999"}


def test_it_lists_hosts_arrays_members_and_history_by_region(api_client, host, site, api_key):
    from apps.regions.models import Region

    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(rebuilding="sdh"))
    elsewhere = Region.objects.create(code="dc-9", kind=Region.Kind.SITE)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api_key(read_only=True)}"}

    hosts = api_client.get(f"/api/raid/hosts/?region={site.pk}", **auth).json()["results"]
    assert [(h["name"], h["status"]) for h in hosts] == [("storage-client", "critical")]
    assert "token_hash" not in hosts[0]
    assert api_client.get(f"/api/raid/hosts/?region={elsewhere.pk}", **auth).json()["count"] == 0
    one = api_client.get(f"/api/raid/hosts/{host.pk}/", **auth).json()
    assert one["domain_rules"]["sd[b-f]"] == "storage-a"

    arrays = api_client.get(f"/api/raid/arrays/?region={site.pk}", **auth).json()["results"]
    md2 = next(a for a in arrays if a["name"] == "md2")
    assert (md2["status"], md2["sync_action"], md2["sync_percent"]) == (
        "critical",
        "recovery",
        37.4,
    )
    assert md2["speed_kib_per_sec"] == 148213 and isinstance(md2["eta_minutes"], float)
    assert [m["device"] for m in md2["members"]] == ["sdm", "sdh", "sdc"]
    md99 = next(a for a in arrays if a["name"] == "md99")
    assert md2["parent"] == md99["id"]
    assert md99["domain_headroom"] == 1

    members = api_client.get(f"/api/raid/members/?array={md2['id']}", **auth).json()["results"]
    assert {m["device"]: m["state"] for m in members}["sdh"] == "rebuilding"
    assert api_client.get(f"/api/raid/members/?region={elsewhere.pk}", **auth).json()["count"] == 0

    history = api_client.get(f"/api/raid/history/?host={host.pk}", **auth).json()["results"]
    assert [(h["subject_label"], h["new_status"]) for h in history[:2]] == [
        ("storage-client:md2", "critical"),
        ("storage-client:md99", "warning"),
    ]
    assert len(history) == 8
    elsewhere_history = api_client.get(f"/api/raid/history/?region={elsewhere.pk}", **auth).json()
    assert elsewhere_history["results"] == []
