"""How long judging one host's report takes (parse, topology, verdicts, failure domains).

    python bench/raid.py [--repeat 20] [--json] [--tiny]

Pure code, no database: ``report.assess`` on the seed layout (md99 over md1..md5 on three
storage servers), on the seed with a rebuild, and on a wide host: a RAID-0 over N two-way
mirrors whose disks sit on D servers (every domain holds several disks, so the domain
headroom is found by trying sets of domains). ``--tiny`` judges each once.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.environment import django_environment  # noqa: E402

# The seed layout lives with the demo (apps/raid/demo.py), which reads models: Django is set up
# on a throwaway SQLite file that the benchmark never opens.
django_environment("", "raid")
django.setup()

from apps.raid.demo import SEED_RULES, seed_layout_mdstat  # noqa: E402
from apps.raid.report import assess  # noqa: E402
from bench.environment import parse_args  # noqa: E402

TINY = {"repeat": 1}


def wide_host(mirrors: int, servers: int) -> tuple[str, dict[str, str]]:
    lines = ["Personalities : [raid1] [raid0]"]
    members = " ".join(f"md{i}[{i - 1}]" for i in range(1, mirrors + 1))
    lines += [
        f"md0 : active raid0 {members}",
        f"      {mirrors * 1024} blocks super 1.2 512k chunks",
    ]
    rules = {}
    for i in range(1, mirrors + 1):
        a, b = f"disk{i}a", f"disk{i}b"
        rules[a] = f"server-{(2 * i) % servers}"
        rules[b] = f"server-{(2 * i + 1) % servers}"
        lines += [f"md{i} : active raid1 {b}[1] {a}[0]", "      1024 blocks super 1.2 [2/2] [UU]"]
    lines.append("unused devices: <none>")
    return "\n".join(lines) + "\n", rules


def timed(text: str, rules: dict[str, str], repeat: int) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        report = assess(text, None, rules, "server")
        runs.append((time.perf_counter() - started) * 1000)
    root = report.arrays[0]
    return {
        "arrays": len(report.arrays),
        "median_ms": round(statistics.median(runs), 2),
        "max_ms": round(max(runs), 2),
        "root_says": root.domain_headroom_text,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, TINY)
    cases = {
        "seed": (seed_layout_mdstat(), SEED_RULES),
        "seed, rebuilding": (seed_layout_mdstat(rebuilding="sdh"), SEED_RULES),
        "raid0 over 50 mirrors, 10 servers": wide_host(50, 10),
        "raid0 over 200 mirrors, 20 servers": wide_host(200, 20),
    }
    results = {name: timed(text, rules, args.repeat) for name, (text, rules) in cases.items()}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, r in results.items():
        print(
            f"{name:38} {r['arrays']:4} arrays  median {r['median_ms']:8.2f} ms"
            f"  max {r['max_ms']:8.2f} ms  | {r['root_says']}"
        )


if __name__ == "__main__":
    main()
