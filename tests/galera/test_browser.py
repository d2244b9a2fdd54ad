"""The Galera pages in Debian's chromium: the demo cluster, and a cluster with a size history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.galera import collect, demo, tasks
from apps.galera.models import Cluster, Node
from apps.galera.parse_wsrep import WsrepStatus
from apps.galera.verdict import NodeResult
from apps.regions.models import Region
from tests.helpers import OUTPUT_DIR, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def synced(size: int, minute: int = 0) -> WsrepStatus:
    rows = [
        ("wsrep_provider_name", "Galera"),
        ("wsrep_cluster_status", "Primary"),
        ("wsrep_cluster_size", str(size)),
        ("wsrep_cluster_weight", str(size)),
        ("wsrep_cluster_conf_id", str(10 + size)),
        ("wsrep_local_state_comment", "Synced"),
        ("wsrep_ready", "ON"),
        ("wsrep_local_recv_queue", "1"),
        ("wsrep_local_recv_queue_avg", "0.2"),
        ("wsrep_local_send_queue", "0"),
        # Paused 3 s of every minute (5 %): shown, not warned of.
        ("wsrep_flow_control_paused_ns", str(minute * 3_000_000_000)),
        ("wsrep_flow_control_paused", "0.05"),
    ]
    return WsrepStatus.from_rows(rows)


@pytest.fixture
def clusters(django_user_model) -> dict[str, int]:
    django_user_model.objects.create_user("oncall", "oncall@example.com", "correct horse")
    shown = demo.set_up()
    site = Region.objects.create(code="dc1", name="Data centre 1", kind=Region.Kind.SITE)
    prod = Cluster.objects.create(region=site, name="prod", expected_arbitrators=1)
    names = ["db1", "db2", "db3"]
    for i, name in enumerate(names):
        Node.objects.create(cluster=prod, name=name, host="10.0.0.1", port=3306 + i)
    start = timezone.now() - timedelta(minutes=30)
    down = NodeResult("db3", error="(2003) Can't connect to MySQL server on '10.0.0.1'")
    for minute in range(30):
        lost = 10 <= minute < 20
        results = [
            down if lost and n == "db3" else NodeResult(n, status=synced(3 if lost else 4, minute))
            for n in names
        ]
        collect.save_poll(prod, results, now=start + timedelta(minutes=minute))
    return {"demo": shown[0].pk, "prod": prod.pk, "site": site.pk}


def test_the_cluster_pages_show_headroom_nodes_and_the_size_history(
    live_server,
    clusters,
    browser_page,
):
    page = browser_page
    log_in(page, live_server.url, username="oncall", password="correct horse")

    page.goto(f"{live_server.url}/galera/clusters/{clusters['prod']}/")
    page.wait_for_selector(".timeseries .uplot canvas")
    assert "Can lose 2 more nodes one at a time, 1 at once." in page.inner_text(".galera-headroom")
    assert "paused 5 % of the time between the last two readings" in page.inner_text(
        ".galera-flow-control"
    )
    assert page.locator(".timeseries .uplot canvas").count() == 4  # size, flow, latency, queues
    assert "Paused by flow control" in page.inner_text("main")
    screenshot(page, "browser/galera-cluster.png")

    page.goto(f"{live_server.url}/galera/clusters/{clusters['demo']}/")
    assert "recorded sample" in page.inner_text(".galera-recorded")
    screenshot(page, "browser/galera-demo.png")

    page.goto(f"{live_server.url}/regions/{clusters['site']}/")
    page.wait_for_selector(".galera-clusters")
    screenshot(page, "browser/galera-region.png")


@pytest.fixture
def crashed(django_user_model) -> int:
    """A cluster whose three pushing nodes crashed: each sent its grastate.dat (seqno -1) and the
    position galera_recovery found (as the real cluster's test sends them)."""
    django_user_model.objects.create_user("oncall", "oncall@example.com", "correct horse")
    site = Region.objects.create(code="dc1", name="Data centre 1", kind=Region.Kind.SITE)
    prod = Cluster.objects.create(region=site, name="prod", expected_arbitrators=1)
    uuid = "b9f2a2b4-ffde-11ef-bcd1-a3710702a9fb"
    for i, (name, recovered) in enumerate((("db1", 227), ("db2", 329), ("db3", 125))):
        Node.objects.create(
            cluster=prod,
            name=name,
            host="10.0.0.1",
            port=3306 + i,
            mode=Node.Mode.PUSH,
            reported_at=timezone.now(),
            state="stopped",
            grastate={
                "uuid": uuid,
                "seqno": -1,
                "safe_to_bootstrap": False,
                "recovered_uuid": uuid,
                "recovered_seqno": recovered,
                "recovered_by": "galera_recovery",
            },
        )
    tasks.poll_cluster(prod.pk)
    return prod.pk


def test_the_cluster_page_says_which_node_to_bootstrap_after_a_crash(
    live_server, crashed, browser_page
):
    page = browser_page
    log_in(page, live_server.url, username="oncall", password="correct horse")
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/galera/clusters/{crashed}/")
    advice = page.inner_text(".galera-recovery")
    assert "bootstrap db2 (seqno 329) with galera_new_cluster" in advice
    steps = page.locator(".galera-recovery-steps li").all_inner_texts()
    assert [step.split(":", 1)[0] for step in steps] == [
        "On db2",
        "On db2",
        "On db1",
        "On db3",
    ]
    assert "Vigil only advises" in advice
    readme = OUTPUT_DIR / "readme"
    readme.mkdir(parents=True, exist_ok=True)
    page.locator(".galera-recovery").screenshot(path=readme / "galera-recovery.png")
