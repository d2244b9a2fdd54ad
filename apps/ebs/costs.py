"""What an EBS volume costs a month, and the move AWS recommends for gp2: the same volume as
gp3 with the IOPS and throughput its p95 needs, and whether gp3's baseline covers its peaks.

Pure: no Django, no I/O. A month is 730 hours; a priced GB is a GiB (2^30 bytes), as AWS
bills EBS (see apps/efs/costs.py, [P3] there); a priced MB/s of gp3 throughput is a MiB/s.

Sources (read 2026-11-26 through the ``search`` tool; AWS's price page itself,
https://aws.amazon.com/ebs/pricing/, is a JavaScript table the index does not hold):

- [P1] AWS, "Migrate Amazon EBS volumes from gp2 to gp3", AWS Prescriptive Guidance,
  https://docs.aws.amazon.com/prescriptive-guidance/latest/optimize-costs-microsoft-workloads/ebs-migrate-gp2-gp3.html:
  gp2 "$0.10 per GiB-month"; gp3 "20 percent lower cost".
- [P2] AWS, "EBS Volume Optimization" (aws/agent-toolkit-for-aws, skills/core-skills/
  aws-billing-and-cost-management/references/ebs-optimization.md, "us-east-1 approximate as of
  early 2026"): gp3 $0.08 vs gp2 $0.10 per GB-month; io1 and io2 $0.125 per GB-month and
  $0.065 per provisioned IOPS-month.
- [P3] AWS Storage Blog, "Migrate your Amazon EBS volumes from gp2 to gp3 and save up to 20%
  on costs", https://aws.amazon.com/blogs/storage/migrate-your-amazon-ebs-volumes-from-gp2-to-gp3-and-save-up-to-20-on-costs/:
  gp3's 3,000 IOPS and 125 MiB/s come with the storage price. Its extra IOPS ($0.005 per
  IOPS-month over 3,000) and throughput ($0.04 per MiB/s-month over 125) as DoiT's 2024 copy of
  AWS's table quotes them (secondary).
- st1 $0.045 and sc1 $0.015 per GB-month, standard (magnetic) $0.05: secondary tables of 2025
  and 2026 (several FinOps scripts in the code index; one older copy says sc1 $0.025).
- io2's IOPS tiers (32,000 and 64,000 IOPS) are not applied: every provisioned IOPS at io1's
  price, an upper bound for io2 volumes above 32,000 IOPS.

A region missing from the table is priced at us-east-1's figures and the advice says so;
``VIGIL_EBS_PRICES`` adds regions or overrides figures (``price_table``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from apps.lib.prices import overridden

from .limits import (
    GP3_IOPS,
    GP3_IOPS_PER_GIB,
    GP3_MAX_IOPS,
    GP3_MAX_MIBPS,
    GP3_MIBPS,
    GP3_MIBPS_PER_IOPS,
)
from .metrics import Usage

MONTH_HOURS = 730.0
FALLBACK_REGION = "us-east-1"


@dataclass(frozen=True)
class RegionPrices:
    """Dollars a month: storage per GB by type, gp3 IOPS and MiB/s over the baseline, io1/io2
    provisioned IOPS."""

    gp2: float
    gp3: float
    gp3_iops: float
    gp3_mibps: float
    io1: float
    io2: float
    io_iops: float
    st1: float
    sc1: float
    standard: float
    source: str = ""


PRICES: dict[str, RegionPrices] = {
    "us-east-1": RegionPrices(
        gp2=0.10,
        gp3=0.08,
        gp3_iops=0.005,
        gp3_mibps=0.04,
        io1=0.125,
        io2=0.125,
        io_iops=0.065,
        st1=0.045,
        sc1=0.015,
        standard=0.05,
        source="https://aws.amazon.com/ebs/pricing/ (us-east-1, through the copies in "
        "apps/ebs/costs.py, read 2026-11-26)",
    ),
}
_FIELDS = set(RegionPrices.__dataclass_fields__)
_REQUIRED = _FIELDS - {"source"}


def price_table(overrides: Mapping[str, object] | None = None) -> dict[str, RegionPrices]:
    """The built-in table with ``overrides`` (``VIGIL_EBS_PRICES``) applied:
    ``{"eu-west-1": {"gp2": 0.11, "gp3": 0.088, ...}}``. A region in the table takes any subset
    of the fields; a new one needs every price. ValueError names what is wrong."""
    return overridden(
        PRICES,
        overrides,
        fields=_FIELDS,
        required=_REQUIRED,
        new=lambda given: RegionPrices(**given),
    )


def prices_for(region: str, table: Mapping[str, RegionPrices]) -> tuple[RegionPrices, str]:
    """The region's prices, and a note when they are another region's."""
    if region in table:
        return table[region], ""
    return table[FALLBACK_REGION], f"no prices for {region} yet: {FALLBACK_REGION}'s are used"


def monthly_usd(
    volume_type: str, size_gib: float, iops: float | None, mibps: float | None, p: RegionPrices
) -> float | None:
    """What the volume costs a month as it is provisioned; None for an unknown type."""
    if volume_type == "gp3":
        extra_iops = max(0.0, (iops or GP3_IOPS) - GP3_IOPS)
        extra_mibps = max(0.0, (mibps or GP3_MIBPS) - GP3_MIBPS)
        return size_gib * p.gp3 + extra_iops * p.gp3_iops + extra_mibps * p.gp3_mibps
    if volume_type in ("io1", "io2"):
        return size_gib * getattr(p, volume_type) + (iops or 0.0) * p.io_iops
    per_gib = {"gp2": p.gp2, "st1": p.st1, "sc1": p.sc1, "standard": p.standard}.get(volume_type)
    return None if per_gib is None else size_gib * per_gib


@dataclass(frozen=True)
class Gp3Advice:
    """The gp2 volume as gp3: what to provision, what it costs, what it saves, and whether
    gp3's free baseline alone covers the peaks as well."""

    size_gib: float
    iops: float
    mibps: float
    gp2_usd: float
    gp3_usd: float
    baseline_covers_peaks: bool
    baseline_covers_p95: bool
    usage: Usage
    prices_note: str = ""

    @property
    def saving_usd(self) -> float:
        return self.gp2_usd - self.gp3_usd

    @property
    def reason(self) -> str:
        provisioned = (
            "its free baseline (3,000 IOPS, 125 MiB/s)"
            if self.iops <= GP3_IOPS and self.mibps <= GP3_MIBPS
            else f"{self.iops:,.0f} IOPS and {self.mibps:,.0f} MiB/s"
        )
        verb = "saves" if self.saving_usd >= 0 else "costs"
        peaks = (
            "gp3's baseline covers even its peaks"
            if self.baseline_covers_peaks
            else f"its peaks ({self.usage.peak_iops:,.0f} IOPS, {self.usage.peak_mibps:,.1f} MiB/s) "
            "go past gp3's baseline"
        )
        return (
            f"as gp3 with {provisioned} (its p95 needs {self.usage.p95_iops:,.0f} IOPS and "
            f"{self.usage.p95_mibps:,.1f} MiB/s) it {verb} ${abs(self.saving_usd):,.2f} a month; "
            + peaks
        )


def gp3_advice(
    size_gib: float, use: Usage, prices: RegionPrices, prices_note: str = ""
) -> Gp3Advice:
    """gp3 provisioned for the p95 (never below its free baseline, within gp3's limits:
    500 IOPS per GiB, 16,000 IOPS, 0.25 MiB/s per IOPS, 1,000 MiB/s) [V1]."""
    iops = min(GP3_MAX_IOPS, GP3_IOPS_PER_GIB * size_gib, max(GP3_IOPS, math.ceil(use.p95_iops)))
    mibps = min(GP3_MAX_MIBPS, max(GP3_MIBPS, math.ceil(use.p95_mibps)))
    if mibps > GP3_MIBPS and mibps > iops * GP3_MIBPS_PER_IOPS:
        iops = min(GP3_MAX_IOPS, math.ceil(mibps / GP3_MIBPS_PER_IOPS))
    iops = max(GP3_IOPS, iops)
    gp2 = monthly_usd("gp2", size_gib, None, None, prices) or 0.0
    gp3 = monthly_usd("gp3", size_gib, iops, mibps, prices) or 0.0
    return Gp3Advice(
        size_gib=size_gib,
        iops=float(iops),
        mibps=float(mibps),
        gp2_usd=gp2,
        gp3_usd=gp3,
        baseline_covers_peaks=use.peak_iops <= GP3_IOPS and use.peak_mibps <= GP3_MIBPS,
        baseline_covers_p95=use.p95_iops <= GP3_IOPS and use.p95_mibps <= GP3_MIBPS,
        usage=use,
        prices_note=prices_note,
    )
