"""End-to-end proofs: from a real outside system to the message in a real receiver.

A real Celery worker and a real Celery beat run on a private Redis (beat's two ticks every
second: ``e2e_settings.py``), against the embedded AWS stand-in (EFS metrics from the credit
model, SES in moto) and loopback receivers of the test's own. Nothing in a test calls a
collection, a sweep or a delivery: it changes the outside world and waits for the message.

- two nodes of the real Galera test cluster killed at once -> a quorum-loss email in SES and a
  PagerDuty trigger; the nodes back -> the recovery on both;
- an EFS file system of the stand-in draining its credits -> the predictive email, then the
  exhaustion email;
- a gp2 volume of the stand-in draining under a node of the real Galera test cluster -> the
  predictive email, naming the node;
- a real nginx whose keep-alive timeout changes -> the drift warning.

Run them alone with ``pytest -m e2e``.
"""

from __future__ import annotations

import email
import os
import signal
from collections.abc import Iterator
from email.header import decode_header, make_header

import boto3
import pytest
from django.contrib.contenttypes.models import ContentType

from apps.alerts.models import Channel, Rule
from apps.demo.standin import AwsStandIn
from apps.galera.models import Cluster, Node
from apps.probes.models import Target
from apps.regions.models import Account, Region
from tests.services import wait_for
from tests.services.galera import MONITOR_PASSWORD, MONITOR_USER
from tests.services.nginx import Nginx, Site
from tests.services.receiver import Receiver
from tests.services.ses_proxy import sent_messages, verify_sender
from tests.services.workers import Beat, RedisServer, Worker, worker_database_url, worker_env

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROUTING_KEY = "E2Eroutingkey0123456789abcdefABC"
WAIT_S = 120


@pytest.fixture(scope="module")
def stack(tmp_path_factory, django_db_setup, django_db_blocker) -> Iterator[dict]:
    """Redis, the AWS stand-in, one worker on every queue and beat, for the whole module."""
    work = tmp_path_factory.mktemp("e2e")
    redis = RedisServer(work)
    redis.start()
    standin = AwsStandIn()
    url = standin.start()
    verify_sender(url)
    with django_db_blocker.unblock():
        database_url = worker_database_url()
    env = worker_env(
        redis.url,
        url,
        database_url,
        "tests.alerts.e2e_settings",
        GALERA_E2E_PASSWORD=MONITOR_PASSWORD,
        VIGIL_OUTBOUND_ALLOW_LOOPBACK="true",
        VIGIL_EFS_INTERVAL_MINUTES="1",
        VIGIL_EFS_SETTLE_MINUTES="0",
        VIGIL_EBS_INTERVAL_MINUTES="1",
        VIGIL_EBS_SETTLE_MINUTES="0",
        VIGIL_ALERT_REPEAT_HOLD_SECONDS="1",
        VIGIL_ALERT_FLAP_CHANGES="100",
        VIGIL_ALERT_LEASE_SECONDS="30",
    )
    worker = Worker(env, work / "worker.log", queues="alerts,default,galera,efs,probes,ebs")
    beat = Beat(env, work)
    try:
        worker.start()
        beat.start()
        yield {"aws": url, "worker": worker, "beat": beat}
    finally:
        beat.stop()
        worker.stop()
        standin.stop()
        redis.stop()


def subjects() -> list[str]:
    """The subject of every email SES accepted, oldest first."""
    out = []
    for raw in sent_messages():
        subject = email.message_from_string(raw)["Subject"]
        out.append(" ".join(str(make_header(decode_header(subject))).split()))
    return out


def wait_for_email(start: str, contains: str = "", before: int = 0) -> str:
    def found() -> str | None:
        return next(
            (s for s in subjects()[before:] if s.startswith(start) and contains in s),
            None,
        )

    return wait_for(found, WAIT_S, f"an email '{start}…{contains}'", interval=0.5)


@pytest.fixture
def oncall(db) -> Channel:
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
    rule.channels.add(channel)
    return channel


def test_two_galera_nodes_killed_at_once_page_and_email_then_both_hear_the_recovery(
    stack, galera, site, oncall
):
    pagerduty = Receiver(accepted=202)
    try:
        pager = Channel(
            name="PagerDuty", kind="pagerduty", target=pagerduty.url + "/v2/enqueue",
            secret=ROUTING_KEY,
        )  # fmt: skip
        pager.full_clean()
        pager.save()
        rule = Rule.objects.create(name="Page on critical", min_severity="critical")
        rule.channels.add(pager, oncall)
        cluster = Cluster.objects.create(
            region=site, name="prod-db", expected_data_nodes=3, expected_arbitrators=1,
            interval_s=2,
        )  # fmt: skip
        for node in galera.nodes:
            Node.objects.create(
                cluster=cluster, name=node.name, host="127.0.0.1", port=node.sql_port,
                user=MONITOR_USER, password_env="GALERA_E2E_PASSWORD",
            )  # fmt: skip
        wait_for(
            lambda: Cluster.objects.get(pk=cluster.pk).status == "ok", WAIT_S, "the first poll"
        )
        galera.kill(galera.node("node2"))
        galera.kill(galera.node("node3"))

        subject = wait_for_email("CRITICAL lab Galera prod-db", "quorum lost")
        assert subject.startswith("CRITICAL lab Galera prod-db: quorum lost")

        def events(action: str) -> list[dict]:
            return [r.json for r in pagerduty.requests if r.json["event_action"] == action]

        (trigger, *_) = wait_for(lambda: events("trigger"), WAIT_S, "the PagerDuty trigger")
        dedup_key = f"vigil/galera.cluster/{cluster.pk}"
        assert trigger["dedup_key"] == dedup_key and trigger["routing_key"] == ROUTING_KEY
        assert trigger["payload"]["severity"] == "critical"
        assert "quorum lost" in trigger["payload"]["summary"]

        sent = len(subjects())
        galera.ensure_healthy()  # node1 bootstrapped, node2 and node3 rejoin
        wait_for_email("RECOVERED lab Galera prod-db", before=sent)
        (resolve,) = wait_for(lambda: events("resolve"), WAIT_S, "the PagerDuty resolve")
        assert resolve["dedup_key"] == dedup_key
    finally:
        pagerduty.close()


def test_an_efs_file_system_draining_its_credits_warns_ahead_then_pages_when_exhausted(
    stack, oncall
):
    import time

    from apps.efs.demo_cloudwatch import PHASE_TAG, PROFILE_TAG
    from apps.efs.demo_workloads import DAY_MIN

    def phase(minute_of_day: int) -> str:
        """The stand-in's day phase that puts the current minute at ``minute_of_day``."""
        return str((minute_of_day - int(time.time()) // 60) % DAY_MIN)

    # The "draining" workload spends its 2.1 TiB of credits by minute 1206 of its day.
    efs = boto3.client("efs", "us-east-1", endpoint_url=stack["aws"])
    fs_id = efs.create_file_system(
        CreationToken="e2e-builds",
        Tags=[
            {"Key": "Name", "Value": "builds"},
            {"Key": PROFILE_TAG, "Value": "draining"},
            {"Key": PHASE_TAG, "Value": phase(1206 - 6 * 60)},  # six hours of credits left
        ],
    )["FileSystemId"]
    account = Account.objects.create(name="e2e")
    Region.objects.create(account=account, code="us-east-1", opt_in_status="opt-in-not-required")

    warning = wait_for_email("WARNING us-east-1 EFS builds", "run out")
    assert "credits run out in" in warning

    # Hours later in its day: the credits are gone.
    efs.tag_resource(ResourceId=fs_id, Tags=[{"Key": PHASE_TAG, "Value": phase(1260)}])
    exhausted = wait_for_email("CRITICAL us-east-1 EFS builds")
    assert "burst credits exhausted" in exhausted


def test_a_gp2_volume_draining_under_a_galera_node_warns_ahead_naming_the_node(
    stack, galera, site, oncall
):
    import time

    from apps.ebs.demo_cloudwatch import PHASE_TAG, PROFILE_TAG
    from apps.ebs.demo_workloads import cycle
    from apps.ebs.models import HostLink

    cluster = Cluster.objects.create(
        region=site, name="prod-db", expected_data_nodes=3, expected_arbitrators=1, interval_s=2
    )
    nodes = [
        Node.objects.create(
            cluster=cluster,
            name=node.name,
            host="127.0.0.1",
            port=node.sql_port,
            user=MONITOR_USER,
            password_env="GALERA_E2E_PASSWORD",
        )  # fmt: skip
        for node in galera.nodes
    ]
    # node1's instance, with its 50 GB gp2 data volume 200 minutes into a 300-minute drain.
    ec2 = boto3.client("ec2", "us-east-1", endpoint_url=stack["aws"])
    instance = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="m5.large",
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "Name", "Value": "db-1"}]}],
    )["Instances"][0]["InstanceId"]  # fmt: skip
    phase = (200 - int(time.time()) // 60) % cycle("gp2-draining").length
    tags = {"Name": "node1-data", PROFILE_TAG: "gp2-draining", PHASE_TAG: str(phase)}
    data = ec2.create_volume(
        AvailabilityZone="us-east-1a", Size=50, VolumeType="gp2",
        TagSpecifications=[{"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}],
    )["VolumeId"]  # fmt: skip
    ec2.attach_volume(VolumeId=data, InstanceId=instance, Device="/dev/sdf")
    HostLink.objects.create(galera_node=nodes[0], instance_id=instance)
    account = Account.objects.create(name="e2e")
    Region.objects.create(account=account, code="us-east-1", opt_in_status="opt-in-not-required")

    warning = wait_for_email("WARNING us-east-1 EBS node1-data", "run out")
    assert "gp2 burst credits run out in ~" in warning
    assert f"(under Galera node {nodes[0].label} of prod-db)" in warning


def test_a_probe_target_whose_keep_alive_timeout_changes_warns_of_the_drift(
    stack, site, oncall, tmp_path
):
    nginx = Nginx(tmp_path / "nginx", [Site("1s")]).start()
    try:
        (served,) = nginx.sites
        target = Target.objects.create(
            region=site, name="shop", url=nginx.url(served), interval_s=2, cap_s=8, timeout_s=2
        )
        wait_for(lambda: Target.objects.get(pk=target.pk).status == "ok", WAIT_S, "the first probe")
        # The front end is reconfigured: nginx reloads with a longer keep-alive timeout.
        nginx.sites = [Site("3s", port=served.port)]
        (nginx.directory / "nginx.conf").write_text(nginx.config())
        os.kill(nginx.process.pid, signal.SIGHUP)
        drift = wait_for_email("WARNING lab Keep-alive shop", "changed")
        assert drift == "WARNING lab Keep-alive shop: idle timeout changed from 1.0 s to 3.0 s"
        assert ContentType.objects.get_for_model(Target)
    finally:
        nginx.stop()
