"""An NFS client's push (POST /api/efs/clients/report): keys, refusals that change nothing,
increases between pushes with resets, attribution to EFS file systems."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.cache import cache
from rest_framework.test import APIClient

from apps.accounts.models import ApiKey
from apps.efs.client_push import PushRefused, read_tunnels
from apps.efs.models import ClientKey, FileSystem, NfsClient, NfsMount, NfsSample
from tests.efs.builders import mountstats
from tests.helpers import make_user

pytestmark = pytest.mark.django_db
URL = "/api/efs/clients/report"
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


@pytest.fixture
def key():
    return ClientKey.objects.create(name="web").issue_token()


@pytest.fixture
def fs(site):
    return FileSystem.objects.create(region=site, filesystem_id="fs-0123abcd")


def push(api_client, key, body, at=T0):
    with time_machine.travel(at, tick=False):
        return api_client.post(URL, body, format="json", HTTP_AUTHORIZATION=f"Bearer {key}")


def body(**kwargs):
    hostname = kwargs.pop("hostname", "web-1")
    instance_id = kwargs.pop("instance_id", "i-0123456789abcdef0")
    return {"hostname": hostname, "instance_id": instance_id, "mountstats": mountstats(**kwargs)}


def test_two_pushes_store_what_the_client_did_between_them(api_client, key, fs):
    first = push(api_client, key, body(read_bytes=1000, reads=10))
    assert first.status_code == 200, first.content
    assert first.json()["attributed"] == 1 and first.json()["samples"] == 0
    second = push(
        api_client,
        key,
        body(read_bytes=5000, write_bytes=300, reads=14, writes=3),
        T0 + timedelta(seconds=60),
    )
    assert second.json()["samples"] == 1
    sample = NfsSample.objects.get()
    assert (sample.read_bytes, sample.write_bytes, sample.read_ops) == (4000, 300, 4)
    assert sample.write_ops == 3 and sample.seconds == 60 and sample.filesystem == fs
    client = NfsClient.objects.get()
    assert (client.identity, client.hostname) == ("i-0123456789abcdef0", "web-1")
    mount = NfsMount.objects.get()
    assert mount.filesystem == fs and mount.attributed_by == "name"
    assert mount.options["rsize"] == "131072" and mount.version == "4.1"
    assert mount.ops_increase["READ"][0] == 4


def test_a_remount_counts_from_zero_and_a_repeated_push_adds_nothing(api_client, key, fs):
    push(api_client, key, body(read_bytes=9000, age=5000))
    push(api_client, key, body(read_bytes=700, age=30), T0 + timedelta(seconds=60))
    push(api_client, key, body(read_bytes=700, age=30), T0 + timedelta(seconds=60))
    assert list(NfsSample.objects.values_list("read_bytes", flat=True)) == [700]


def test_a_mount_of_another_server_is_kept_but_tied_to_no_file_system(api_client, key, fs):
    response = push(api_client, key, body(server="nfs.example.org"))
    assert response.json() == {
        "client": NfsClient.objects.get().pk,
        "mounts": 1,
        "attributed": 0,
        "samples": 0,
    }
    assert NfsMount.objects.get().filesystem is None


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ([], "JSON object"),
        ({"hostname": "web-1"}, "mountstats"),
        ({"mountstats": "device a:/ mounted on /m with fstype nfs\n"}, "hostname"),
        ({"hostname": "web 1;rm", "mountstats": "x"}, "not a valid hostname"),
        ({"hostname": "h", "instance_id": "i-xyz", "mountstats": "x"}, "instance id"),
        ({"hostname": "h", "mountstats": "hello"}, "unreadable mountstats"),
        (
            {
                "hostname": "h",
                "mountstats": "device a:/ mounted on /m with fstype nfs\n",
                "lookups": [{"address": "10.0.0.1", "reverse_seconds": -1}],
            },
            "seconds",
        ),
        (
            {
                "hostname": "h",
                "mountstats": "device a:/ mounted on /m with fstype nfs\n",
                "lookups": "many",
            },
            "lookups",
        ),
    ],
)
def test_a_push_it_cannot_read_is_refused_and_changes_nothing(api_client, key, payload, words):
    response = push(api_client, key, payload)
    assert response.status_code == 400 and words in response.json()["error"]
    assert not NfsClient.objects.exists()


def test_only_a_client_key_or_an_admins_key_may_push(django_user_model, writer, key, site):
    assert push(APIClient(), "vgc_nottherightkey0000000", body()).status_code == 401
    assert APIClient().post(URL, body(), format="json").status_code in (401, 403)
    operator = make_user(django_user_model, "op", "operator")
    raw = ApiKey.issue(operator, "k", read_only=False)[1]
    assert push(APIClient(), raw, body()).status_code == 403
    assert not NfsClient.objects.exists()
    assert writer.post(URL, body(), format="json").status_code == 200  # an admin's key


def test_a_fleets_clients_share_their_keys_budget_not_one_address(api_client, key, fs, settings):
    """Behind a NAT gateway a fleet's clients share one address: the key's own budget counts."""
    cache.clear()  # the budgets of earlier tests' keys (ids repeat on SQLite)
    settings.VIGIL_EFS_CLIENT_PUSH_RATE = "3/min"
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "write": "1/min",
        },
    }
    answers = [
        push(api_client, key, body(hostname=f"web-{i}", instance_id="")).status_code
        for i in range(4)
    ]
    assert answers == [200, 200, 200, 429]


def test_a_mount_by_a_mount_targets_address_is_tied_to_its_file_system(api_client, key, fs):
    cache.clear()  # the mount targets are cached a minute
    fs.mount_target_addresses = ["10.1.2.3"]
    fs.save()
    response = push(api_client, key, body(server="10.1.2.3"))
    assert response.json()["attributed"] == 1
    mount = NfsMount.objects.get()
    assert mount.filesystem == fs and mount.attributed_by == "mount target address"


@pytest.mark.parametrize(
    "tunnels",
    [
        [{"filesystem_id": "fs-0123abcd", "port": True}],
        [{"filesystem_id": "fs-0123abcd", "port": 70000}],
        [{"filesystem_id": "fs-0123abcd", "port": "20155"}],
        [{"filesystem_id": "fs-../../etc", "port": 20155}],
        [{"port": 20155}],
        [{"filesystem_id": "fs-0123abcd", "port": 20155, "mountpoint": "x" * 1025}],
        ["fs-0123abcd"],
        [{"filesystem_id": "fs-0123abcd", "port": 20000 + i} for i in range(257)],
        {"filesystem_id": "fs-0123abcd"},
    ],
)
def test_efs_utils_tunnels_are_checked_like_the_rest_of_a_push(tunnels):
    with pytest.raises(PushRefused):
        read_tunnels({"tunnels": tunnels})
