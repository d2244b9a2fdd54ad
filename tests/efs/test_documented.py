"""Today's documented rules, end to end: stand-in file systems (moto with the fleet responder) of
each type (Regional, One Zone) are discovered, collected over one whole day, judged and priced,
and the cost comparison and the headroom are held to figures worked by hand below.

The rules (apps/efs/documented.py, read 2026-11-26): data operations metered and billed as at
least 32 KiB, metadata ones as 4 KiB (2018: every request 4 KiB); metadata writes billed as
writes; credits held up to 2.1 TiB per TiB of Standard (2018: 2.1 TiB); Archive only with
Elastic; One Zone limits 35,000 reads / 7,000 writes a second; Elastic's per-Region limits;
read and write throughput one combined budget; replication's 15-minute RPO.

Every workload here is constant (no jitter) over the collected hours (the last three before
midnight UTC, or the whole day), so a month is a minute's figure times 43,800 (730 h x 60). A billed GB is 2^30 bytes. us-east-1:
Standard $0.30, IA $0.016 (Elastic), Archive $0.008 a GB-month, Elastic $0.03 a GB read and
$0.06 written, provisioned $6.00 a MiB/s-month.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.urls import reverse

from apps.efs import collect, demo_workloads, documented, elasticfilesystem, pricing
from apps.efs.cloudwatch_plan import build_queries
from apps.efs.demo_cloudwatch import PHASE_TAG, PROFILE_TAG, REPLICA_TAG
from apps.efs.demo_workloads import Profile
from apps.efs.models import FileSystem, RegionCollection
from apps.lib.status import Status
from tests.efs.conftest import boto

pytestmark = pytest.mark.django_db

#: The collection runs at 00:03:30 UTC: its window (settled 3 minutes) ends at midnight.
NOW = datetime(2026, 11, 26, 0, 3, 30, tzinfo=UTC)
MIDNIGHT = datetime(2026, 11, 26, tzinfo=UTC)
MONTH_MINUTES = 730 * 60
GB = 2**30
KIB = 1024
MIB = 2**20

PROFILES = (
    # A: Regional, Elastic: 1,000 reads a second of 4 KiB, nothing else.
    Profile("test-small-reads", 10, 1000 * 4 / 1024, 0, 0, read_kib=4, throughput_mode="elastic", jitter=False),
    # B: One Zone, Elastic: 500 reads of 4 KiB and 2,000 metadata writes of 512 bytes a second.
    Profile(
        "test-metadata-writes", 20, 500 * 4 / 1024, 0, 2000, metadata_write_share=1.0,
        read_kib=4, throughput_mode="elastic", jitter=False,
    ),
    # C: Regional, Elastic, with Archive: 10 GiB Standard, 100 GiB IA, 1,000 GiB Archive; 96
    # reads of 64 KiB a minute (0.1 MiB/s).
    Profile(
        "test-archive", 10, 0.1, 0, 0, ia_gib=100, archive_gib=1000, throughput_mode="elastic",
        jitter=False,
    ),
    # D: Regional, bursting, 4 TiB of Standard: 380 MiB/s written in 1 MiB requests from 00:00
    # to 12:00 UTC, nothing after.
    Profile(
        "test-4tib", 4096, 0, 380, 0, write_kib=1024, busy=(0, 12), idle_factor=0.0, jitter=False
    ),
    # E: Regional, bursting, 2 TiB: 3,500 reads and 700 writes a second, all of 4 KiB.
    Profile(
        "test-small-io", 2048, 3500 * 4 / 1024, 700 * 4 / 1024, 0, read_kib=4, write_kib=4,
        jitter=False,
    ),
    # R: replicated every 5 minutes, no sync from 02:00 to 04:00 of its day, which its phase
    # (150 minutes) puts at 23:30 to 01:30 UTC.
    Profile("test-replicated", 10, 0.1, 0.1, 0, jitter=False, sync_every_min=5, sync_stall=(2, 4)),
)  # fmt: skip
REPLICAS = "eu-west-1:fs-0123456789abcdef0,eu-central-1:fs-0fedcba987654321a:ERROR"


@pytest.fixture
def collected(responder, aws, collection, monkeypatch):
    """``collected(*keys, hours=3)``: those of ``PROFILES`` created in the stand-in, discovered
    and collected at ``NOW`` over the ``hours`` before midnight; the file systems by key."""
    for p in PROFILES:
        monkeypatch.setitem(demo_workloads.PROFILES, p.key, p)
    efs = boto("efs", aws)
    access = collection.region.account.access

    def collect_them(*keys: str, hours: int = 3) -> dict[str, FileSystem]:
        with time_machine.travel(NOW):
            for p in (p for p in PROFILES if p.key in keys):
                tags = [{"Key": PROFILE_TAG, "Value": p.key}, {"Key": "Name", "Value": p.key}]
                tags.append({"Key": PHASE_TAG, "Value": "150" if p.sync_every_min else "0"})
                if p.sync_every_min:
                    tags.append({"Key": REPLICA_TAG, "Value": REPLICAS})
                zone = {"AvailabilityZoneName": "us-east-1a"} if "metadata" in p.key else {}
                efs.create_file_system(
                    CreationToken=p.key, ThroughputMode=p.throughput_mode, Tags=tags, **zone
                )
            collect.save_discovery(
                collection,
                elasticfilesystem.describe_file_systems("us-east-1", access),
                NOW,
                elasticfilesystem.describe_replications("us-east-1", access),
            )
            FileSystem.objects.update(collected_until=MIDNIGHT - timedelta(hours=hours))
            later = NOW + timedelta(hours=1)
            RegionCollection.objects.filter(pk=collection.pk).update(next_discovery=later)
            collect.run_cycle(collection.pk, NOW)
        return {fs.name: fs for fs in FileSystem.objects.select_related("region")}

    return collect_them


def comparison(fs: FileSystem):
    return pricing.comparisons([fs], NOW)[fs.pk]


def rows(c) -> dict:
    return {r.mode: r for r in c.rows}


def test_small_data_requests_are_billed_as_32_kib_each_on_a_regional_file_system(collected):
    fs = collected("test-small-reads")["test-small-reads"]
    assert fs.file_system_type == "regional" and fs.throughput_mode == "elastic"
    c = comparison(fs)
    # 60,000 reads a minute, each billed as 32 KiB: 60,000 x 32,768 x 43,800 / 2^30
    # = 80,200.195 GB read a month. (2018's 4 KiB minimum: 10,025.02 GB, 8x less.)
    assert c.workload.read_gib == pytest.approx(60_000 * 32_768 * MONTH_MINUTES / GB)
    assert c.workload.read_gib == pytest.approx(80_200.195, abs=0.001)
    assert c.workload.write_gib == 0
    # Elastic: 10 GB x $0.30 + 80,200.195 x $0.03 = $3 + $2,406.01 = $2,409.01 (2018: $303.75).
    assert rows(c)["elastic"].monthly_usd == pytest.approx(2409.0059, abs=0.001)
    # Metered: reads at a third of 32 KiB, 1,000 x 32,768 / 3 / 2^20 = 10.417 MiB/s all day.
    # Provisioned at that peak, rounded up to 11 MiB/s, above the 1 MiB/s a 10 GiB file system
    # earns: $3 + 10 x $6 = $63, the cheapest that carries it.
    assert c.workload.peak_mibps == pytest.approx(10.4167, abs=0.0001)
    assert c.best.mode == "provisioned" and c.best.monthly_usd == pytest.approx(63.0)
    assert c.saving_usd == pytest.approx(2409.0059 - 63.0, abs=0.001)
    # Headroom: Regional Elastic in us-east-1: 250,000 reads a second, 60 GiB/s read, 5 GiB/s
    # written, read and write one budget: 3.906 MiB/s of 61,440 is 0.0064 %.
    f = fs.figures
    assert (f["headroom_read_iops"], f["headroom_read_iops_limit"]) == (1000, 250_000)
    assert (f["headroom_read_mibps"], f["headroom_read_mibps_limit"]) == (1000 * 4 / 1024, 61_440)
    assert f["headroom_write_mibps_limit"] == 5 * 1024
    assert f["headroom_combined_pct"] == pytest.approx(100 * 3.90625 / 61_440)
    assert fs.status == Status.OK


def test_metadata_writes_are_billed_as_writes_on_a_one_zone_file_system(collected):
    fs = collected("test-metadata-writes")["test-metadata-writes"]
    assert fs.availability_zone_name == "us-east-1a" and fs.file_system_type == "one_zone"
    c = comparison(fs)
    # Reads: 30,000 a minute x 32 KiB x 43,800 / 2^30 = 40,100.098 GB, at $0.03: $1,203.00.
    assert c.workload.read_gib == pytest.approx(40_100.098, abs=0.001)
    # Metadata writes: 120,000 a minute x 4 KiB x 43,800 / 2^30 = 20,050.049 GB, billed as
    # writes at $0.06: $1,203.00 (2018: as reads, $601.50; and the reads at 4 KiB: $150.38).
    assert c.workload.write_gib == pytest.approx(20_050.049, abs=0.001)
    assert c.workload.unsplit_metadata_gib == 0
    # Elastic: 20 GB x $0.30 + $1,203.00 + $1,203.00 = $2,412.01 (One Zone storage prices are
    # not in the table: the Regional ones, and a note that says so).
    assert rows(c)["elastic"].monthly_usd == pytest.approx(6 + 2 * 1203.0029, abs=0.001)
    assert any("no One Zone storage prices" in n for n in c.notes)
    # Metered: 500 x 32 KiB / 3 + 2,000 x 4 KiB = 5.333 + 7.813 = 13.02 MiB/s; provisioned at
    # 14 MiB/s, 13 above the 1 MiB/s it earns: $6 + $78 = $84.
    assert c.workload.peak_mibps == pytest.approx(13.0208, abs=0.0001)
    assert rows(c)["provisioned"].monthly_usd == pytest.approx(84.0)
    # Headroom: One Zone, 35,000 reads and 7,000 writes a second; metadata writes are writes.
    f = fs.figures
    assert (f["headroom_read_iops"], f["headroom_read_iops_limit"]) == (500, 35_000)
    assert (f["headroom_write_iops"], f["headroom_write_iops_limit"]) == (2000, 7_000)
    # One Zone Elastic: 3 GiB/s read, 1 GiB/s written, in every Region.
    assert (f["headroom_read_mibps_limit"], f["headroom_write_mibps_limit"]) == (3072, 1024)


def test_the_page_names_the_type_and_tells_documented_limits_from_measured(
    collected, logged_in_client
):
    fs = collected("test-metadata-writes")["test-metadata-writes"]
    with time_machine.travel(NOW):
        html = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk])).content.decode()
    html = " ".join(html.split())  # as a browser shows it: the template wraps its lines
    assert "One Zone (us-east-1a)" in html
    assert "Write operations (data and metadata): 2,000 of 7,000 ops/s" in html
    assert "AWS documents for a One Zone elastic file system" in html
    assert "in us-east-1: 35,000 read and 7,000 write operations/s" in html
    assert (
        '(read 2026-11-26: <a class="source" href="https://docs.aws.amazon.com/efs/latest/ug/'
        in html
    )


def test_a_file_system_with_archive_data_is_offered_elastic_only(collected):
    c = comparison(collected("test-archive")["test-archive"])
    # Storage with Elastic: 10 x $0.30 + 100 x $0.016 + 1,000 x $0.008 = $3 + $1.60 + $8.
    # Reads: 96 a minute of 64 KiB (over the minimum): 6,291,456 x 43,800 / 2^30 = 256.64 GB,
    # $7.70. Elastic: $20.30. AWS refuses bursting or provisioned while Archive holds data.
    assert rows(c)["elastic"].monthly_usd == pytest.approx(12.6 + 256.640625 * 0.03)
    assert not rows(c)["bursting"].available and not rows(c)["provisioned"].available
    assert c.best.mode == "elastic" and c.saving_usd == 0
    assert "1,000 GB in Archive, which AWS allows only with Elastic" in c.reason


def test_a_4_tib_bursting_file_system_holds_8_4_tib_of_credits_and_its_burst_fits(collected):
    fs = collected("test-4tib", hours=24)["test-4tib"]
    f = fs.figures
    # 4,096 GiB of Standard: baseline 4,096 x 50 KiB/s = 200 MiB/s, burst 400 MiB/s, credits
    # up to 4 x 2.1 = 8.4 TiB (the 2018 reading: 2.1 TiB).
    assert (f["baseline_mibps"], f["burst_mibps"]) == (200, 400)
    assert f["credit_cap_bytes"] == pytest.approx(8.4 * 2**40)
    # The stand-in follows the same model: full at 00:00, 12 h at 380 MiB/s spend
    # (380 - 200) x 43,200 s = 7,776,000 MiB, then 12 h at 0 earn it back: full at 24:00.
    assert f["credit_balance_bytes"] == pytest.approx(8.4 * 2**40)
    c = comparison(fs)
    # The deepest fall of the balance over the day: 7,776,000 MiB = 7,593.75 GiB, under the
    # 8,601.6 GiB it holds; mean 190 MiB/s under the 200 baseline, peak 380 under the burst.
    assert c.workload.drain_gib == pytest.approx(7593.75)
    assert c.workload.mean_mibps == pytest.approx(190) and c.workload.peak_mibps == 380
    bursting = rows(c)["bursting"]
    assert bursting.fits and bursting.monthly_usd == pytest.approx(4096 * 0.30)
    assert c.best.mode == "bursting" and c.current_fits is True
    # Provisioned at the 380 MiB/s peak pays for 180 above the baseline: $1,228.80 + $1,080.
    assert rows(c)["provisioned"].monthly_usd == pytest.approx(1228.8 + 180 * 6)


def test_percent_io_limit_implies_the_limit_of_small_requests_on_a_bursting_file_system(
    collected,
):
    fs = collected("test-small-io")["test-small-io"]
    f = fs.figures
    # 3,500 reads and 700 writes a second against today's 35,000 and 7,000: 10 % + 10 % = 20 %
    # of the I/O limit (2018's 3,500 and 3,000: 123 %); the 4,200 ops/s imply 21,000 at 100 %.
    assert f["io_limit_pct"] == pytest.approx(20.0)
    assert f["headroom_ops"] == 4200
    assert f["headroom_ops_limit"] == pytest.approx(21_000)
    assert fs.status == Status.OK
    c = comparison(fs)
    # Metered: 3,500 x 32 KiB / 3 + 700 x 32 KiB = 36.458 + 21.875 = 58.333 MiB/s, under the
    # 100 MiB/s baseline of 2 TiB: bursting carries it for its storage, 2,048 x $0.30.
    assert c.workload.mean_mibps == pytest.approx(58.3333, abs=0.0001)
    assert c.best.mode == "bursting" and c.best.monthly_usd == pytest.approx(614.4)
    # Elastic would bill (3,500 x $0.03 + 700 x $0.06) x 60 x 32 KiB x 43,800 / 2^30.
    transfer = (3500 * 0.03 + 700 * 0.06) * 60 * 32 * KIB * MONTH_MINUTES / GB
    assert rows(c)["elastic"].monthly_usd == pytest.approx(614.4 + transfer)
    assert transfer == pytest.approx(11_789.43, abs=0.01)


def test_a_stalled_replica_warns_and_a_failed_one_is_critical(collected):
    fs = collected("test-replicated")["test-replicated"]
    assert [r["destination"] for r in fs.replicas] == [
        "fs-0123456789abcdef0",
        "fs-0fedcba987654321a",
    ]
    (stalled, failed) = fs.replica_states()
    # No sync since 23:25 UTC (its day's 01:55; none from 02:00): TimeSinceLastSync at the last
    # collected minute, 23:59, was 34 minutes, and LastReplicatedTimestamp says 23:25:00 too.
    assert stalled.last_sync_at == datetime(2026, 11, 25, 23, 25, tzinfo=UTC)
    assert fs.replicas[0]["sync_seconds"] == 34 * 60
    assert fs.status == Status.CRITICAL
    # 00:03:30 - 23:25:00 = 38.5 minutes: over AWS's 15-minute RPO, under the 60-minute critical.
    assert "replica fs-0123456789abcdef0 (eu-west-1) last synced ~38 min ago" in fs.reason
    assert "replica fs-0fedcba987654321a (eu-central-1): replication failed" in fs.reason
    assert fs.figures["replica_lag_minutes"] == pytest.approx(38.5)
    assert failed.status == "ERROR"


def test_the_collection_asks_time_since_last_sync_per_destination_within_the_batches(collected):
    everything = collected(*(p.key for p in PROFILES))
    # Six file systems: 20 queries each (19 for the Elastic ones, no BurstCreditBalance), and one
    # TimeSinceLastSync per destination: 3 x 19 + 3 x 20 + 2 = 119 queries, one batch; three
    # hours of minutes are 119 x 180 = 21,420 points, one call (of at most 100,800).
    assert len(build_queries([fs.ref() for fs in everything.values()])) == 119
    assert RegionCollection.objects.get().api_calls == 1


def test_the_documented_tables_name_a_source_and_a_date_for_every_figure():
    for table in (documented.LIMITS, documented.METERING):
        for key, f in table.items():
            assert f.source.startswith("https://"), key
            assert f.read_on == "2026-11-26", key
    assert documented.METERING_2018.value == 4 * KIB  # the history, kept and not applied


def test_a_setting_overrides_a_documented_figure_and_a_wrong_one_stops_the_start(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from apps.efs.conf import SETTINGS
    from config.settings.base import setting

    table = documented.merged(
        documented.LIMITS, {"regional.elastic.read_mibps@eu-north-1": 61_440}, "VIGIL_EFS_LIMITS"
    )
    assert documented.mode_limits(table, "regional", "elastic", "eu-north-1").read_mibps == 61_440
    assert documented.figure(table, "regional.elastic.read_mibps", "eu-north-1").source == (
        "VIGIL_EFS_LIMITS"
    )
    limits = next(s for s in SETTINGS if s.name == "VIGIL_EFS_LIMITS")
    monkeypatch.setenv("VIGIL_EFS_LIMITS", '{"regional.elastic.read_gbps": 1}')
    with pytest.raises(ImproperlyConfigured, match="'regional.elastic.read_gbps' is not one"):
        limits.read(setting)
    metering = next(s for s in SETTINGS if s.name == "VIGIL_EFS_METERING")
    monkeypatch.setenv("VIGIL_EFS_METERING", '{"data_minimum_bytes": -1}')
    with pytest.raises(ImproperlyConfigured, match="data_minimum_bytes: -1 is not a figure"):
        metering.read(setting)
