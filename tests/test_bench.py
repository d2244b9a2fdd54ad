"""Every benchmark under bench/ runs at its tiny size (``--tiny``), as a person runs it, and
prints its figures: a change that breaks one fails here, not at the next measurement.

Only the printed lines' shape is checked (``{n}`` a number, ``{w}`` a word, ``{*}`` anything;
runs of spaces count as one), never a value or a time: speed is what the benchmarks measure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from django.conf import settings
from psycopg import connect, sql

from apps.efs.cloudwatch_plan import FileSystemRef, build_queries
from bench.efs_collect import get_metric_statistics_call_count, yace_style_query_count
from tests.helpers import ROOT

BENCH = ROOT / "bench"

# Files of bench/ that are not benchmarks of their own, and the benchmark that uses each.
HELPERS = {
    "alerts_settings.py": "alerts.py",
    "environment.py": "hostile.py",  # and every other one: --tiny and the Django environment
    "load_setup.py": "load.sh",
    "load_wsgi.py": "load.sh",
    "load.lua": "load.sh",
}

#: Benchmark file name -> the test that runs it tiny (filled by ``@tiny``).
TINY_RUNS: dict[str, Callable[..., None]] = {}


def tiny(script: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def register(test: Callable[..., None]) -> Callable[..., None]:
        TINY_RUNS[script] = test
        return test

    return register


def test_every_benchmark_has_a_tiny_run_here():
    benchmarks = {path.name for path in BENCH.iterdir() if path.is_file()} - set(HELPERS)
    assert benchmarks == set(TINY_RUNS), (
        "every script under bench/ takes --tiny and has a test here that runs it "
        "(or, if it serves another, is listed in HELPERS)"
    )


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_every_helper_is_used_by_its_benchmark(helper):
    used_by = (BENCH / HELPERS[helper]).read_text()
    stem = helper.rsplit(".", 1)[0]
    assert (BENCH / helper).is_file()
    assert any(name in used_by for name in (helper, f"bench.{stem}", f"{stem}:application"))


# --- Running one ---------------------------------------------------------------------------

NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?"
PLACES = {"{n}": NUMBER, "{w}": r"\S+", "{*}": r".*?"}


def shape(pattern: str) -> re.Pattern[str]:
    """``pattern`` with its placeholders as regular expressions, the rest literal."""
    parts = re.split(r"(\{n\}|\{w\}|\{\*\})", " ".join(pattern.split()))
    return re.compile("".join(PLACES.get(part) or re.escape(part) for part in parts))


def assert_prints(output: str, *patterns: str) -> None:
    """Each pattern matches some whole line of ``output``."""
    lines = [" ".join(line.split()) for line in output.splitlines()]
    for pattern in patterns:
        regex = shape(pattern)
        assert any(regex.fullmatch(line) for line in lines), (
            f"no line shaped {pattern!r} in:\n{output}"
        )


def run(command: list[str], timeout: float = 600, **env: str) -> str:
    """Run ``command`` in the checkout with the environment of a person's shell (none of the
    tests' Django or Vigil settings), plus ``env``; its output once it exited 0."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "VIGIL_")) and k not in ("DATABASE_URL", "SECRET_KEY")
    }
    done = subprocess.run(
        command,
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, (
        f"{' '.join(command)} exited {done.returncode}\n{done.stdout[-4000:]}\n"
        f"{done.stderr[-4000:]}"
    )
    return done.stdout


def bench(script: str, *args: str, **env: str) -> str:
    return run([sys.executable, str(BENCH / script), "--tiny", *args], **env)


def on_postgresql() -> bool:
    return settings.DATABASES["default"]["ENGINE"].endswith("postgresql")


def on_server(statement: str, name: str) -> None:
    """Run ``statement`` (``{}`` the database ``name``) on the suite's PostgreSQL server."""
    db = settings.DATABASES["default"]
    params = {k: db[k.upper()] or None for k in ("host", "port", "user", "password")}
    with connect(dbname="postgres", autocommit=True, **params) as conn:
        conn.execute(sql.SQL(statement).format(sql.Identifier(name)))


@pytest.fixture
def bench_database(request) -> Iterator[list[str]]:
    """``["--database-url", URL]``: a new empty database for the benchmark on the suite's
    PostgreSQL server (named after the suite's and the benchmark), dropped afterwards; ``[]``
    on SQLite (the benchmark makes a temporary SQLite database of its own)."""
    if not on_postgresql():
        yield []
        return
    db = settings.DATABASES["default"]
    script = next(name for name, test in TINY_RUNS.items() if test is request.function)
    name = re.sub(r"\W", "_", f"vigil_benchtiny_{db['NAME']}_{script}")[:63]
    on_server("DROP DATABASE IF EXISTS {} WITH (FORCE)", name)  # a killed run's
    on_server("CREATE DATABASE {}", name)
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    try:
        yield ["--database-url", f"postgres://{db['USER']}{password}@{host}:{port}/{name}"]
    finally:
        on_server("DROP DATABASE IF EXISTS {} WITH (FORCE)", name)


# --- One test a benchmark --------------------------------------------------------------------


@pytest.mark.slow
@tiny("raid.py")
def test_it_runs_the_raid_benchmark_tiny():
    out = bench("raid.py")
    assert_prints(
        out,
        "seed {n} arrays median {n} ms max {n} ms | {*}",
        "seed, rebuilding {n} arrays median {n} ms max {n} ms | {*}",
        "raid0 over {n} mirrors, {n} servers {n} arrays median {n} ms max {n} ms | {*}",
    )


@tiny("timeline.py")
def test_it_runs_the_timeline_benchmark_tiny():
    assert_prints(
        bench("timeline.py"),
        "timeline.build: {n} changes, {n} subjects -> {n} lanes drawn ({n} more listed only), "
        "{n} bands; p50 {n} ms, p95 {n} ms over {n} runs",
    )


@pytest.mark.slow
@tiny("efs_costs.py")
def test_it_runs_the_efs_costs_benchmark_tiny():
    assert_prints(
        bench("efs_costs.py"),
        "{*}: {n} GiB; {*}",
        "metered mean {n}, p95 {n}, peak {n} MiB/s; Elastic bills {n} GB read, {n} GB written",
        "{n}. {w} ${*}/month {*}",
        "now {*}: ${n}/month; cheapest that fits: {w}, {*}",
    )


@pytest.mark.slow
@tiny("metrics.py")
def test_it_runs_the_metrics_benchmark_tiny(bench_database):
    assert_prints(
        bench("metrics.py", *bench_database),
        "database: {w}",
        "build_s: {n}",
        "subjects: {'galera': {n}, 'raid': {n}, 'efs': {n}, 'probes': {n}}",
        *(f"{key}: {{n}}" for key in ("samples", "queries", "p50_ms", "p95_ms", "cached_ms")),
        "body_kib: {n}",
        "gzip_kib: {n}",
    )


@pytest.mark.slow
@tiny("hostile.py")
def test_it_runs_the_hostile_input_benchmark_tiny(bench_database):
    assert_prints(
        bench("hostile.py", *bench_database),
        "{w}, {n} cores, load average {n}; median of {n} runs a case",
        "parser cases worst ms/KiB (case, KiB, ms) slowest ms",
        "mdstat {n} {n} {w} ({n} KiB, {n} ms) {n}",
        "report {n} {n} {w} ({n} KiB, {n} ms) {n}",
        "cron {n} {n} {w} ({n} KiB, {n} ms) {n}",
        "push KiB status answer ms judge ms CPU ms",
        "{w} {n} 400 {n}",
        "{w} {n} 200 {n} {n} {n}",
        "{*} {n} 200 {n} {n} {n} too large to judge",
        "no report over 1 MiB accepted largest accepted {n} KiB ({*}); 1 MiB + 1 byte: {n} in "
        "{n} ms; chunked 4 MiB: {n} after reading {n} bytes",
        "judged in at most 500 ms of CPU slowest {n} ms CPU, {n} ms wall ({*}): {*}",
        "(the whole push, database included) slowest answer {n} ms ({*}, {n})",
        "threshold bodies: {n} PUTs, statuses [200, 400]; slowest answer {n} ms ({*}, {n} KiB, {n})",
    )


PAGES = ["trivial", "home", "region", "filesystem", "filesystem_3h", "filesystem_30d",
         "cluster", "host", "probe", "home_uncached", "region_uncached"]  # fmt: skip


@pytest.mark.slow
@tiny("pages.py")
def test_it_runs_the_pages_benchmark_tiny(bench_database):
    assert_prints(
        bench("pages.py", *bench_database),
        "seeded in {n} s",
        "API history lists (load average {n}); goal: p95 flat from 1x",
        "1x: {n} probe results, {n} snapshots",
        "api_results {n} {n} {n}",
        "api_results_page{n} {n} {n} {n}",
        "{w}, {n} cores; {n} requests a page after {n} warm-up, in-process (Django test client, "
        "logged in)",
        "page p50 ms p95 ms x trivial queries CPU p50 SQL ms KiB url",
        *(f"{page} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}} /{{*}}" for page in PAGES),
        "goals: home p95 {n}x and region p95 {n}x trivial (<= 3x)",
        "filesystem_24h p95 {n} ms (goal <= 50 ms: {*}), CPU p50 {n} ms",
        "region_uncached p95 {n} ms (goal <= 100 ms: {*}), CPU p50 {n} ms",
    )


@pytest.mark.slow
@tiny("efs_partitions.py")
def test_it_runs_the_efs_partitions_benchmark_tiny(bench_database):
    assert_prints(
        bench("efs_partitions.py", *bench_database),
        "load_average: {n}",
        "chart_24h: {'pages': {n}, 'wall_p50_ms': {n}, 'cpu_p50_ms': {n}, {*}}",
        "expiry: {'partitioned': {w} 'minute_rows': {n}, 'rollup_hours': {n}, {*}}",
        "load_average_after: {n}",
    )


CYCLE = "wall {n} s{*}, collector CPU {n} s ({n} ms per file system), stand-in CPU {n} s, "


@pytest.mark.slow
@pytest.mark.stack
@tiny("efs_collect.py")
def test_it_runs_the_efs_collection_benchmark_tiny(bench_database):
    assert_prints(
        bench("efs_collect.py", *bench_database),
        "fleet: {n} file systems in {n} regions, {n} worker processes, {n} cores, {w} "
        "(created in {n} s, discovered in {n} s)",
        "first cycle (3 h look-back, {n} calls): " + CYCLE + "load average {n}",
        "steady cycle ({n} min window): " + CYCLE + "load average {n}",
        "hourly late-look cycle ({n} min + the last {n} min asked again): "
        + CYCLE
        + "load average {n}",
        "part wall s share CPU s share CPU ms/fs",
        "fetch {n} {n}% {n} {n}% {n}",
        "judge {n} {n}% {n} {n}% {n}",
        "region queries calls ceil(q/500) throttled",
        "us-east-1 {n} {n} {n} {n}",
        "API calls {n} with the late look, {n} without (minimum {n}); minute rows added {n}; "
        "gaps filled by the look {n} of {n} emptied; statuses {*}",
        "metrics requested {n} vs YACE-style {n}: {n}x (goal <= 0.67x); peak RSS {n} MB "
        "(workers {n} MB)",
        "naive GetMetricStatistics: {n} calls for {n} file systems in {n} s; {n} calls for the "
        "fleet (about {n} s at that rate, one call at a time) vs {n}",
    )


@pytest.mark.slow
def test_the_efs_plan_asks_at_most_two_thirds_of_a_yace_style_job():
    refs = [FileSystemRef(f"fs-{i:08x}") for i in range(1000)]
    ours = len(build_queries(refs))
    yace = yace_style_query_count(refs)
    assert yace == 1000 * 14 * 3
    assert ours / yace <= 0.67
    assert ours / yace == pytest.approx(0.476, abs=0.001)


def test_the_efs_bench_counts_a_naive_get_metric_statistics_collector():
    refs = [
        FileSystemRef("fs-0123456789abcdef0"),
        FileSystemRef("fs-89abcdef", performance_mode="maxIO"),
    ]
    assert get_metric_statistics_call_count(refs, 5) == 14 + 13
    assert get_metric_statistics_call_count(refs, 1441) == 2 * (14 + 13)


@pytest.mark.slow
@tiny("ebs_collect.py")
def test_it_runs_the_ebs_collection_benchmark_tiny_at_the_call_floor(bench_database):
    output = bench("ebs_collect.py", "--json", *bench_database)
    figures = json.loads(output[output.index("{") :])
    assert figures["volumes"] == 6  # and the instance's root volume
    for cycle in figures["cycles"]:
        assert cycle["calls"] == cycle["standin_calls"] == cycle["floor"] == 1
        assert cycle["rows"] > 0 and cycle["statuses"]["unknown"] == 0


@pytest.mark.slow
@tiny("nfs_clients.py")
def test_it_runs_the_nfs_clients_benchmark_tiny(bench_database):
    assert_prints(
        bench("nfs_clients.py", *bench_database),
        "database: {w}",
        "push: p50 {n} ms, p95 {n} ms over {n} pushes of {n} mounts ({n} KiB each)",
        "NfsSample: {n} rows; a day keeps {*}",
        "NfsHour: {n} rows; a day keeps {*}",
        "page with {n} rows of {n} clients over {n} h: p50 {n} ms, p95 {n} ms "
        "(goal p95 <= {n} ms: {*} on wall time), {n} queries, {n} KiB; load average {*}",
        # the database backend's CPU where it can be read (PostgreSQL on this machine)
        "CPU in-process p50 {n} ms, p95 {n} ms{*} (goal on CPU, {*})",
        "page with its clients' section cached ({n} s): p50 {n} ms, p95 {n} ms, {n} queries; {*}",
        "clients' shares alone: p50 {n} ms, p95 {n} ms; {*}",
    )


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.workers
@pytest.mark.services
@pytest.mark.stack
@tiny("alerts.py")
def test_it_runs_the_alerts_benchmark_tiny(bench_database, moto_server):
    assert_prints(
        bench("alerts.py", "--aws-url", moto_server, *bench_database),
        "transitions: {n} at {n}/s over {n} regions",
        "status change -> SES accepted: p50 {n} s, p95 {n} s, max {n} s",
        "flapping storm: {n} subjects x {n} changes = {n} transitions -> {n} emails",
        "silence end -> SES accepted the email about a subject still failing: p50 {n} s, "
        "p95 {n} s, max {n} s over {n} subjects ending over {n} s (goal <= 60 s)",
        "status change -> webhook receiver: p50 {n} s, p95 {n} s over {n} changes (goal <= 2 s)",
        "storage server storm: {n} hosts x 6 arrays = {n} transitions -> 1 webhook messages and "
        "1 PagerDuty events per storm; to the first: p50 {n} s, p95 {n} s over {n} storms",
    )


TIMES = "{'median_ms': {n}, 'p95_ms': {n}, 'max_ms': {n}}"


@tiny("galera.py")
def test_it_runs_the_galera_benchmark_tiny_on_the_suites_cluster(galera):
    """On the suite's cluster (``--nodes``): polls only. Started without it, the benchmark
    starts a cluster of its own, then kills and rejoins a node."""
    nodes = ",".join(f"127.0.0.1:{node.sql_port}" for node in galera.nodes)
    assert_prints(
        bench("galera.py", "--nodes", nodes),
        "polls: {n}",
        "timeout_s: {n}",
        f"three_nodes: {TIMES}",
        f"with_a_black_holed_node: {TIMES}",
    )


@pytest.mark.nginx
@pytest.mark.services
@tiny("probes.py")
def test_it_runs_the_keepalive_probes_benchmark_tiny():
    assert_prints(
        bench("probes.py"),
        "probes: {n} ({n} measured, {n} failed, {n} capped)",
        "peak RSS: {n} MB (goal <= 200 MB)",
        "max abs error: {n} s vs {n} s (goal <= 0.2 s; median {n}, p99 {n})",
        "time to start all: {n} s (tasks created in {n} s)",
    )


@pytest.mark.slow
@pytest.mark.workers
@pytest.mark.services
@pytest.mark.stack
@tiny("memory.py")
def test_it_runs_the_memory_benchmark_tiny():
    assert_prints(
        bench("memory.py"),
        "web answered {n} s after the start; waiting {n} s",
        "PSS MB RSS MB pid process",
        "{n} {n} {n} python -m config.run",
        "{n} {n} {n} python -m celery -A config worker {*}",
        "{n} {n} total of {n} processes (PSS goal ≤ 500 MB; {*})",
        "Ctrl-C stopped every process in {n} s",
    )


TARGETS = {"healthz": "/healthz", "stack": "/__bench__/stack/", "home": "/",
           "region": "/regions/{n}/", "api": "/api/efs/filesystems/?limit=100",
           "api-plain": "/api/efs/filesystems/?limit=100"}  # fmt: skip


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.workers
@pytest.mark.services
@pytest.mark.stack
@tiny("load.sh")
def test_it_runs_the_load_benchmark_tiny(bench_database):
    if not bench_database:
        pytest.skip("bench/load.sh needs PostgreSQL: the suite runs on SQLite (no DATABASE_URL)")
    out = run([str(BENCH / "load.sh"), "--tiny"], DATABASE_URL=bench_database[1])
    assert_prints(
        out,
        "Machine: {n} cores; gunicorn: {n} {w} workers x {n} thread(s); wrk: {n} connections, "
        "{n} threads, {w} per target, timeout {w}; database: PostgreSQL; fleet: {*}",
        *(f"=== {target}: GET {path}" for target, path in TARGETS.items()),
        "target req/s x healthz x stack goal p50 ms p90 ms p99 ms max ms socket errors "
        "non-2xx/3xx not 200",
        *(
            f"{target} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}}"
            for target in ("healthz", "stack", "home", "region")
        ),
        "api {n} {n} {n} >={n} {n} {n} {n} {n} {n} {n} {n}",
        "api-plain {n} {n} {n} {n} {n} {n} {n} {n} {n} {n}",
        "CPU per request, ms (user + system): server Redis wrk cores busy: server Redis wrk",
        *(f"{target} {{n}} {{n}} {{n}} {{n}} {{n}} {{n}}" for target in TARGETS),
        "api list: {n}x the stack floor (goal >= {n}x: {*})",
        "api list: {n} ms of server CPU a request against the stack floor's {n} ms, wrk {n} ms "
        "against {n} ms (the load is shared: req/s moves with it, CPU a request less)",
        *(
            line.format(target=target)
            for target in ("api", "api-plain")
            for line in (
                "{target} CPU per request: {{n}} ms over {{n}} requests = API key {{n}} + role "
                "{{n}} + rate limits {{n}} + view {{n}} + middleware, rendering, WSGI {{n}}",
                "{target} fast path (apps/api/fastpath.py): {{n}} of {{n}} requests answered "
                "before DRF; the rest went through the whole stack",
            )
        ),
        "gunicorn: {n} worker timeouts, {n} tracebacks in its log",
        "errors: {*}",
    )
