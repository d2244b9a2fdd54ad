"""The region timeline's pure part at its bound: lanes and bands from the most changes a
region page reads (``TIMELINE_CHANGES``), over many subjects.

    python bench/timeline.py [--changes 5000] [--subjects 300] [--runs 20] [--tiny]

Prints p50/p95 of ``apps.regions.timeline.build`` in milliseconds (pure: no database; the page
adds one indexed query for the changes and the SVG's rendering). ``--tiny``: 50 changes of 5
subjects, twice.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.lib.status import Status  # noqa: E402
from apps.regions import timeline  # noqa: E402
from bench.environment import parse_args  # noqa: E402

TINY = {"changes": 50, "subjects": 5, "runs": 2}


def changes(count: int, subjects: int, end: datetime) -> list[timeline.Change]:
    rng = random.Random(17)
    statuses = list(Status)
    current = dict.fromkeys(range(subjects), Status.OK)
    found = []
    for i in range(count):
        subject = rng.randrange(subjects)
        new = rng.choice([s for s in statuses if s != current[subject]])
        at = end - timedelta(hours=24) + timedelta(seconds=i * 86400 / count)
        found.append(
            timeline.Change(("efs", subject), f"fs-{subject}", at, current[subject], new, "bench")
        )
        current[subject] = new
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=5000)
    parser.add_argument("--subjects", type=int, default=300)
    parser.add_argument("--runs", type=int, default=20)
    args = parse_args(parser, TINY)
    end = datetime(2026, 11, 24, 14, 0, tzinfo=UTC)
    rows = changes(args.changes, args.subjects, end)
    times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        built = timeline.build(rows, end - timedelta(hours=24), end)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
    bands = sum(len(lane.bands) for lane in built.lanes)
    print(
        f"timeline.build: {args.changes} changes, {args.subjects} subjects -> "
        f"{len(built.lanes)} lanes drawn ({built.hidden_lanes} more listed only), {bands} bands; "
        f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms over {args.runs} runs"
    )


if __name__ == "__main__":
    main()
