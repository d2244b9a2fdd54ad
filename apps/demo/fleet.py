"""A synthetic fleet at the scale of the users' story, for ``manage.py seed_fleet``.

Pure: no database, no clock, no I/O; the command gives ``now`` and a seed and saves the rows.
Every subject's state and history come from the product's own pure code, so pages show what
they would for a real fleet: EFS file systems run ``efs.demo_workloads``' credit-model
workloads (a day simulated once by ``day_rows`` and repeated, judged by
``filesystem_verdict``, some with gaps or silent), Galera clusters, RAID hosts and probe
targets are judged by their concerns' verdicts on each scenario's readings. A subject's history
is a timeline of scenarios (``Timeline``), each change of status in it one transition.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from apps.efs.demo_workloads import PROFILES, Profile, minute_values
from apps.efs.history import SUMMED_FIELDS
from apps.efs.metrics import VALUE_FIELDS, Sample
from apps.efs.verdict import filesystem_verdict
from apps.galera.parse_wsrep import WsrepStatus
from apps.galera.quorum import FaultTolerance, describe
from apps.galera.replication import Paused
from apps.galera.verdict import ClusterView, NodeResult, build_view, cluster_verdict
from apps.lib.status import Status, Verdict
from apps.probes.keepalive import Measurement
from apps.probes.verdict import probe_verdict
from apps.raid.demo import SEED_RULES, recovery_line, seed_layout_mdstat
from apps.raid.report import ArrayFacts, assess

ACCOUNT_NAME = "Seeded fleet"
#: Real region codes, in the order they are used.
REGION_CODES = (
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1", "eu-west-2",
    "eu-west-3", "eu-central-1", "eu-north-1", "ap-southeast-1", "ap-southeast-2",
    "ap-northeast-1", "ap-northeast-2", "ap-south-1", "sa-east-1", "ca-central-1",
)  # fmt: skip
DAY_MIN = 1440
#: EFS profile mix: mostly quiet workloads, a few heading for trouble.
PROFILE_MIX = (
    ("web-assets", 22), ("archive", 14), ("build-cache", 14), ("nightly-backup", 10),
    ("provisioned", 8), ("elastic", 8), ("analytics", 8), ("scratch", 6),
    ("draining", 6), ("io-bound", 4),
)  # fmt: skip


@dataclass(frozen=True)
class FleetSize:
    filesystems: int = 1000
    regions: int = 10
    clusters: int = 50
    arrays: int = 500
    probes: int = 1000
    days: int = 30
    minute_days: int = 7


def region_codes(n: int) -> list[str]:
    """``n`` region codes: the real ones, then numbered ones past them."""
    return [REGION_CODES[i] if i < len(REGION_CODES) else f"xx-fleet-{i + 1}" for i in range(n)]


# --- Timelines: what a subject went through ---------------------------------------------


@dataclass
class Timeline:
    """Scenario keys from given times on; the last one holds now."""

    starts: list[datetime] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def at(self, when: datetime) -> str:
        return self.keys[max(0, bisect.bisect_right(self.starts, when) - 1)]

    @property
    def current(self) -> str:
        return self.keys[-1]

    def end_in(self, key: str, began: datetime) -> None:
        """``key`` holds now, from ``began`` (or in place of the last key, begun later)."""
        if began > self.starts[-1]:
            self.starts.append(began)
            self.keys.append(key)
        else:
            self.keys[-1] = key


def timeline(
    rng: random.Random,
    start: datetime,
    now: datetime,
    current: str,
    incidents: list[str],
    baseline: str = "ok",
    episodes: int = 3,
) -> Timeline:
    """``baseline`` with up to ``episodes`` short incidents over [start, now), ending in
    ``current`` (which began a few hours ago when it is not the baseline)."""
    line = Timeline([start], [baseline])
    span = (now - start).total_seconds()
    moments = sorted(rng.uniform(0.05, 0.9) * span for _ in range(rng.randint(0, episodes)))
    for offset in moments:
        begin = start + timedelta(seconds=offset)
        if begin <= line.starts[-1] or not incidents:
            continue
        line.starts.append(begin)
        line.keys.append(rng.choice(incidents))
        end = begin + timedelta(minutes=rng.randint(20, 240))
        line.starts.append(end)
        line.keys.append(baseline)
    if current != baseline:
        line.end_in(current, now - timedelta(minutes=rng.randint(15, 12 * 60)))
    return line


@dataclass(frozen=True)
class Change:
    """One status change of a subject: a future ``alerts.Transition``."""

    created: datetime
    old_status: str
    new_status: str
    reason: str


def changes(line: Timeline, verdict_of: Any) -> list[Change]:
    """A change wherever the status of consecutive scenarios differs; the first scenario
    is where the subject started (from unknown, as a new subject does)."""
    out = []
    previous = Status.UNKNOWN.value
    for when, key in zip(line.starts, line.keys, strict=True):
        verdict: Verdict = verdict_of(key)
        if verdict.status.value != previous:
            out.append(Change(when, previous, verdict.status.value, verdict.reason))
            previous = verdict.status.value
    return out


# --- EFS ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileSystemPlan:
    index: int
    region: int  # index into the regions
    filesystem_id: str
    name: str
    profile: Profile
    phase_min: int
    seed: int
    #: Minutes (Unix minutes) without rows: an outage in the history, or the last ones of a
    #: file system that stopped reporting.
    gaps: tuple[tuple[int, int], ...] = ()


def filesystem_plans(size: FleetSize, end_minute: int, rng: random.Random) -> list[FileSystemPlan]:
    keys = [key for key, weight in PROFILE_MIX for _ in range(weight)]
    first = end_minute - size.days * DAY_MIN
    plans = []
    for i in range(size.filesystems):
        key = keys[rng.randrange(len(keys))]
        gaps: list[tuple[int, int]] = []
        if rng.random() < 0.08:  # an outage somewhere in the history: a gap in the charts
            lo = rng.randint(first, end_minute - 120)
            gaps.append((lo, lo + rng.randint(30, 300)))
        if rng.random() < 0.02:  # stopped reporting: unknown now
            gaps.append((end_minute - rng.randint(30, 600), end_minute))
        plans.append(
            FileSystemPlan(
                index=i,
                region=i % size.regions,
                filesystem_id=f"fs-{rng.getrandbits(68):017x}",
                name=f"{key}-{i:04d}",
                profile=PROFILES[key],
                phase_min=rng.randrange(DAY_MIN),
                seed=rng.randrange(1_000_000),
                gaps=tuple(sorted(gaps)),
            )
        )
    return plans


def day_rows(plan: FileSystemPlan) -> list[tuple[float | None, ...]]:
    """One simulated day of the file system: ``VALUE_FIELDS`` values for each minute of a
    UTC day (a metric its mode does not have is None). Days repeat."""
    out = []
    for minute in range(DAY_MIN):
        values = minute_values(plan.profile, plan.seed, minute, plan.phase_min)
        out.append(tuple(values.get(f) for f in VALUE_FIELDS))
    return out


def hour_rows(day: list[tuple[float | None, ...]]) -> list[tuple[float | None, ...]]:
    """The day's 24 hour rows as the rollup writes them (``history.rollup``): Sums added,
    PercentIOLimit the maximum, credits the minimum, the rest averaged; then ``minutes``."""
    out = []
    for hour in range(24):
        minutes = day[hour * 60 : hour * 60 + 60]
        values: list[float | None] = []
        for i, name in enumerate(VALUE_FIELDS):
            known = [m[i] for m in minutes if m[i] is not None]
            if not known:
                values.append(None)
            elif name in SUMMED_FIELDS:
                values.append(sum(known))
            elif name == "percent_io_limit":
                values.append(max(known))
            elif name == "burst_credit_balance":
                values.append(min(known))
            else:
                values.append(sum(known) / len(known))
        out.append((*values, len(minutes)))
    return out


def spans(plan: FileSystemPlan, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The parts of [lo, hi) (Unix minutes) that have rows: all but the plan's gaps."""
    at = lo
    for g_lo, g_hi in plan.gaps:
        if g_hi <= at or g_lo >= hi:
            continue
        if g_lo > at:
            yield at, g_lo
        at = max(at, g_hi)
    if at < hi:
        yield at, hi


def minute_at(minute: int) -> datetime:
    return datetime.fromtimestamp(minute * 60, UTC)


def filesystem_verdict_now(
    plan: FileSystemPlan, day: list[tuple[float | None, ...]], end_minute: int, now: datetime
) -> Verdict:
    """The file system's status now, from its last three hours, as collection judges it."""
    samples = [
        Sample(minute_at(m), 60, **dict(zip(VALUE_FIELDS, day[m % DAY_MIN], strict=True)))
        for lo, hi in spans(plan, end_minute - 180, end_minute)
        for m in range(lo, hi)
    ]
    return filesystem_verdict(
        samples,
        now,
        throughput_mode=plan.profile.throughput_mode,
        performance_mode=plan.profile.performance_mode,
        standard_bytes=plan.profile.standard_gib * 2**30,
    )


def filesystem_changes(
    plan: FileSystemPlan, current: Verdict, start: datetime, now: datetime, rng: random.Random
) -> list[Change]:
    """Status changes: its outages as unknown, a few warnings over the days, then now."""
    verdicts = {
        "ok": Verdict(Status.OK, "within limits"),
        "warning": Verdict(
            Status.WARNING, f"PercentIOLimit above 90 % for 15 min; {plan.name} was busy"
        ),
        "critical": Verdict(
            Status.CRITICAL, "burst credits exhausted: throughput capped at baseline"
        ),
        "current": current,
    }
    line = timeline(rng, start, now, "current", ["warning", "warning", "critical"], episodes=2)
    for lo, hi in plan.gaps:
        if hi * 60 < now.timestamp() - 60:
            when = minute_at(lo) + timedelta(minutes=15)
            if hi - lo > 15 and line.starts[0] < when:
                i = bisect.bisect_right(line.starts, when)
                line.starts[i:i] = [when, minute_at(hi)]
                line.keys[i:i] = ["gap", line.keys[i - 1]]
    verdicts["gap"] = Verdict(Status.UNKNOWN, "no data for 15 minutes")
    if current.status is Status.OK:
        line.keys = ["current" if k == "ok" else k for k in line.keys]
    return changes(line, verdicts.__getitem__)


# --- Galera -------------------------------------------------------------------------------

GALERA_SCENARIOS = ("healthy", "node-down", "donor", "flow-control", "no-quorum")


@dataclass(frozen=True)
class ClusterPlan:
    index: int
    region: int
    name: str
    data_nodes: int
    arbitrators: int
    hosts: tuple[str, ...]


def cluster_plans(size: FleetSize, rng: random.Random) -> list[ClusterPlan]:
    plans = []
    for i in range(size.clusters):
        data_nodes, arbitrators = rng.choice([(3, 0), (3, 0), (5, 0), (2, 1), (4, 1)])
        hosts = tuple(f"10.{i // 250}.{i % 250}.{n + 11}" for n in range(data_nodes))
        plans.append(
            ClusterPlan(i, i % size.regions, f"galera-{i:03d}", data_nodes, arbitrators, hosts)
        )
    return plans


def _wsrep(plan: ClusterPlan, n: int, scenario: str, up: int, size: int) -> WsrepStatus:
    comment = "Synced"
    if scenario == "donor" and n == 0:
        comment = "Donor/Desynced"
    primary = scenario != "no-quorum"
    rows = {
        "wsrep_provider_name": "Galera",
        "wsrep_provider_version": "26.4.16(r7dce5149)",
        "wsrep_cluster_status": "Primary" if primary else "non-Primary",
        "wsrep_cluster_size": str(size if primary else 1),
        "wsrep_cluster_state_uuid": f"{plan.index:08x}-1b1b-11ee-8f4a-0242ac120002",
        "wsrep_cluster_conf_id": str(12 + plan.index % 7),
        "wsrep_local_state_comment": comment if primary else "Initialized",
        "wsrep_ready": "ON" if primary else "OFF",
        "wsrep_connected": "ON",
        "wsrep_flow_control_paused": "0.004" if scenario == "flow-control" else "0.002",
        "wsrep_flow_control_paused_ns": "93600000000" if scenario == "flow-control" else "0",
        "wsrep_flow_control_sent": "41" if scenario == "flow-control" else "0",
        "wsrep_flow_control_recv": "112" if scenario == "flow-control" else "0",
        "wsrep_local_recv_queue": "17" if scenario == "flow-control" and n == 0 else "0",
        "wsrep_local_recv_queue_avg": "0.04",
        "wsrep_local_send_queue": "0",
        "wsrep_local_send_queue_avg": "0.01",
        "wsrep_cluster_weight": str(size if primary else 0),
        "wsrep_local_cert_failures": "0",
        "wsrep_incoming_addresses": ",".join(f"{h}:3306" for h in plan.hosts[:up]),
    }
    return WsrepStatus.from_rows(rows.items())


@lru_cache(maxsize=4096)
def cluster_poll(plan: ClusterPlan, scenario: str) -> tuple[Verdict, dict[str, Any], dict]:
    """(verdict, the cluster's summary fields, the snapshot's per-node facts) of one poll."""
    down = 1 if scenario == "node-down" else 0
    up = plan.data_nodes - down
    size = up + plan.arbitrators
    results = []
    for n, host in enumerate(plan.hosts):
        label = f"{host}:3306"
        if n >= up:
            results.append(
                NodeResult(label, error="(2003) Can't connect to MySQL server (timed out)")
            )
        else:
            results.append(NodeResult(label, status=_wsrep(plan, n, scenario, up, size)))
    view = build_view(results)
    # Flow control: 27 % of the minute between two polls, asked for by the first node.
    share = 0.27 if scenario == "flow-control" else 0.0
    flow_control = {
        r.name: Paused(share, 60.0, sent=share > 0 and i == 0)
        for i, r in enumerate(results)
        if r.status is not None
    }
    verdict = cluster_verdict(
        view,
        expected_data_nodes=plan.data_nodes,
        expected_arbitrators=plan.arbitrators,
        flow_control=flow_control,
    )
    tolerance = view.tolerance
    paused = [n.status.flow_control_paused for n in view.nodes if n.status is not None]
    queues = [n.status.local_recv_queue for n in view.nodes if n.status is not None]
    summary = {
        "cluster_size": view.cluster_size,
        "primary": bool(view.primary),
        "data_nodes": view.data_nodes if view.primary else None,
        "arbitrators": view.arbitrators,
        "one_by_one": tolerance.one_by_one if tolerance else None,
        "simultaneous": tolerance.simultaneous if tolerance else None,
        "flow_control_paused": max((p for p in paused if p is not None), default=None),
        "flow_control_paused_share": share if flow_control else None,
        "recv_queue": max((q for q in queues if q is not None), default=None),
        "send_queue": 0 if flow_control else None,
        "cluster_weight": view.cluster_weight,
    }
    return verdict, summary, _node_facts(view, share)


def _node_facts(view: ClusterView, share: float) -> dict[str, dict[str, Any]]:
    """The snapshot's facts of each node of ``view``, by name, as collection stores them
    (``share``: the flow-control pause of the minute between two polls)."""
    nodes = {}
    for node in view.nodes:
        facts: dict[str, Any] = {"state": str(node.state), "detail": node.detail}
        if node.status is not None:
            facts.update(
                local_state_comment=node.status.local_state_comment,
                cluster_status=node.status.cluster_status,
                cluster_conf_id=node.status.cluster_conf_id,
                ready=node.status.ready,
                recv_queue_avg=node.status.local_recv_queue_avg,
                send_queue_avg=node.status.local_send_queue_avg,
                flow_control_paused=node.status.flow_control_paused,
                flow_control_paused_share=share,
                interval_s=60.0,
                recv_queue=node.status.local_recv_queue,
                send_queue=node.status.local_send_queue,
                flow_control_sent=node.status.flow_control_sent,
                flow_control_recv=node.status.flow_control_recv,
                cert_failures=0,
                weight=node.weight,
            )
        nodes[node.name] = facts
    return nodes


def headroom(summary: dict[str, Any]) -> str | None:
    if summary["one_by_one"] is None or summary["simultaneous"] is None:
        return None
    return describe(FaultTolerance(summary["one_by_one"], summary["simultaneous"]))


def cluster_timeline(rng: random.Random, start: datetime, now: datetime) -> Timeline:
    current = rng.choices(GALERA_SCENARIOS, weights=(80, 8, 5, 4, 3))[0]
    incidents = ["node-down", "node-down", "donor", "flow-control", "no-quorum"]
    return timeline(rng, start, now, current, incidents, baseline="healthy", episodes=3)


# --- RAID ---------------------------------------------------------------------------------

RAID_LAYOUTS = {"iscsi-raid0-over-raid10": 6, "raid0-over-raid1": 3, "raid6": 1}
RAID_SCENARIOS = ("clean", "degraded", "rebuilding")
_BLOCKS = 976630272  # a 1 TB disk less the superblock


def _ending(lines: list[str], scenario: str, percent: float, speed: int, bitmap: str) -> str:
    """The last array's progress line when rebuilding, its bitmap, and the end of the text."""
    if scenario == "rebuilding":
        lines.append(recovery_line(_BLOCKS, percent, speed))
    lines += [f"      bitmap: {bitmap}, 65536KB chunk", "", "unused devices: <none>", ""]
    return "\n".join(lines)


def raid1_pair_mdstat(scenario: str) -> str:
    """md2, a RAID-0 over two RAID-1 mirrors md0 and md1 (four disks)."""
    md0_disks = "[2/1] [U_]" if scenario != "clean" else "[2/2] [UU]"
    sdb = "sdb[1](F)" if scenario == "degraded" else "sdb[1]"
    lines = [
        "Personalities : [raid1] [raid0] ",
        "md2 : active raid0 md1[1] md0[0]",
        f"      {_BLOCKS * 2} blocks super 1.2 512k chunks",
        "      ",
        "md1 : active raid1 sdd[1] sdc[0]",
        f"      {_BLOCKS} blocks super 1.2 [2/2] [UU]",
        "      bitmap: 0/8 pages [0KB], 65536KB chunk",
        "",
        f"md0 : active raid1 {sdb} sda[0]",
        f"      {_BLOCKS} blocks super 1.2 {md0_disks}",
    ]
    return _ending(lines, scenario, 42.0, 154321, "1/8 pages [4KB]")


def raid6_mdstat(scenario: str) -> str:
    disks = ["sdg[5]", "sdf[4]", "sde[3]", "sdd[2]", "sdc[1]", "sdb[0]"]
    status = "[6/6] [UUUUUU]"
    if scenario == "degraded":
        disks[0], status = "sdg[5](F)", "[6/5] [UUUUU_]"
    elif scenario == "rebuilding":
        status = "[6/5] [UUUUU_]"
    lines = [
        "Personalities : [raid6] [raid5] [raid4] ",
        f"md0 : active raid6 {' '.join(disks)}",
        f"      {_BLOCKS * 4} blocks super 1.2 level 6, 512k chunk, algorithm 2 {status}",
    ]
    return _ending(lines, scenario, 17.0, 95012, "2/8 pages [8KB]")


def raid_mdstat(layout: str, scenario: str) -> str:
    if layout == "iscsi-raid0-over-raid10":
        if scenario == "degraded":
            return seed_layout_mdstat(failed=["sdh"])
        if scenario == "rebuilding":
            return seed_layout_mdstat(rebuilding="sdh", percent=37.4)
        return seed_layout_mdstat()
    if layout == "raid0-over-raid1":
        return raid1_pair_mdstat(scenario)
    return raid6_mdstat(scenario)


@lru_cache(maxsize=64)
def raid_report(layout: str, scenario: str) -> tuple[ArrayFacts, ...]:
    rules = SEED_RULES if layout == "iscsi-raid0-over-raid10" else {}
    noun = "storage server" if rules else "failure domain"
    return assess(raid_mdstat(layout, scenario), None, rules, noun).arrays


@dataclass(frozen=True)
class HostPlan:
    index: int
    region: int
    name: str
    layout: str


def host_plans(size: FleetSize) -> list[HostPlan]:
    """Hosts whose arrays add up to ``size.arrays``: mostly small nested ones."""
    cycle = ["raid0-over-raid1", "raid0-over-raid1", "iscsi-raid0-over-raid10", "raid6"]
    plans: list[HostPlan] = []
    left = size.arrays
    while left > 0:
        layout = cycle[len(plans) % len(cycle)]
        if RAID_LAYOUTS[layout] > left:
            layout = "raid0-over-raid1" if left >= 3 else "raid6"
        i = len(plans)
        plans.append(HostPlan(i, i % size.regions, f"storage-{i:04d}", layout))
        left -= RAID_LAYOUTS[layout]
    return plans


def host_timeline(rng: random.Random, start: datetime, now: datetime) -> Timeline:
    current = rng.choices(RAID_SCENARIOS, weights=(85, 9, 6))[0]
    line = Timeline([start], ["clean"])
    span = (now - start).total_seconds()
    for _ in range(rng.randint(0, 2)):  # a disk failed, was replaced and rebuilt
        begin = start + timedelta(seconds=rng.uniform(0.05, 0.8) * span)
        if begin <= line.starts[-1]:
            continue
        rebuild = begin + timedelta(hours=rng.randint(2, 30))
        line.starts += [begin, rebuild, rebuild + timedelta(hours=rng.randint(1, 4))]
        line.keys += ["degraded", "rebuilding", "clean"]
    if current != "clean":
        line.end_in(current, now - timedelta(minutes=rng.randint(20, 600)))
    return line


# --- Probes -------------------------------------------------------------------------------

#: (server, idle timeout s or None at the cap, expected range or None, Keep-Alive header)
PROBE_KINDS = (
    ("nginx", 75.0, (60.0, 75.0), 75.0),
    ("alb", 60.0, (55.0, 65.0), None),
    ("apache", 5.0, (4.0, 6.0), 5.0),
    ("haproxy", 50.0, None, None),
    ("cloudfront", None, None, None),
    ("envoy", 300.0, (250.0, 350.0), None),
)
PROBE_SCENARIOS = ("ok", "drift", "down", "http-5xx")


@dataclass(frozen=True)
class TargetPlan:
    index: int
    region: int
    name: str
    url: str
    kind: int
    interval_s: int

    @property
    def expected(self) -> tuple[float, float] | None:
        return PROBE_KINDS[self.kind][2]


def target_plans(size: FleetSize, rng: random.Random) -> list[TargetPlan]:
    plans = []
    for i in range(size.probes):
        kind = rng.randrange(len(PROBE_KINDS))
        name = f"{PROBE_KINDS[kind][0]}-{i:04d}"
        interval = rng.choice((900, 900, 1800, 3600))
        plans.append(
            TargetPlan(i, i % size.regions, name, f"https://{name}.fleet.example/", kind, interval)
        )
    return plans


def measurement(plan: TargetPlan, scenario: str, started: datetime) -> Measurement:
    _server, idle, _expected, header = PROBE_KINDS[plan.kind]
    if scenario == "down":
        return Measurement(
            plan.url, started, dns_s=0.004, error="connect: [Errno 111] Connection refused"
        )
    if scenario == "drift" and idle is not None:
        idle = round(idle * 0.4, 1) or 1.0
    cap = 300.0
    return Measurement(
        plan.url,
        started,
        peer_address=f"192.0.2.{plan.index % 250 + 1}",
        status_code=503 if scenario == "http-5xx" else 200,
        idle_timeout_s=idle,
        closed_by="server" if idle is not None else "cap",
        closed_with="fin" if idle is not None else None,
        advertised_timeout_s=header,
        advertised_timeout_matched=None if header is None else idle == header,
        reuse_confirmed=True,
        cap_s=cap,
        dns_s=0.003,
        connect_s=0.011 + plan.index % 7 / 1000,
        tls_s=0.024,
        first_byte_s=0.041 + plan.index % 13 / 1000,
        total_s=0.085,
        tls_expires=started + timedelta(days=60 + plan.index % 200),
    )


def probe_result(plan: TargetPlan, scenario: str, started: datetime) -> tuple[Measurement, Verdict]:
    m = measurement(plan, scenario, started)
    return m, probe_verdict(m, expected_range=plan.expected, now=started)


def target_timeline(rng: random.Random, start: datetime, now: datetime) -> Timeline:
    current = rng.choices(PROBE_SCENARIOS, weights=(84, 8, 5, 3))[0]
    return timeline(rng, start, now, current, ["down", "drift", "http-5xx"], episodes=3)
