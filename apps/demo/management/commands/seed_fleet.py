"""Seed a synthetic fleet at scale (benchmarks, trying Vigil with a full dashboard).

    python manage.py seed_fleet --filesystems 1000 --regions 10 --clusters 50 --arrays 500 \\
        --probes 1000 --days 30 [--minute-days 7] [--seed 8] [--replace]

Everything belongs to one non-demo account, "Seeded fleet", so ``--replace`` deletes the
previous seed and nothing else. What the rows hold comes from ``apps.demo.fleet`` (pure); this
command only writes them: subjects with ``bulk_create``, the large history tables (EFS minutes
and hours, Galera snapshots, probe results) with PostgreSQL's ``COPY`` or SQLite's
``executemany``, in the order collection would write them (every region's file systems minute
after minute, five minutes at a time), so a file system's rows are spread over the table as in
production. The seeded fleet is a snapshot: nothing polls it (its next collections are due in
ten years), and workers running against the database mark its subjects unknown as their data
ages, as they would for a real fleet that stopped reporting. Use a database of its own.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from auditlog.context import disable_auditlog
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, models, transaction
from django.utils import timezone

from apps.alerts.models import Transition
from apps.demo import fleet
from apps.efs import pricing
from apps.efs.metrics import GIB, VALUE_FIELDS
from apps.efs.models import FileSystem, MetricHour, MetricMinute, RegionCollection
from apps.galera.models import Cluster, Node, Snapshot
from apps.lib import partitions
from apps.lib.keep import allow_deleting_history
from apps.lib.status import Status, Verdict
from apps.probes.models import Result, Target
from apps.raid.models import Array, Host, Member
from apps.raid.report import ARRAY_FACT_FIELDS
from apps.regions.models import Account, Region

FAR = timedelta(days=3650)  # "next due" of the seeded subjects: never, in practice
RUN_MINUTES = 5  # minute rows are written as collection would: 5 minutes of a region at a time
FLUSH_ROWS = 20_000


class Progress:
    """One stderr line per step, rewritten in place: label, rows done of total, percent, time."""

    def __init__(self, out, label: str, total: int) -> None:
        self.out, self.label, self.total = out, label, max(total, 1)
        self.done, self.started = 0, time.perf_counter()
        self.shown = self.started
        self.tty = hasattr(out, "isatty") and out.isatty()

    def add(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.shown >= (0.2 if self.tty else 10.0):
            self.shown = now
            self._line("\r" if self.tty else "", "" if self.tty else "\n")

    def close(self) -> float:
        elapsed = time.perf_counter() - self.started
        self._line("\r" if self.tty else "", "\n")
        return elapsed

    def _line(self, start: str, end: str) -> None:
        pct = 100 * self.done / self.total
        elapsed = time.perf_counter() - self.started
        self.out.write(
            f"{start}  {self.label:<22}{self.done:>12,} rows {pct:5.1f} %  {elapsed:6.1f} s{end}"
        )
        self.out.flush()


# --- Writing rows fast ------------------------------------------------------------------


def _copy_value(value: Any) -> str:
    """A value in PostgreSQL's COPY text format."""
    if value is None:
        return "\\N"
    if value is True:
        return "t"
    if value is False:
        return "f"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        value = json.dumps(value)
    if isinstance(value, str):
        return (
            value.replace("\\", "\\\\")
            .replace("\t", "\\t")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
    return repr(value) if isinstance(value, float) else str(value)


def _sqlite_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value


class Writer:
    """Insert many rows into one table: COPY on PostgreSQL, executemany on SQLite."""

    def __init__(self, model: type[models.Model], columns: Sequence[str], progress: Progress):
        self.table = model._meta.db_table
        self.columns = list(columns)
        self.progress = progress
        self.postgres = connection.vendor == "postgresql"
        self.buffer: list = []

    def rows(self, rows: Iterable[tuple]) -> None:
        """Rows of Python values, in ``columns`` order."""
        if self.postgres:
            self.lines("\t".join(map(_copy_value, row)) + "\n" for row in rows)
            return
        for row in rows:
            self.buffer.append(tuple(map(_sqlite_value, row)))
            if len(self.buffer) >= FLUSH_ROWS:
                self.flush()

    def lines(self, lines: Iterable[str]) -> None:
        """PostgreSQL only: rows already in COPY text format, newline included."""
        for line in lines:
            self.buffer.append(line)
            if len(self.buffer) >= FLUSH_ROWS:
                self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        q = connection.ops.quote_name
        names = ", ".join(q(c) for c in self.columns)
        with connection.cursor() as cursor:
            if self.postgres:
                with cursor.cursor.copy(f"COPY {q(self.table)} ({names}) FROM STDIN") as copy:
                    copy.write("".join(self.buffer))
            else:
                marks = ", ".join("?" * len(self.columns))
                sql = f"INSERT INTO {q(self.table)} ({names}) VALUES ({marks})"
                connection.connection.executemany(sql, self.buffer)
        self.progress.add(len(self.buffer))
        self.buffer = []


def _pg_time(minute: int) -> str:
    return datetime.fromtimestamp(minute * 60, UTC).strftime("%Y-%m-%d %H:%M:%S+00")


def _sqlite_time(minute: int) -> str:
    return datetime.fromtimestamp(minute * 60, UTC).strftime("%Y-%m-%d %H:%M:%S")


# --- The command -----------------------------------------------------------------------


class Command(BaseCommand):
    help = "Seed a synthetic fleet (EFS, Galera, RAID, probes, with history) for benchmarks."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--filesystems", type=int, default=1000)
        parser.add_argument("--regions", type=int, default=10)
        parser.add_argument("--clusters", type=int, default=50)
        parser.add_argument("--arrays", type=int, default=500)
        parser.add_argument("--probes", type=int, default=1000)
        parser.add_argument("--days", type=int, default=30, help="days of history")
        parser.add_argument(
            "--minute-days",
            type=int,
            default=None,
            help="days of EFS minute rows (default: VIGIL_EFS_MINUTE_RETENTION_DAYS); "
            "hourly rows before that",
        )
        parser.add_argument("--seed", type=int, default=8, help="random seed")
        parser.add_argument(
            "--replace", action="store_true", help="delete the previous seeded fleet first"
        )
        parser.add_argument(
            "--scale",
            type=int,
            default=1,
            help="multiply the seeded probe results and Galera snapshots by this (PostgreSQL): "
            "the history tables at ten times the fleet with --scale 10; on an existing seed "
            "without --replace, only that",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        size = _fleet_size(options)
        existing = Account.objects.filter(name=fleet.ACCOUNT_NAME, is_demo=False).first()
        if options["scale"] < 1:
            raise CommandError("--scale must be at least 1.")
        if options["scale"] > 1 and connection.vendor != "postgresql":
            raise CommandError("--scale needs PostgreSQL.")
        if existing is not None and not options["replace"] and options["scale"] > 1:
            self.scale_history(existing, options["scale"])
            return
        if existing is not None and not options["replace"]:
            raise CommandError(
                f"A seeded fleet exists (account {fleet.ACCOUNT_NAME!r}); "
                "give --replace to delete it and seed again."
            )
        started = time.perf_counter()
        self.timings: dict[str, float] = {}
        self.rng = random.Random(options["seed"])
        if existing is not None:
            t = time.perf_counter()
            delete_seed(existing)
            self.timings["delete previous seed"] = time.perf_counter() - t
        self.now = timezone.now().replace(microsecond=0)
        self.start = self.now - timedelta(days=size.days)
        with transaction.atomic():
            self.account = Account.objects.create(
                name=fleet.ACCOUNT_NAME,
                is_demo=False,
                discovered=self.now,
                next_discovery=self.now + FAR,
            )
            self.regions = Region.objects.bulk_create(
                Region(
                    account=self.account,
                    code=code,
                    name=code,
                    opt_in_status=Region.OptIn.NOT_REQUIRED,
                )
                for code in fleet.region_codes(size.regions)
            )
            self.changes: list[tuple[models.Model, fleet.Change]] = []
            self.seed_efs(size)
            self.seed_galera(size)
            self.seed_raid(size)
            self.seed_probes(size)
            self.seed_transitions()
        if options["scale"] > 1:
            self.scale_history(self.account, options["scale"])
        if connection.vendor == "postgresql":
            t = time.perf_counter()
            _analyze()
            self.timings["ANALYZE"] = time.perf_counter() - t
        total = time.perf_counter() - started
        self.report(total)

    # --- EFS ----------------------------------------------------------------------------

    def seed_efs(self, size: fleet.FleetSize) -> None:
        t = time.perf_counter()
        end_minute = int(self.now.timestamp()) // 60 - 3  # CloudWatch settles for 3 minutes
        plans = fleet.filesystem_plans(size, end_minute, self.rng)
        days, filesystems = self._filesystems(plans, end_minute)
        for plan, fs in zip(plans, filesystems, strict=True):
            fs_changes = fleet.filesystem_changes(
                plan, _verdict_of(fs), self.start, self.now, self.rng
            )
            self._changes(fs, fs_changes)
        RegionCollection.objects.bulk_create(
            RegionCollection(
                region=region,
                next_due=self.now + FAR,
                next_discovery=self.now + FAR,
                next_rollup=self.now + FAR,
                last_success=self.now,
                api_calls=2,
            )
            for region in self.regions
        )
        self.timings["EFS file systems"] = time.perf_counter() - t

        minute_start = fleet.minute_at(end_minute - size.minute_days * DAY_MIN)
        minute_start = minute_start.replace(minute=0)
        first_minute = int(minute_start.timestamp()) // 60
        hour_start = (self.start.replace(minute=0, second=0)).timestamp() // 60
        by_region: dict[int, list[tuple[fleet.FileSystemPlan, int]]] = {}
        for plan, fs in zip(plans, filesystems, strict=True):
            by_region.setdefault(plan.region, []).append((plan, fs.pk))
        self._efs_minutes(size, by_region, days, minute_start, end_minute)
        hours = range(int(hour_start) // 60, first_minute // 60)
        self._efs_hours(size, by_region, days, hours)
        self.counts["EFS file systems"] = len(filesystems)

        # What each file system would cost in each throughput mode, as collection stores it.
        t = time.perf_counter()
        for rc in RegionCollection.objects.filter(region__in=self.regions):
            pricing.price_region(rc, self.now, force=True)
        self.timings["EFS mode comparison"] = time.perf_counter() - t

    def _filesystems(
        self, plans: Sequence[fleet.FileSystemPlan], end_minute: int
    ) -> tuple[dict[int, Any], list[FileSystem]]:
        """Each plan's day of minute rows (by plan index), and its file system, judged on
        them and saved."""
        end = fleet.minute_at(end_minute)
        days = {}
        objects = []
        for plan in plans:
            day = fleet.day_rows(plan)
            days[plan.index] = day
            verdict = fleet.filesystem_verdict_now(plan, day, end_minute, self.now)
            p = plan.profile
            figures = {
                k: v if v is None or isinstance(v, bool | int | float | str) else str(v)
                for k, v in verdict.figures.items()
            }
            objects.append(
                FileSystem(
                    region=self.regions[plan.region],
                    filesystem_id=plan.filesystem_id,
                    name=plan.name,
                    tags={"Name": plan.name, "team": f"team-{plan.index % 17}"},
                    performance_mode=p.performance_mode,
                    throughput_mode=p.throughput_mode,
                    provisioned_mibps=p.provisioned_mibps,
                    size_total_bytes=int((p.standard_gib + p.ia_gib + p.archive_gib) * GIB),
                    size_standard_bytes=int(p.standard_gib * GIB),
                    size_ia_bytes=int(p.ia_gib * GIB),
                    size_archive_bytes=int(p.archive_gib * GIB),
                    created_at=self.start - timedelta(days=plan.index % 400),
                    discovered=self.start,
                    collected_until=end,
                    status=verdict.status.value,
                    reason=verdict.reason,
                    figures=figures,
                )
            )
        return days, FileSystem.objects.bulk_create(objects, batch_size=500)

    def _efs_minutes(
        self,
        size: fleet.FleetSize,
        by_region: dict[int, list[tuple[fleet.FileSystemPlan, int]]],
        days: dict[int, Any],
        minute_start: datetime,
        end_minute: int,
    ) -> None:
        """The minute rows from ``minute_start``, region by region, minute after minute."""
        first_minute = int(minute_start.timestamp()) // 60
        total = size.filesystems * (end_minute - first_minute)
        progress = Progress(self.stderr, "EFS minute rows", total)
        if partitions.partitioned(MetricMinute):  # each day's rows in its own partition
            partitions.ensure(MetricMinute, minute_start.date(), self.now.date())
        writer = Writer(MetricMinute, ["filesystem_id", "ts", *VALUE_FIELDS], progress)
        for members in by_region.values():
            if writer.postgres:
                fragments = {
                    pk: ["\t".join(map(_copy_value, row)) for row in days[plan.index]]
                    for plan, pk in members
                }
                writer.lines(
                    f"{pk}\t{ts}\t{fragments[pk][minute % DAY_MIN]}\n"
                    for minute, ts, pk in _minute_cells(members, first_minute, end_minute, _pg_time)
                )
            else:
                writer.rows(
                    (pk, ts, *days[index][minute % DAY_MIN])
                    for minute, ts, pk, index in _minute_cells(
                        members, first_minute, end_minute, _sqlite_time, with_index=True
                    )
                )
        writer.flush()
        self.timings["EFS minute rows"] = progress.close()
        self.counts = {"EFS minute rows": progress.done}

    def _efs_hours(
        self,
        size: fleet.FleetSize,
        by_region: dict[int, list[tuple[fleet.FileSystemPlan, int]]],
        days: dict[int, Any],
        hours: range,
    ) -> None:
        """The hour rows of ``hours`` (before the minute rows start), outside each plan's gaps."""
        progress = Progress(self.stderr, "EFS hour rows", 0)
        writer = Writer(MetricHour, ["filesystem_id", "ts", *VALUE_FIELDS, "minutes"], progress)
        progress.total = max(1, len(hours) * size.filesystems)
        for members in by_region.values():
            patterns = {pk: fleet.hour_rows(days[plan.index]) for plan, pk in members}
            gaps = {pk: plan.gaps for plan, pk in members}
            writer.rows(
                (pk, fleet.minute_at(hour * 60), *patterns[pk][hour % 24])
                for hour in hours
                for plan, pk in members
                if not any(lo <= hour * 60 < hi for lo, hi in gaps[pk])
            )
        writer.flush()
        self.timings["EFS hour rows"] = progress.close()
        self.counts["EFS hour rows"] = progress.done

    # --- Galera -------------------------------------------------------------------------

    def seed_galera(self, size: fleet.FleetSize) -> None:
        t = time.perf_counter()
        plans = fleet.cluster_plans(size, self.rng)
        lines = {
            plan.index: fleet.cluster_timeline(self.rng, self.start, self.now) for plan in plans
        }
        interval = 300
        last_poll = self.now - timedelta(seconds=self.rng.randint(5, 60))
        objects = []
        for plan in plans:
            verdict, summary, _nodes = fleet.cluster_poll(plan, lines[plan.index].current)
            objects.append(
                Cluster(
                    region=self.regions[plan.region],
                    name=plan.name,
                    expected_data_nodes=plan.data_nodes,
                    expected_arbitrators=plan.arbitrators,
                    interval_s=interval,
                    next_due=self.now + FAR,
                    created=self.start,
                    polled_at=last_poll,
                    status=verdict.status.value,
                    reason=verdict.reason,
                    **summary,
                )
            )
        clusters = Cluster.objects.bulk_create(objects, batch_size=500)
        nodes = []
        for plan, cluster in zip(plans, clusters, strict=True):
            _verdict, _summary, facts = fleet.cluster_poll(plan, lines[plan.index].current)
            for host in plan.hosts:
                seen = facts.get(f"{host}:3306", {})
                nodes.append(
                    Node(
                        cluster=cluster,
                        host=host,
                        port=3306,
                        password_env="GALERA_FLEET_PASSWORD",
                        state=seen.get("state", ""),
                        detail=seen.get("detail", ""),
                    )
                )
            self._changes(
                cluster,
                fleet.changes(lines[plan.index], lambda key, p=plan: fleet.cluster_poll(p, key)[0]),
            )
        Node.objects.bulk_create(nodes, batch_size=1000)
        self.timings["Galera clusters"] = time.perf_counter() - t
        self.counts["Galera clusters"] = len(clusters)
        self.counts["Galera nodes"] = len(nodes)
        self._galera_snapshots(plans, clusters, lines, last_poll, interval)

    def _galera_snapshots(
        self,
        plans: Sequence[fleet.ClusterPlan],
        clusters: Sequence[Cluster],
        lines: dict[int, fleet.Timeline],
        last_poll: datetime,
        interval: int,
    ) -> None:
        """A snapshot of each cluster every ``interval`` seconds up to ``last_poll``, each
        the poll of its timeline's scenario then."""
        polls = int((last_poll - self.start).total_seconds()) // interval
        progress = Progress(self.stderr, "Galera snapshots", polls * len(clusters))
        columns = [
            "cluster_id", "created", "status", "reason", "cluster_size", "primary", "data_nodes",
            "arbitrators", "one_by_one", "simultaneous", "split_brain", "flow_control_paused",
            "flow_control_paused_share", "recv_queue", "send_queue", "cluster_weight", "nodes",
        ]  # fmt: skip
        writer = Writer(Snapshot, columns, progress)
        for plan, cluster in zip(plans, clusters, strict=True):
            line = lines[plan.index]

            def rows(plan=plan, cluster=cluster, line=line) -> Iterator[tuple]:
                for n in range(polls, 0, -1):
                    when = last_poll - timedelta(seconds=(n - 1) * interval)
                    verdict, s, facts = fleet.cluster_poll(plan, line.at(when))
                    yield (
                        cluster.pk, when, verdict.status.value, verdict.reason,
                        s["cluster_size"], s["primary"], s["data_nodes"], s["arbitrators"],
                        s["one_by_one"], s["simultaneous"], False, s["flow_control_paused"],
                        s["flow_control_paused_share"], s["recv_queue"], s["send_queue"],
                        s["cluster_weight"], facts,
                    )  # fmt: skip

            writer.rows(rows())
        writer.flush()
        self.timings["Galera snapshots"] = progress.close()
        self.counts["Galera snapshots"] = progress.done

    # --- RAID ---------------------------------------------------------------------------

    def seed_raid(self, size: fleet.FleetSize) -> None:
        t = time.perf_counter()
        plans = fleet.host_plans(size)
        lines = {plan.index: fleet.host_timeline(self.rng, self.start, self.now) for plan in plans}
        hosts = Host.objects.bulk_create(
            [
                Host(
                    name=plan.name,
                    region=self.regions[plan.region],
                    collection=Host.Collection.PUSH,
                    domain_rules=fleet.SEED_RULES if plan.layout.startswith("iscsi") else {},
                    domain_noun="storage server" if plan.layout.startswith("iscsi") else "disk",
                    next_due=self.now + FAR,
                    last_report=self.now - timedelta(seconds=self.rng.randint(5, 55)),
                    mdstat_text=fleet.raid_mdstat(plan.layout, lines[plan.index].current),
                    created=self.start,
                )
                for plan in plans
            ],
            batch_size=500,
        )
        arrays, members, parents = self._raid_arrays(plans, hosts, lines)
        Array.objects.bulk_create(arrays, batch_size=500)
        by_host_name = {(a.host_id, a.name): a for a in arrays}
        for array, parent in parents:
            array.parent = by_host_name[(array.host_id, parent)]
        Array.objects.bulk_update([a for a, _ in parents], ["parent"], batch_size=500)
        Member.objects.bulk_create(
            (Member.of(array, position, m) for array, position, m in members),
            batch_size=1000,
        )
        self.timings["RAID hosts, arrays, members"] = time.perf_counter() - t
        self.counts["RAID hosts"] = len(hosts)
        self.counts["RAID arrays"] = len(arrays)
        self.counts["RAID members"] = len(members)

    def _raid_arrays(
        self,
        plans: Sequence[fleet.HostPlan],
        hosts: Sequence[Host],
        lines: dict[int, fleet.Timeline],
    ) -> tuple[list[Array], list[tuple[Array, int, Any]], list[tuple[Array, str]]]:
        """Each host's arrays as its report now reads them (not saved yet), with their history of
        changes; their members (array, position, member) and the nested ones' parents (array,
        parent's name)."""
        arrays: list[Array] = []
        members: list[tuple[Array, int, Any]] = []
        parents: list[tuple[Array, str]] = []
        for plan, host in zip(plans, hosts, strict=True):
            line = lines[plan.index]
            by_name = {}
            for facts in fleet.raid_report(plan.layout, line.current):
                array = Array(
                    host=host,
                    region=host.region,
                    name=facts.name,
                    status=facts.verdict.status.value,
                    reason=facts.verdict.reason,
                    present=True,
                    last_seen=host.last_report,
                    **{f: getattr(facts, f) for f in _ARRAY_FIELDS},
                )
                arrays.append(array)
                by_name[facts.name] = array
                members += [(array, pos, m) for pos, m in enumerate(facts.members)]
                if facts.parent:
                    parents.append((array, facts.parent))
            for name, array in by_name.items():

                def verdict_of(key: str, layout=plan.layout, name=name):
                    found = [a for a in fleet.raid_report(layout, key) if a.name == name]
                    return found[0].verdict

                self._changes(array, fleet.changes(line, verdict_of), label=f"{host.name}:{name}")
        return arrays, members, parents

    # --- Probes -------------------------------------------------------------------------

    def seed_probes(self, size: fleet.FleetSize) -> None:
        t = time.perf_counter()
        plans = fleet.target_plans(size, self.rng)
        lines = {
            plan.index: fleet.target_timeline(self.rng, self.start, self.now) for plan in plans
        }
        objects = []
        for plan in plans:
            _m, verdict = fleet.probe_result(plan, lines[plan.index].current, self.now)
            low, high = plan.expected or (None, None)
            objects.append(
                Target(
                    region=self.regions[plan.region],
                    name=plan.name,
                    url=plan.url,
                    interval_s=plan.interval_s,
                    expected_min_s=low,
                    expected_max_s=high,
                    cap_s=300.0,
                    next_due=self.now + FAR,
                    created=self.start,
                    status=verdict.status.value,
                    reason=verdict.reason,
                )
            )
        targets = Target.objects.bulk_create(objects, batch_size=500)
        for plan, target in zip(plans, targets, strict=True):
            self._changes(
                target,
                fleet.changes(
                    lines[plan.index], lambda k, p=plan: fleet.probe_result(p, k, self.now)[1]
                ),
            )
        self.timings["Probe targets"] = time.perf_counter() - t

        total = sum(int(size.days * 86400 // p.interval_s) for p in plans)
        progress = Progress(self.stderr, "Probe results", total)
        columns = [
            "target_id", "created", "started_at", "peer_address", "status_code",
            "idle_timeout_s", "closed_by", "closed_with", "closed_right_after_response",
            "connection_close_announced", "advertised_timeout_s", "advertised_timeout_matched",
            "reuse_confirmed", "cap_s", "dns_s", "connect_s", "tls_s", "first_byte_s", "total_s",
            "tls_expires", "error", "status", "reason",
        ]  # fmt: skip
        if partitions.partitioned(Result):  # each day's rows in its own partition
            partitions.ensure(Result, self.start.date(), self.now.date())
        writer = Writer(Result, columns, progress)
        for plan, target in zip(plans, targets, strict=True):
            writer.rows(self._results(plan, target, lines[plan.index]))
        writer.flush()
        self.timings["Probe results"] = progress.close()
        self.counts["Probe targets"] = len(targets)
        self.counts["Probe results"] = progress.done

    def _results(self, plan: fleet.TargetPlan, target: Target, line: fleet.Timeline):
        cache: dict[str, tuple] = {}
        step = timedelta(seconds=plan.interval_s)
        offset = timedelta(seconds=self.rng.randrange(plan.interval_s))
        n = int((self.now - self.start) / step)
        for i in range(n):
            started = self.start + offset + i * step
            key = line.at(started)
            if key not in cache:
                m, verdict = fleet.probe_result(plan, key, self.start)
                cache[key] = (m, verdict)
            m, verdict = cache[key]
            took = (m.total_s or 0.0) + (m.idle_timeout_s or (m.cap_s if m.total_s else 0.0))
            yield (
                target.pk, started + timedelta(seconds=took), started, m.peer_address or "",
                m.status_code, m.idle_timeout_s, m.closed_by or "", m.closed_with or "",
                m.closed_right_after_response, m.connection_close_announced,
                m.advertised_timeout_s, m.advertised_timeout_matched, m.reuse_confirmed, m.cap_s,
                m.dns_s, m.connect_s, m.tls_s, m.first_byte_s, m.total_s,
                None if m.tls_expires is None else m.tls_expires + (started - self.start),
                m.error or "", verdict.status.value, verdict.reason,
            )  # fmt: skip

    # --- Transitions --------------------------------------------------------------------

    def _changes(
        self, subject: models.Model, found: list[fleet.Change], label: str | None = None
    ) -> None:
        subject._label = label or str(subject)[:255]
        self.changes += [(subject, change) for change in found]
        if found:
            subject.status_changed = found[-1].created

    def seed_transitions(self) -> None:
        t = time.perf_counter()
        types: dict[type, ContentType] = {}
        rows = []
        changed: dict[type, list[models.Model]] = {}
        for subject, change in self.changes:
            model = type(subject)
            if model not in types:
                types[model] = ContentType.objects.get_for_model(model)
            rows.append(
                Transition(
                    content_type=types[model],
                    object_id=subject.pk,
                    region_id=subject.region_id,
                    concern=subject.concern,
                    subject_label=subject._label,
                    old_status=change.old_status,
                    new_status=change.new_status,
                    reason=change.reason,
                    created=change.created,
                    processed=change.created,  # history: the alert pipeline never sends it
                )
            )
            changed.setdefault(model, {})[subject.pk] = subject
        Transition.objects.bulk_create(rows, batch_size=1000)
        for model, subjects in changed.items():
            model.objects.bulk_update(list(subjects.values()), ["status_changed"], batch_size=500)
        self.timings["Transitions"] = time.perf_counter() - t
        self.counts["Transitions"] = len(rows)

    def scale_history(self, account: Account, factor: int) -> None:
        """``factor - 1`` more copies of the account's probe results and snapshots, each copy a
        few milliseconds before its original (so keyset order stays strict), one statement and
        one transaction per copy."""
        q = connection.ops.quote_name
        for model, subject, key in (
            (Result, Target, "target_id"),
            (Snapshot, Cluster, "cluster_id"),
        ):
            ids = list(subject.objects.filter(region__account=account).values_list("pk", flat=True))
            columns = [f.column for f in model._meta.concrete_fields if not f.primary_key]
            shifted = {"created", "started_at"}
            picks = ", ".join(
                f"{q(c)} - %s * interval '1 millisecond'" if c in shifted else q(c) for c in columns
            )
            sql = (
                f"INSERT INTO {q(model._meta.db_table)} ({', '.join(map(q, columns))}) "
                f"SELECT {picks} FROM {q(model._meta.db_table)} WHERE {q(key)} = ANY(%s) "
                f"AND {q('id')} <= %s"
            )
            t = time.perf_counter()
            last = model.objects.aggregate(m=models.Max("pk"))["m"] or 0  # the originals
            added = 0
            for copy in range(1, factor):
                shifts = [copy] * sum(c in shifted for c in columns)
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(sql, [*shifts, ids, last])
                    added += cursor.rowcount
                self.stderr.write(
                    f"  {model.__name__}: copy {copy} of {factor - 1}, {added:,} rows"
                )
            with connection.cursor() as cursor:
                cursor.execute(f"ANALYZE {q(model._meta.db_table)}")
            self.stdout.write(
                f"{model.__name__}: {added:,} rows added (x{factor}) in "
                f"{time.perf_counter() - t:.1f} s"
            )

    def report(self, total: float) -> None:
        self.stdout.write(
            f"Seeded fleet in {total:.1f} s on {connection.vendor} "
            f"({len(self.regions)} regions, account {fleet.ACCOUNT_NAME!r}):"
        )
        for name, n in self.counts.items():
            self.stdout.write(f"  {name:<28}{n:>12,}")
        self.stdout.write("Time per step:")
        for name, seconds in self.timings.items():
            self.stdout.write(f"  {name:<28}{seconds:>10.1f} s")


DAY_MIN = fleet.DAY_MIN
_ARRAY_FIELDS = ARRAY_FACT_FIELDS


def _fleet_size(options: dict[str, Any]) -> fleet.FleetSize:
    """The fleet the options ask for; minute rows for at most ``--days``, by default for as
    long as ``VIGIL_EFS_MINUTE_RETENTION_DAYS`` keeps them."""
    retention = settings.VIGIL_EFS_MINUTE_RETENTION_DAYS
    minute_days = options["minute_days"] if options["minute_days"] is not None else retention
    size = fleet.FleetSize(
        filesystems=options["filesystems"],
        regions=options["regions"],
        clusters=options["clusters"],
        arrays=options["arrays"],
        probes=options["probes"],
        days=options["days"],
        minute_days=min(minute_days, options["days"]),
    )
    if size.regions < 1 or size.days < 1 or min(size.filesystems, size.clusters) < 0:
        raise CommandError("--regions and --days must be at least 1, counts at least 0.")
    return size


def _analyze() -> None:
    """PostgreSQL: statistics for the seeded tables, Vigil's own only: a bare ANALYZE also
    takes the catalogs that every database of the server shares, and waited on another
    database's ANALYZE (a test worker's) past the lock timeout that partition creation had set
    for the transaction."""
    tables = connection.introspection.django_table_names(only_existing=True)
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(q(table) for table in sorted(tables)))


def _verdict_of(fs: FileSystem) -> Verdict:
    return Verdict(Status(fs.status), fs.reason, fs.figures)


def _minute_cells(members, first: int, end: int, fmt, with_index: bool = False) -> Iterator:
    """(minute, time text, pk[, plan index]) in collection order: RUN_MINUTES of every file
    system of the region, then the next RUN_MINUTES; minutes in a plan's gaps are left out."""
    gapped = {pk: plan.gaps for plan, pk in members if plan.gaps}
    for run in range(first, end, RUN_MINUTES):
        run_end = min(run + RUN_MINUTES, end)
        stamps = [(m, fmt(m)) for m in range(run, run_end)]
        for plan, pk in members:
            gaps = gapped.get(pk)
            for minute, ts in stamps:
                if gaps and any(lo <= minute < hi for lo, hi in gaps):
                    continue
                yield (minute, ts, pk, plan.index) if with_index else (minute, ts, pk)


def delete_seed(account: Account) -> None:
    """Delete a seeded fleet: its large tables first (one DELETE each), then the account,
    which cascades to its regions and everything in them. The audit trail is not told each of
    the thousands of synthetic objects that go (``disable_auditlog``)."""
    regions = Region.objects.filter(account=account)
    MetricMinute.objects.filter(filesystem__region__in=regions).delete()
    MetricHour.objects.filter(filesystem__region__in=regions).delete()
    Snapshot.objects.filter(cluster__region__in=regions).delete()
    Result.objects.filter(target__region__in=regions).delete()
    Transition.objects.filter(region__in=regions).delete()
    with disable_auditlog(), allow_deleting_history():
        account.delete()
