"""What AWS documents of EBS volumes and their metrics: one table per kind, with its source and
the date it was read, and each volume type's performance (baseline, burst, limits).

Pure: no Django, no I/O. Sources (read 2026-11-26 through the ``search`` tool):

- [M1] AWS, "Amazon CloudWatch metrics for Amazon EBS",
  https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html: every volume type
  sends 1-minute metrics, only while attached; statistics per metric (``METRICS``).
- [M2] AWS, "Amazon EBS I/O characteristics and monitoring",
  https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html: a failed
  ``VolumeStalledIOCheck`` is an impaired volume; the exceeded checks are 1 when the
  workload consistently drove more than the provisioned IOPS or throughput in the minute;
  at an empty ``BurstBalance`` gp2 I/O, or st1/sc1 throughput, is held to the baseline.
- [M3] AWS, "CloudWatch metrics that are available for your instances",
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/viewing_metrics_with_cloudwatch.html,
  "Amazon EBS metrics for Nitro-based instances": ``EBSIOBalance%`` and ``EBSByteBalance%``
  (Minimum, Maximum; basic monitoring only, so one value every 5 minutes) exist only for "some
  ``*.4xlarge`` instance sizes and smaller that burst to their maximum performance for only
  30 minutes at least once every 24 hours"; the instance's exceeded checks.
- [M4] AWS, "Pause I/O fault injection",
  https://docs.aws.amazon.com/ebs/latest/userguide/ebs-fis-pause-io.html: ``VolumeStalledIOCheck``
  is 1 once I/O has been paused for over 60 s; the volume turns ``impaired`` within 120 s.
- [V1] AWS, "General Purpose SSD volumes",
  https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html: gp2 earns 3 IOPS per
  GiB (100 to 16,000), bursts to 3,000 IOPS below 1,000 GiB on 5.4 million I/O credits
  (3,000 IOPS for at least 30 minutes), 128 MiB/s up to 170 GiB and 250 MiB/s above; gp3 has
  a 3,000 IOPS and 125 MiB/s baseline, up to 500 IOPS per GiB, 16,000 IOPS and 1,000 MiB/s
  (0.25 MiB/s per provisioned IOPS), no burst. The copies read give 16,000 / 1,000; a larger
  gp3 is accepted from DescribeVolumes as provisioned.
- [V2] AWS, "Provisioned IOPS SSD volumes",
  https://docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html: io1 and io2 deliver
  their provisioned IOPS; throughput up to 256 KiB per provisioned IOPS, at most 1,000 MiB/s
  (io1) and 4,000 MiB/s (io2 Block Express).
- [V3] AWS, "Throughput Optimized HDD and Cold HDD volumes",
  https://docs.aws.amazon.com/ebs/latest/userguide/hdd-vols.html: st1 earns 40 MiB/s per TiB
  and bursts to 250 MiB/s per TiB, at most 500 MiB/s; sc1 12 and 80 MiB/s per TiB, at most
  250 MiB/s (read through a secondary copy: the 2026 lesson notes quoted by the search index).

Where they disagree with the 2018 articles Vigil began from: those say gp2, st1 and sc1 send
5-minute metrics and only io1 1-minute ones; today every type sends 1-minute metrics [M1], so
Vigil asks for 60-second periods and keeps a row a minute. The stalled-I/O and exceeded
checks did not exist then. ``DescribeVolumeStatus`` (the ``impaired`` state) is not called:
``VolumeStalledIOCheck`` says the same a minute at a time [M2][M4], in the calls already made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GIB = 1024**3
TIB_GIB = 1024
MIB = 1024 * 1024
SOURCE_METRICS = "https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html"
SOURCE_INSTANCE = (
    "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/viewing_metrics_with_cloudwatch.html"
)
READ_ON = "2026-11-26"

VOLUME_TYPES = ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")
BURSTING = ("gp2", "st1", "sc1")  # BurstBalance: gp2, st1 and sc1 only [M1]
PROVISIONED_IOPS = ("io1", "io2")


@dataclass(frozen=True)
class MetricFact:
    """One CloudWatch metric as Vigil collects it: the statistic asked, the period, which
    volume types publish it (None: every one), and the dimensions asked with."""

    namespace: str
    metric: str
    stat: str
    field: str
    period_s: int
    types: tuple[str, ...] | None
    with_instance: bool  # asked with VolumeId and InstanceId (the attachment's)
    note: str
    source: str


#: The volume metrics [M1][M2][M4]. Sums are what the console divides by the period (ops/s,
#: bytes/s); on Nitro instances SampleCount is the number of data points, not of operations,
#: so request sizes and latencies divide by the ops Sum (the console's Nitro formulas).
VOLUME_METRICS: tuple[MetricFact, ...] = (
    MetricFact("AWS/EBS", "VolumeReadOps", "Sum", "read_ops", 60, None, False,
               "completed reads in the minute", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeWriteOps", "Sum", "write_ops", 60, None, False,
               "completed writes in the minute", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeReadBytes", "Sum", "read_bytes", 60, None, False,
               "bytes read", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeWriteBytes", "Sum", "write_bytes", 60, None, False,
               "bytes written", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeTotalReadTime", "Sum", "read_time", 60, None, False,
               "seconds spent by completed reads (not with Multi-Attach)", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeTotalWriteTime", "Sum", "write_time", 60, None, False,
               "seconds spent by completed writes (not with Multi-Attach)", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeIdleTime", "Sum", "idle_time", 60, None, False,
               "seconds with no operation submitted (not with Multi-Attach)", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeQueueLength", "Average", "queue_length", 60, None, False,
               "operations waiting", SOURCE_METRICS),
    MetricFact("AWS/EBS", "BurstBalance", "Minimum", "burst_balance", 60, BURSTING, False,
               "percent of the burst bucket left; 100 when the baseline beats the burst",
               SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeThroughputPercentage", "Average", "throughput_pct", 60,
               PROVISIONED_IOPS, False, "percent of the provisioned IOPS delivered",
               SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeConsumedReadWriteOps", "Sum", "consumed_ops", 60,
               PROVISIONED_IOPS, False, "operations in 256 KiB units", SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeStalledIOCheck", "Maximum", "stalled", 60, None, True,
               "1: I/O stalled in the minute, the volume is impaired (Nitro only)",
               SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeIOPSExceededCheck", "Maximum", "iops_exceeded", 60,
               ("gp2", "gp3", "io1", "io2", "st1", "sc1"), True,
               "1: the workload consistently drove more IOPS than provisioned (Nitro only)",
               SOURCE_METRICS),
    MetricFact("AWS/EBS", "VolumeThroughputExceededCheck", "Maximum", "throughput_exceeded", 60,
               ("gp2", "gp3", "io1", "io2", "st1", "sc1"), True,
               "1: the workload consistently drove more throughput than provisioned (Nitro)",
               SOURCE_METRICS),
)  # fmt: skip

#: The attached instances' EBS bandwidth metrics [M3]: the balances come every 5 minutes.
INSTANCE_METRICS: tuple[MetricFact, ...] = (
    MetricFact("AWS/EC2", "EBSIOBalance%", "Minimum", "io_balance", 300, None, False,
               "percent of the instance's EBS I/O burst bucket left", SOURCE_INSTANCE),
    MetricFact("AWS/EC2", "EBSByteBalance%", "Minimum", "byte_balance", 300, None, False,
               "percent of the instance's EBS throughput burst bucket left", SOURCE_INSTANCE),
    MetricFact("AWS/EC2", "InstanceEBSIOPSExceededCheck", "Maximum", "iops_exceeded", 60, None,
               False, "1: drove more EBS IOPS than the instance allows", SOURCE_INSTANCE),
    MetricFact("AWS/EC2", "InstanceEBSThroughputExceededCheck", "Maximum",
               "throughput_exceeded", 60, None, False,
               "1: drove more EBS throughput than the instance allows", SOURCE_INSTANCE),
)  # fmt: skip

VOLUME_FIELDS = tuple(m.field for m in VOLUME_METRICS)
INSTANCE_FIELDS = tuple(m.field for m in INSTANCE_METRICS)

#: Instance sizes that may publish the EBS balances: "some *.4xlarge sizes and smaller" [M3].
BALANCE_SIZES = ("nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge")
_SIZE = re.compile(r"^[a-z0-9-]+\.([a-z0-9]+)$")


def volume_metrics(volume_type: str) -> tuple[MetricFact, ...]:
    """The metrics a volume of ``volume_type`` publishes (attached)."""
    return tuple(m for m in VOLUME_METRICS if m.types is None or volume_type in m.types)


def instance_metrics(instance_type: str) -> tuple[MetricFact, ...]:
    """The metrics worth asking of an instance: the balances only of sizes that may have them."""
    found = _SIZE.match(instance_type or "")
    small = found is not None and found.group(1) in BALANCE_SIZES
    return tuple(m for m in INSTANCE_METRICS if small or m.period_s == 60)


# --- Volume types [V1][V2][V3] ------------------------------------------------------------


@dataclass(frozen=True)
class Performance:
    """What a volume delivers: its sustained baseline and, with credits, its burst; ``None``
    where a figure does not apply. IOPS for SSDs, MiB/s for HDDs."""

    volume_type: str
    baseline_iops: float | None
    burst_iops: float | None
    baseline_mibps: float | None
    burst_mibps: float | None
    max_mibps: float | None
    bursts: bool  # spends a burst bucket (BurstBalance)

    @property
    def limit_iops(self) -> float | None:
        return self.burst_iops or self.baseline_iops

    @property
    def limit_mibps(self) -> float | None:
        return self.max_mibps


GP2_IOPS_PER_GIB = 3.0
GP2_MIN_IOPS, GP2_MAX_IOPS, GP2_BURST_IOPS = 100.0, 16_000.0, 3_000.0
GP2_CREDITS = 5_400_000  # I/O credits, the bucket's size [V1]
GP3_IOPS, GP3_MIBPS = 3_000.0, 125.0
GP3_MAX_IOPS, GP3_MAX_MIBPS, GP3_IOPS_PER_GIB, GP3_MIBPS_PER_IOPS = 16_000.0, 1_000.0, 500.0, 0.25
IO_MIBPS_PER_IOPS = 0.25  # 256 KiB per provisioned IOPS [V2]
IO_MAX_MIBPS = {"io1": 1_000.0, "io2": 4_000.0}
#: st1 / sc1: (baseline, burst) MiB/s per TiB, and the most per volume [V3].
HDD = {"st1": (40.0, 250.0, 500.0), "sc1": (12.0, 80.0, 250.0)}


def performance(
    volume_type: str, size_gib: float, iops: float | None = None, mibps: float | None = None
) -> Performance:
    """The documented performance of a volume from what DescribeVolumes says of it."""
    if volume_type == "gp2":
        baseline = min(GP2_MAX_IOPS, max(GP2_MIN_IOPS, GP2_IOPS_PER_GIB * size_gib))
        bursts = baseline < GP2_BURST_IOPS
        max_mibps = 128.0 if size_gib <= 170 else 250.0
        return Performance(
            "gp2", baseline, GP2_BURST_IOPS if bursts else None, None, None, max_mibps, bursts
        )
    if volume_type == "gp3":
        return Performance("gp3", iops or GP3_IOPS, None, None, None, mibps or GP3_MIBPS, False)
    if volume_type in PROVISIONED_IOPS:
        limit = None if not iops else min(iops * IO_MIBPS_PER_IOPS, IO_MAX_MIBPS[volume_type])
        return Performance(volume_type, iops, None, None, None, limit, False)
    if volume_type in HDD:
        base, burst, most = HDD[volume_type]
        tib = size_gib / TIB_GIB
        return Performance(
            volume_type, None, None, min(most, base * tib), min(most, burst * tib), most, True
        )
    return Performance(volume_type, None, None, None, None, None, False)


def gp2_burst_seconds(size_gib: float, iops: float = GP2_BURST_IOPS) -> float | None:
    """How long a full gp2 bucket lasts at ``iops``: credits / (iops - baseline) [V1]
    (100 GiB at 3,000 IOPS: 2,000 s); None when the baseline carries it."""
    baseline = performance("gp2", size_gib).baseline_iops or 0.0
    return None if iops <= baseline else GP2_CREDITS / (iops - baseline)
