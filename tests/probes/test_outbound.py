"""Probe targets pass the outbound guard: at save (a 400 naming the rule) and at connect, on
the address the name resolves to then (DNS rebinding), with names of the test's own."""

from __future__ import annotations

import asyncio

import pytest

from apps.probes import keepalive
from apps.probes.models import Result, Target
from apps.probes.tasks import run_probes

pytestmark = pytest.mark.django_db

METADATA = "169.254.169.254"


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        (f"http://{METADATA}/latest/meta-data/", "the instance metadata service"),
        ("http://169.254.10.1/", "a link-local address"),
        ("http://[fd00:ec2::254]/", "the instance metadata service"),
        ("http://0.0.0.0:8080/", "an unspecified address"),
        ("http://224.0.0.1/", "a multicast address"),
    ],
)
def test_it_refuses_to_save_a_target_the_guard_refuses(api_client, operator, site, url, rule):
    api_client.force_login(operator)
    answer = api_client.post("/api/probes/targets/", {"url": url, "region": site.pk})
    assert answer.status_code == 400
    (message,) = answer.json()["fields"]["url"]
    assert message.endswith(f"is refused: {rule}") or rule in message
    assert not Target.objects.exists()


def test_a_name_resolving_to_link_local_is_refused_at_save_and_at_connect(
    api_client, client, operator, site, hosts_entry, settings
):
    name = hosts_entry(METADATA)
    api_client.force_login(operator)
    answer = api_client.post("/api/probes/targets/", {"url": f"http://{name}/", "region": site.pk})
    assert answer.status_code == 400
    assert answer.json()["fields"]["url"] == [
        f"{name} ({METADATA}) is refused: the instance metadata service"
    ]
    client.force_login(operator)  # the admin says the same
    page = client.post(
        "/admin/probes/target/add/",
        {"url": f"http://{name}/", "region": site.pk, "interval_s": 900, "cap_s": 60,
         "timeout_s": 5, "verify_tls": "on", "enabled": "on",
         "next_due_0": "2026-01-01", "next_due_1": "00:00:00"},
    )  # fmt: skip
    assert page.status_code == 200 and "the instance metadata service" in page.content.decode()

    # DNS rebinding: the name was harmless when saved, and points at the metadata service when
    # the worker connects. The worker judges the address it is about to connect to.
    hosts_entry("127.0.0.1")
    saved = api_client.post(
        "/api/probes/targets/", {"url": f"http://{name}:9/", "region": site.pk}, format="json"
    )
    assert saved.status_code == 201
    hosts_entry(METADATA)
    assert run_probes([saved.json()["id"]]) == 1
    result = Result.objects.get()
    assert result.error == f"{name} ({METADATA}) is refused: the instance metadata service"
    assert result.peer_address == "" and result.status == "critical"


def test_the_adapter_judges_every_address_before_connecting(hosts_entry):
    from apps.lib.outbound import Policy

    name = hosts_entry("127.0.0.1")
    refused = asyncio.run(keepalive.measure(f"http://{name}:9/", timeout_s=2, policy=Policy()))
    assert refused.error == (
        f"{name} (127.0.0.1) is refused: a loopback address "
        "(allowed only with VIGIL_OUTBOUND_ALLOW_LOOPBACK)"
    )
    unguarded = asyncio.run(keepalive.measure(f"http://{name}:9/", timeout_s=2))  # a person's CLI
    assert unguarded.error.startswith("unreachable") or "refused" in unguarded.error
