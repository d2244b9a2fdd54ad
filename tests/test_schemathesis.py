"""Schemathesis against the OpenAPI schema: no 5xx, and every answer as the schema says.

Every operation of ``/api/schema/`` (reads and writes) is one test, on a database holding a few
objects of every kind; about half of the generated ids are moved onto those real rows, so
detail, update and delete operations reach real objects and not only 404s. Derandomized, with
a bounded number of examples, so the run is reproducible and takes a minute or two.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.utils import timezone
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application

pytestmark = pytest.mark.slow


def _served_schema() -> dict[str, Any]:
    """The document ``/api/schema/`` serves, generated without a request (no key exists yet)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    document = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(document))


schema = schemathesis.openapi.from_dict(_served_schema())
schema.app = application  # every request, the checks' own included, goes to the WSGI app

# Zero 5xx, and every answer documented: its status, its content type and its body. (DRF's
# lenient parsing, e.g. ``?offset=null`` read as 0, or "0" as false in a form, is kept: so not
# schemathesis's checks that every schema-violating request be refused.)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

# The list an operation's ``{id}`` (or ``{name}``) is drawn from, by its path prefix.
COLLECTIONS = {
    "/api/accounts/": "accounts",
    "/api/regions/": "regions",
    "/api/keys/": "keys",
    "/api/efs/filesystems/": "filesystems",
    "/api/probes/targets/": "targets",
    "/api/probes/results/": "results",
    "/api/alerts/incidents/": "incidents",
    "/api/alerts/transitions/": "transitions",
    "/api/alerts/silences/": "silences",
    "/api/alerts/channels/": "channels",
    "/api/alerts/rules/": "rules",
    "/api/raid/hosts/": "hosts",
    "/api/raid/arrays/": "arrays",
    "/api/raid/members/": "members",
    "/api/raid/history/": "history",
    "/api/galera/clusters/": "clusters",
    "/api/galera/nodes/": "nodes",
    "/api/galera/snapshots/": "snapshots",
}


@pytest.fixture
def fleet(db, user) -> dict[str, Any]:
    """A few objects of every kind, and a read-write key (of a key that is not the fuzzer's)."""
    from apps.accounts.models import ApiKey
    from apps.alerts.models import Channel, Incident, Rule, Silence, Transition
    from apps.efs.models import FileSystem
    from apps.galera import demo as galera_demo
    from apps.galera.models import Cluster, Node, Snapshot
    from apps.probes.models import Result, Target
    from apps.raid.collect import ingest
    from apps.raid.demo import SEED_RULES, seed_layout_mdstat
    from apps.raid.models import Array, Host, Member
    from apps.regions.models import Account, Region

    account = Account.objects.create(name="prod")
    aws = Region.objects.create(account=account, code="eu-west-1", name="Ireland")
    site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    for n in range(3):
        FileSystem.objects.create(region=aws, filesystem_id=f"fs-{n:08x}", name=f"fs {n}")
    target = Target.objects.create(region=site, url="http://127.0.0.1:9/")
    Result.objects.create(target=target, started_at=timezone.now(), cap_s=30, status="ok")
    Result.objects.create(
        target=target, started_at=timezone.now(), cap_s=30, error="refused", status="critical"
    )
    galera_demo.set_up()
    host = Host.objects.create(
        name="storage-client", region=site, domain_rules=dict(SEED_RULES), domain_noun="server"
    )
    ingest(host, seed_layout_mdstat(failed=["sdb"]))
    channel = Channel.objects.create(name="oncall", target="oncall@example.com")
    Rule.objects.create(name="lab", region=site).channels.add(channel)
    Silence.objects.create(region=site, ends=timezone.now() + timedelta(hours=1), author=user)
    ApiKey.issue(user, "another key", read_only=True)
    raw = ApiKey.issue(user, "schemathesis", read_only=False)[1]
    fuzzer = ApiKey.objects.get(name="schemathesis")
    ids = {
        "accounts": list(Account.objects.values_list("pk", flat=True)),
        "regions": list(Region.objects.values_list("pk", flat=True)),
        "keys": list(ApiKey.objects.exclude(pk=fuzzer.pk).values_list("pk", flat=True)),
        "filesystems": list(FileSystem.objects.values_list("pk", flat=True)),
        "targets": list(Target.objects.values_list("pk", flat=True)),
        "results": list(Result.objects.values_list("pk", flat=True)),
        "incidents": list(Incident.objects.values_list("pk", flat=True)),
        "transitions": list(Transition.objects.values_list("pk", flat=True)),
        "silences": list(Silence.objects.values_list("pk", flat=True)),
        "channels": list(Channel.objects.values_list("pk", flat=True)),
        "rules": list(Rule.objects.values_list("pk", flat=True)),
        "hosts": list(Host.objects.values_list("name", flat=True)),
        "arrays": list(Array.objects.values_list("pk", flat=True)),
        "members": list(Member.objects.values_list("pk", flat=True)),
        "history": list(Transition.objects.filter(concern="raid").values_list("pk", flat=True)),
        "clusters": list(Cluster.objects.values_list("pk", flat=True)),
        "nodes": list(Node.objects.values_list("pk", flat=True)),
        "snapshots": list(Snapshot.objects.values_list("pk", flat=True)),
    }
    assert all(ids.values()), {name: rows for name, rows in ids.items() if not rows}
    # Each operation starts from this state again (a DELETE of an account must not leave the
    # next operations only 404s): rolled back to this savepoint when the operation changes.
    seeded = transaction.savepoint()
    return {"auth": {"Authorization": f"Bearer {raw}"}, "ids": ids, "seeded": seeded, "op": None}


@pytest.fixture
def wsgi_in_test_transaction() -> Iterator[None]:
    """Call the real WSGI application inside the test's transaction, as Django's test client
    does: its request signals would otherwise close the connection that holds it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _onto_real_rows(case: schemathesis.Case, ids: dict[str, list]) -> None:
    """Move about half of the generated ids onto seeded rows (the rest stay, for 404s)."""
    params = case.path_parameters or {}
    prefix = next((p for p in COLLECTIONS if case.path.startswith(p)), None)
    if prefix is None:
        return
    rows = ids[COLLECTIONS[prefix]]
    for name in ("id", "name"):
        value = params.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value % 2 == 0:
            params[name] = rows[(value // 2) % len(rows)]
        elif isinstance(value, str) and name == "name" and len(value) % 2 == 0:
            params[name] = rows[len(value) // 2 % len(rows)]


@pytest.fixture
def generous_rates(settings) -> None:
    """The fuzzer sends more writes a minute than the default budget allows."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": None, "write": None},
    }


@schema.parametrize()
@settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_it_answers_every_operation_without_a_server_error_and_as_documented(
    case: schemathesis.Case,
    fleet: dict[str, Any],
    generous_rates: None,
    wsgi_in_test_transaction: None,
) -> None:
    if fleet["op"] != case.operation.label:
        transaction.savepoint_rollback(fleet["seeded"])
        fleet["op"] = case.operation.label
    _onto_real_rows(case, fleet["ids"])
    case.call_and_validate(headers=fleet["auth"], checks=CHECKS)


@pytest.mark.django_db
def test_it_fuzzes_the_schema_that_api_schema_serves(api_client, api_key):
    served = api_client.get(
        "/api/schema/?format=json", HTTP_AUTHORIZATION=f"Bearer {api_key()}"
    ).json()
    assert served == schema.raw_schema
