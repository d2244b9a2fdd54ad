"""Hostile pushes through the whole Django stack: bounded, refused with a clear 4xx, never a 500.

Run on PostgreSQL too (DATABASE_URL): NULs, over-long names and 24-digit numbers only failed
there, as 500s.
"""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client

from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array, Host, Member
from tests.raid.builders import many_domains_three_way, mdstat, mirror, nested_mirrors

pytestmark = pytest.mark.django_db


def url() -> str:
    """The push URL of the ``host`` fixture (storage-client)."""
    from apps.raid.models import Host

    return f"/api/raid/hosts/{Host.objects.get(name='storage-client').pk}/report"


MiB = 1024 * 1024


def post(token: str, body: bytes, content_type: str = "application/json", **extra):
    return Client().generic(
        "POST",
        url(),
        body,
        content_type=content_type,
        HTTP_AUTHORIZATION=f"Bearer {token}",
        **extra,
    )


def as_json(report: dict) -> bytes:
    return json.dumps(report).encode()


def assert_nothing_stored(host: Host) -> None:
    host.refresh_from_db()
    assert host.last_report is None and host.mdstat_text == ""
    assert not Array.objects.exists()


def test_a_body_over_the_limit_is_a_413_from_its_content_length_before_it_is_read(host):
    class Unreadable(io.RawIOBase):
        def read(self, size: int = -1) -> bytes:
            raise AssertionError("the body was read")

    response = post(
        host.issue_token(),
        b"",
        CONTENT_TYPE="application/json",
        CONTENT_LENGTH=str(MiB + 1),
        **{"wsgi.input": Unreadable()},
    )
    assert response.status_code == 413
    assert response.json() == {"error": "The body is larger than 1 MiB"}
    assert_nothing_stored(host)


def test_a_chunked_body_is_read_with_a_bound(host):
    """gunicorn de-chunks a body and marks its end (wsgi.input_terminated), with no length."""
    token = host.issue_token()
    report = as_json({"mdstat": seed_layout_mdstat()})
    chunked = {
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": "",
        "HTTP_TRANSFER_ENCODING": "chunked",
    }

    ok = post(
        token, b"", **chunked, **{"wsgi.input": io.BytesIO(report), "wsgi.input_terminated": True}
    )
    assert ok.status_code == 200, ok.content
    assert ok.json()["arrays"]["md99"] == "ok"

    endless = io.BytesIO(b"x" * (4 * MiB))
    big = post(token, b"", **chunked, **{"wsgi.input": endless, "wsgi.input_terminated": True})
    assert big.status_code == 413
    assert endless.tell() <= MiB + 64 * 1024  # it stopped reading just past the limit

    unended = post(token, b"", **chunked, **{"wsgi.input": io.BytesIO(report)})
    assert unended.status_code == 411


def test_the_limit_is_a_setting(host, settings):
    settings.VIGIL_PUSH_MAX_BYTES = 1024
    report = {"mdstat": seed_layout_mdstat(), "details": {"md1": " " * 1024}}
    response = post(host.issue_token(), as_json(report))
    assert response.status_code == 413
    assert response.json() == {"error": "The body is larger than 1 KiB"}


@pytest.mark.parametrize(
    ("mdstat_text", "error"),
    [
        (
            mdstat(mirror("md0", "sd\x00a", "sdb")),
            "/proc/mdstat, line 2: a NUL character, which cannot be stored: "
            "'md0 : active raid1 sd\\x00a[0] sdb[1]'",
        ),
        (
            mdstat(mirror("md" + "1" * 80, "sda", "sdb")),
            "/proc/mdstat, line 2: array name longer than 64 characters",
        ),
        (
            mdstat(mirror("md0", "sd" + "a" * 120, "sdb")),
            "/proc/mdstat, line 2: member device name longer than 100 characters",
        ),
        (
            mdstat("md0 : active raid1 sda[999999999999999999999999] sdb[1]\n"),
            "/proc/mdstat, line 2: member number 999999999999999999999999 is out of range",
        ),
        (
            mdstat("md0 : active raid1 sda[0]\n      999999999999999999999999 blocks [1/1] [U]\n"),
            "/proc/mdstat, line 3: size 999999999999999999999999 is out of range",
        ),
        (
            mdstat(
                "md0 : active raid1 sda[0] sdb[1]\n      1024 blocks [2/2] [UU]\n"
                "      [=>...]  recovery = 8.5% (1/2) finish=1.0min speed=999999999999999999999999K/sec\n"
            ),
            "/proc/mdstat, line 4: speed 999999999999999999999999 is out of range",
        ),
        (nested_mirrors(250), "/proc/mdstat, line 18: arrays nested more than 8 deep"),
    ],
    ids=[
        "nul",
        "long-array-name",
        "long-device",
        "24-digit-role",
        "24-digit-size",
        "24-digit-speed",
        "nested-250",
    ],
)
def test_a_value_that_cannot_be_stored_is_a_400_naming_the_line(host, mdstat_text, error):
    response = post(host.issue_token(), as_json({"mdstat": mdstat_text}))
    assert response.status_code == 400, response.content
    assert response.json()["error"].startswith(error)
    assert_nothing_stored(host)
    host.refresh_from_db()
    assert host.last_error.startswith("report rejected: " + error[:40])


def test_a_nul_or_undecodable_text_in_a_detail_is_a_400_naming_the_array(host):
    details = {"md1": "/dev/md1:\n     Raid Level : raid10\x00\n"}
    response = post(
        host.issue_token(), as_json({"mdstat": seed_layout_mdstat(), "details": details})
    )
    assert response.status_code == 400
    assert response.json()["error"].startswith("mdadm --detail md1, line 2: a NUL character")
    assert_nothing_stored(host)


def test_bytes_that_are_not_utf_8_are_a_400_naming_their_line(host):
    body = seed_layout_mdstat().encode().replace(b"sdk[1]", b"sd\xff\xfe[1]")
    response = post(host.issue_token(), body, content_type="text/plain")
    assert response.status_code == 400
    assert response.json()["error"].startswith(
        "/proc/mdstat, line 5: bytes that are not UTF-8 text: 'md5 : active raid10 sdp[2] sd\\udcff"
    )
    latin = post(
        host.issue_token(),
        "Personalities : [raid1]\nÿ\n".encode("latin-1"),
        content_type="text/plain; charset=latin-1",
    )
    assert latin.status_code == 400 and latin.json()["error"].startswith(
        "/proc/mdstat, line 2: status line outside of an array: 'ÿ'"
    )
    assert_nothing_stored(host)


@pytest.mark.parametrize("charset", ["base64", "rot13", "zlib", "no-such-charset", "hex"])
def test_a_charset_that_is_not_a_text_encoding_is_a_400(host, charset):
    response = post(
        host.issue_token(), b"UGVyc29uYWxpdGllcw==", content_type=f"text/plain; charset={charset}"
    )
    assert response.status_code == 400
    assert response.json() == {"error": f"Unknown charset {charset!r}"}
    json_too = post(
        host.issue_token(), b'{"mdstat": "x"}', content_type=f"application/json; charset={charset}"
    )
    assert json_too.status_code == 400
    assert_nothing_stored(host)


@pytest.mark.parametrize(
    ("body", "content_type", "status", "error"),
    [
        (b"[" * 200_000, "application/json", 400, "The body is not JSON"),
        (b'{"mdstat": ' + b"9" * 5000 + b"}", "application/json", 400, "The body is not JSON"),
        (b"\xff\xfe{}", "application/json", 400, "The body is not JSON"),
        (
            b"mdstat=x",
            "application/x-www-form-urlencoded",
            415,
            "Send application/json or text/plain",
        ),
    ],
    ids=["json-nested-200000-deep", "json-5000-digit-number", "json-not-utf-8", "form"],
)
def test_a_body_that_is_not_json_or_text_is_a_clear_4xx(host, body, content_type, status, error):
    response = post(host.issue_token(), body, content_type=content_type)
    assert response.status_code == status
    assert response.json()["error"].startswith(error)
    assert_nothing_stored(host)


def test_only_details_of_arrays_in_mdstat_are_kept(host):
    detail = "/dev/md1:\n     Raid Level : raid10\n"
    details = {"md1": detail, "md404": "anything\x00at all", "../../etc": "x" * 1000}
    response = post(
        host.issue_token(), as_json({"mdstat": seed_layout_mdstat(), "details": details})
    )
    assert response.status_code == 200, response.content
    host.refresh_from_db()
    assert host.details_text == {"md1": detail}


@pytest.mark.slow
def test_a_report_too_large_to_judge_is_answered_fast_unknown_and_says_so_on_the_page(
    host, admin_client
):
    text, rules = many_domains_three_way(120, 90)
    Host.objects.filter(pk=host.pk).update(domain_rules=rules)
    response = post(host.issue_token(), text.encode(), content_type="text/plain")
    assert response.status_code == 200, response.content  # bench/hostile.py: how long it takes
    md0 = Array.objects.get(host=host, name="md0")
    assert md0.domain_headroom is None
    assert md0.domain_headroom_text == "md0: loss of storage servers too large to judge"
    page = admin_client.get(f"/raid/hosts/{host.pk}/").content.decode()
    assert "md0: loss of storage servers too large to judge" in page
    assert Member.objects.filter(array__host=host).count() == 120 + 360


def test_hostile_smartctl_texts_make_only_their_disk_unknown_and_are_kept_only_if_storable(host):
    from apps.raid.models import Disk

    smart = {
        "sdb": "[" * 200_000,  # deeper than Python's parser
        "sdc": '{"smartctl": {"exit_status": 0}, "serial_number": "a\\u0000b", "model_name": "'
        + "x" * 5000
        + '", "smart_status": {"passed": true}}',
        "sdd": "\x00 not json",
        "sde": '{"smartctl": {}, "ata_smart_attributes": {"table": [{"id": 197, "raw": '
        '{"value": ' + "9" * 4000 + "}}]}}",
        "sdzz": "a disk under no array: not read",
    }
    response = post(host.issue_token(), as_json({"mdstat": seed_layout_mdstat(), "smart": smart}))
    assert response.status_code == 200, response.content
    disks = {d.device: d for d in Disk.objects.filter(host=host)}
    assert disks["sdb"].summary == "SMART not read: smartctl's JSON is nested too deep"
    assert (disks["sdc"].status, disks["sdc"].serial, len(disks["sdc"].model)) == ("ok", "", 100)
    assert disks["sdd"].smart_text == "" and disks["sdd"].status == "unknown"
    assert disks["sde"].pending_sectors is None  # 4,000 digits: more than a column holds, left out
    assert "sdzz" not in disks
    assert {a.status for a in Array.objects.filter(host=host)} == {"ok"}


def test_more_smartctl_texts_than_disks_a_report_may_hold_is_a_400(host):
    smart = {f"sd{i}": "{}" for i in range(4097)}
    response = post(host.issue_token(), as_json({"mdstat": seed_layout_mdstat(), "smart": smart}))
    assert response.status_code == 400
    assert response.json()["error"] == "'smart' must map disk names to smartctl --json -a texts"
    assert_nothing_stored(host)
