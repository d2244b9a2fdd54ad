"""What each EFS throughput mode would cost for a few synthetic month-long workloads.

    python bench/efs_costs.py [--region us-east-1] [--provision peak|p95] [--json] [--tiny]

Each workload is 30 days of minutes (read and write bytes and requests, metadata requests, a
tenth of them writes), turned into what collection stores and reads back: per-minute metered
throughput (reads at a third; data requests at least 32 KiB, metadata ones 4 KiB), hourly totals
of what Elastic bills (metadata writes as writes), the p95 and peak.
Then the product's own pure code (``apps.efs.costs.workload_from`` and ``compare``) ranks the
modes, as the file system page does. No database, no network; about a second, so ``--tiny``
(which every benchmark takes) changes nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.efs.costs import HourTotals, billed_bytes, compare, workload_from  # noqa: E402
from apps.efs.metrics import GIB, KIB, MIB, metered_request_bytes, percentile  # noqa: E402
from bench.environment import parse_args  # noqa: E402

METADATA_BYTES = 512
METADATA_WRITE_SHARE = 0.1

DAYS = 30


@dataclass(frozen=True)
class Synthetic:
    name: str
    what: str
    standard_gib: float
    mode: str  # the mode it is in now
    provisioned_mibps: float | None = None
    ia_gib: float = 0.0
    archive_gib: float = 0.0

    def minute(self, m: int) -> tuple[float, float, float, float, float]:
        """(read MiB/s, read KiB a request, write MiB/s, write KiB, metadata ops/s)."""
        raise NotImplementedError


class SpikySmall(Synthetic):
    def minute(self, m):
        hour, minute = (m // 60) % 24, m % 60
        busy = hour in (9, 15) and minute < 10  # two 10-minute bursts a day
        return (60.0, 8.0, 20.0, 8.0, 300.0) if busy else (0.2, 8.0, 0.05, 8.0, 5.0)


class SteadyHeavy(Synthetic):
    def minute(self, m):
        wobble = 1.0 + 0.05 * math.sin(m / 37)
        return (120.0 * wobble, 256.0, 60.0 * wobble, 256.0, 50.0)


class BigQuiet(Synthetic):
    def minute(self, m):
        hour = (m // 60) % 24
        return (3.0 if 8 <= hour < 18 else 0.5, 64.0, 0.3, 64.0, 2.0)


class SmallRequests(Synthetic):
    def minute(self, m):
        return (1.5, 1.0, 0.5, 1.0, 400.0)  # 1 KiB requests: billed and metered as 32 KiB


WORKLOADS = (
    SpikySmall(
        "spiky small",
        "20 GiB; 0.2 MiB/s, two 10-minute bursts of 80 MiB/s a day; 8 KiB requests",
        20,
        "elastic",
    ),
    SteadyHeavy(
        "steady heavy",
        "500 GiB; 120 MiB/s read and 60 MiB/s written all month; 256 KiB requests",
        500,
        "elastic",
    ),
    BigQuiet(
        "big and quiet",
        "5 TiB Standard + 20 TiB IA; 3 MiB/s read office hours, 0.5 otherwise",
        5 * 1024,
        "provisioned",
        provisioned_mibps=100,
        ia_gib=20 * 1024,
    ),
    SmallRequests(
        "small requests",
        "100 GiB; 1.5 MiB/s read and 0.5 written in 1 KiB requests, 400 metadata ops/s",
        100,
        "bursting",
    ),
)


def month(w: Synthetic) -> tuple[list[HourTotals], float, float]:
    """Hourly totals as ``history.usage`` returns them, and the p95 and peak minute."""
    hours: list[HourTotals] = []
    rates: list[float] = []
    acc = [0.0, 0.0, 0.0]
    for m in range(DAYS * 1440):
        read, read_kib, write, write_kib, meta = w.minute(m)
        reads, writes = read * MIB / (read_kib * KIB) * 60, write * MIB / (write_kib * KIB) * 60
        meta_w = meta * 60 * METADATA_WRITE_SHARE
        meta_r = meta * 60 - meta_w
        metered = (
            reads * metered_request_bytes(read_kib * KIB, is_read=True)
            + writes * metered_request_bytes(write_kib * KIB)
            + meta_r * metered_request_bytes(METADATA_BYTES, is_read=True, metadata=True)
            + meta_w * metered_request_bytes(METADATA_BYTES, metadata=True)
        )
        rates.append(metered / MIB / 60)
        acc[0] += metered
        acc[1] += billed_bytes(read * MIB * 60, reads)
        acc[1] += billed_bytes(meta_r * METADATA_BYTES, meta_r, 4 * KIB)
        acc[2] += billed_bytes(write * MIB * 60, writes)
        acc[2] += billed_bytes(meta_w * METADATA_BYTES, meta_w, 4 * KIB)
        if m % 60 == 59:
            hours.append(HourTotals(60, *acc))
            acc = [0.0, 0.0, 0.0]
    return hours, percentile(rates, 95), max(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--provision", choices=("peak", "p95"), default="peak")
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, tiny={})
    out = []
    for w in WORKLOADS:
        hours, p95, peak = month(w)
        work = workload_from(
            hours,
            p95,
            peak,
            standard_bytes=w.standard_gib * GIB,
            ia_bytes=w.ia_gib * GIB,
            archive_bytes=w.archive_gib * GIB,
        )
        c = compare(
            work,
            args.region,
            provision=args.provision,
            current_mode=w.mode,
            current_provisioned_mibps=w.provisioned_mibps,
        )
        now = w.mode + (f" {w.provisioned_mibps:g} MiB/s" if w.provisioned_mibps else "")
        print(f"{w.name}: {w.what}")
        print(
            f"  metered mean {work.mean_mibps:.1f}, p95 {p95:.1f}, peak {peak:.1f} MiB/s; "
            f"Elastic bills {work.read_gib:,.0f} GB read, {work.write_gib:,.0f} GB written"
        )
        for rank, row in enumerate(c.rows, 1):
            cost = f"${row.monthly_usd:>10,.2f}" if row.available else f"{'n/a':>11}"
            fits = "fits" if row.fits else "throttles" if row.available else ""
            level = f" at {row.provisioned_mibps:.0f} MiB/s" if row.provisioned_mibps else ""
            print(f"  {rank}. {row.mode:<12}{cost}/month  {fits}{level}")
        best = c.best
        change = (
            f"${c.extra_usd:,.2f}/month more (now throttles)"
            if c.extra_usd
            else f"saving ${c.saving_usd or 0:,.2f}/month"
        )
        print(
            f"  now {now}: ${c.current_usd:,.2f}/month; cheapest that fits: "
            f"{best.mode if best else 'none'}, {change}"
        )
        print(f"  {c.reason}")
        if c.prices_note:
            print(f"  note: {c.prices_note}")
        print()
        out.append(
            {
                "workload": w.name,
                "ranking": [[r.mode, round(r.monthly_usd, 2), r.fits] for r in c.rows],
                "current": [w.mode, round(c.current_usd or 0, 2)],
                "best": best.mode if best else None,
                "saving_usd": round(c.saving_usd or 0, 2),
                "extra_usd": round(c.extra_usd or 0, 2),
            }
        )
    if args.json:
        print(json.dumps({"region": args.region, "provision": args.provision, "workloads": out}))


if __name__ == "__main__":
    main()
