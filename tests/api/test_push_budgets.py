"""Push budgets per pushing subject, never per address, with the real throttle on a real Redis.

Behind the TLS proxy every agent has the proxy's address: here every push comes from one
``REMOTE_ADDR``, at the production default write rate (``VIGIL_API_RATE_WRITE``, 120/min).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client

from apps.galera.models import Cluster, Node
from apps.lib.conf import BY_NAME
from apps.lib.pushtoken import digest
from apps.raid.models import Host
from tests.raid.builders import mdstat, mirror

pytestmark = pytest.mark.django_db

# 10 s into a minute: the window has 50 s left, and the test cannot cross into the next one.
NOW = datetime(2026, 3, 2, 9, 30, 10, tzinfo=UTC)
PROXY = "10.0.0.1"
REPORT = mdstat(mirror("md0", "sda1", "sdb1"))
WRITE_RATE = BY_NAME["VIGIL_API_RATE_WRITE"].read()  # what production has by default


@pytest.fixture
def limits(settings, redis):
    settings.CACHES = {
        "default": {
            "BACKEND": "apps.lib.cache.RedisCache",  # as production has it
            "LOCATION": redis.url,
            "KEY_PREFIX": "test-push-budgets",
        }
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": "1200/min", "write": WRITE_RATE},
    }
    assert WRITE_RATE == "120/min"
    with time_machine.travel(NOW, tick=False):
        yield


def hosts_with_tokens(site, count: int) -> list[tuple[Host, str]]:
    """``count`` push hosts with known tokens, made in one insert (issue_token saves one by one)."""
    tokens = [
        f"{Host.token_prefix}{n:08x}secret-of-host-{n:06d}-xxxxxxxxxxxx" for n in range(count)
    ]
    hosts = Host.objects.bulk_create(
        Host(
            name=f"agent-{n:05d}",
            region=site,
            token_lookup=f"{n:08x}",
            token_hash=digest(tokens[n]),
        )
        for n in range(count)
    )
    return list(zip(hosts, tokens, strict=True))


def push(client: Client, host: Host, token: str):
    return client.post(
        f"/api/raid/hosts/{host.pk}/report",
        REPORT,
        content_type="text/plain",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        REMOTE_ADDR=PROXY,
    )


@pytest.mark.slow  # 2,000 pushes through the whole stack: about a minute
def test_two_thousand_agents_behind_one_address_all_get_through(site, limits):
    client = Client()
    answers = [
        push(client, host, token).status_code for host, token in hosts_with_tokens(site, 2000)
    ]
    assert answers.count(200) == 2000, {code: answers.count(code) for code in set(answers)}
    assert Host.objects.filter(last_report__isnull=False).count() == 2000


def test_an_agent_in_a_loop_is_answered_429_alone(site, limits):
    (broken, broken_token), (healthy, healthy_token) = hosts_with_tokens(site, 2)
    client = Client()
    answers = [push(client, broken, broken_token).status_code for _ in range(121)]
    assert answers == [200] * 120 + [429]
    refused = push(client, broken, broken_token)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "50"
    assert push(client, healthy, healthy_token).status_code == 200


def test_a_galera_node_and_a_raid_host_of_the_same_id_have_budgets_of_their_own(
    site, limits, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": "1200/min", "write": "1/min"},
    }
    ((host, host_token),) = hosts_with_tokens(site, 1)
    cluster = Cluster.objects.create(region=site, name="pushed", expected_data_nodes=1)
    node = Node.objects.create(cluster=cluster, name="db1", host="127.0.0.11", mode=Node.Mode.PUSH)
    Node.objects.filter(pk=node.pk).update(id=host.pk)
    node = Node.objects.get(pk=host.pk)
    node_token = node.issue_token()
    client = Client()
    assert push(client, host, host_token).status_code == 200
    pushed = client.post(
        f"/api/galera/nodes/{node.pk}/report",
        "wsrep_local_state_comment\tSynced\n",
        content_type="text/plain",
        HTTP_AUTHORIZATION=f"Bearer {node_token}",
        REMOTE_ADDR=PROXY,
    )
    assert pushed.status_code != 429, pushed.content
    assert push(client, host, host_token).status_code == 429
