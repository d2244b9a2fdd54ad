#!/usr/bin/env bash
# Load test: wrk against gunicorn with the production settings, on loopback only.
#
#   bench/load.sh                                  # the issue's run: 200 connections, 60 s each
#   CONNECTIONS=20 DURATION=5s bench/load.sh       # a quick run
#   bench/load.sh --tiny                           # what make test runs: 2 connections, 1 s
#                                                  # each, 2 workers, a fleet of a few (seeded
#                                                  # in a database of its own unless
#                                                  # DATABASE_URL is set, dropped at the end)
#
# Targets, one after the other: /healthz (the floor: what this server, machine and wrk do for a
# request that reads nothing; the first middleware answers it), /__bench__/stack/ (a view that
# answers "ok" through the whole middleware stack and reads nothing: bench/load_wsgi.py adds it
# to Vigil's URLs for this run), the home page and the busiest region page (logged in with a
# session cookie), and an API list, /api/efs/filesystems/?limit=100 (a read-only API key), twice:
# "api" as Python's requests and httpx ask for it (Accept-Encoding: gzip, deflate; 14 KB gzipped
# of the 210 KB body) and "api-plain" as curl without --compressed does (no Accept-Encoding: all
# 210 KB). Every target sends that same Accept-Encoding but api-plain (the stack's "ok" is too
# small to compress).
# For each it prints wrk's own report, then a summary: requests/s and its ratios to /healthz's
# and to the stack floor's in the same run, latency p50/p90/p99, socket errors (connect, read,
# write, timeout), wrk's "Non-2xx or 3xx responses", and every answer that was not a 200 (a 302
# to the login page is a failure here), by status. Then the CPU time (user + system) each target
# cost a request in the server (gunicorn's master and workers), in Redis and in wrk, and how much
# of a core each kept busy: the machine is shared, so requests/s moves with the load while CPU a
# request moves less, and the load generator's share (wrk reads, parses and hands to
# bench/load.lua's response() every body) is the client's cost, not the server's. Goals: 0
# errors; the API list ("api") at >= 0.5x the stack floor in the same run (a view that reads
# nothing through the same middleware), printed with both CPU figures. Then each API target's
# CPU per request in the workers, split: the API key, the role, the rate limits, the view, and
# what is around them (middleware, rendering, WSGI), added up by each worker
# (bench/load_wsgi.py, LOAD_CPU_DIR), and how many of its requests the fast path answered
# (apps/api/fastpath.py).
#
# Measured 2026-11-26 on 2 cores shared with five other sessions (load average 5-12), 1,000 file
# systems seeded with --days 1, 5 sync workers, TARGETS="stack api api-plain": "api" at
# 0.44-1.17x the stack in six runs of DURATION=10s (met in four) and 0.78x, 0.98x, 0.86x in
# three of ROUNDS=4 DURATION=8s; "api-plain" at 0.32-0.52x and 0.47-0.59x. CPU a request: server
# 0.85-1.34 ms (api), 1.2-1.5 ms (api-plain), 0.72-1.26 ms (stack); wrk 0.1 ms, 0.4 ms for 210 KB
# bodies (0.15 ms with no response() in bench/load.lua). docs/benchmarks.md has the runs.
#
# The server: gunicorn, config.settings.production (DEBUG off, a random SECRET_KEY,
# ALLOWED_HOSTS=127.0.0.1, secure cookies, static files collected into var/static), PostgreSQL,
# and a Redis of its own (cache: sessions' users, API rate limits; started on a free loopback
# port and stopped at the end). Workers: WORKERS sync workers, 2 x cores + 1 by default
# (gunicorn's advice; Vigil's views are short CPU-bound requests on a database). Sync workers
# close the connection after each answer, so wrk reconnects for every request, as browsers
# behind a proxy that does not reuse upstream connections would. WORKER_CLASS=gthread
# THREADS_PER_WORKER=4 WORKERS=3 runs the production image's server instead (Dockerfile: threads,
# connections kept alive).
#
# The API's rate limits (VIGIL_API_RATE_READ/_WRITE per key, VIGIL_API_RATE_USER_READ/_WRITE per
# user) are raised to 1,000,000,000/min here: the throttle still counts every request in Redis,
# but never refuses one, so what is measured is the server, not the limit.
#
# Environment (all optional):
#   DATABASE_URL   PostgreSQL (default postgres://postgres@127.0.0.1:5432/vigil_load, created
#                  when missing, migrated). When it has no file system yet it is seeded with
#                  `manage.py seed_fleet $SEED_ARGS` (default: the users' story, 30 days).
#                  A database this run created is dropped at its end with --tiny only (a
#                  full run's seed takes minutes: it is kept for the next run).
#   CONNECTIONS (200)  DURATION (60s)  THREADS (2)  TIMEOUT (30s): wrk's -c, -d, -t, --timeout
#                  (a request slower than TIMEOUT counts as an error).
#   WARMUP (5s; 1s with --tiny)  wrk's load on each target before it is measured, so that every
#                  worker has its database connection and its imports (not counted anywhere).
#   ROUNDS (1)     load the targets round after round, each for DURATION, and add each
#                  target's rounds up (its latencies: the worst round's): on a shared machine
#                  whose load drifts, ROUNDS=4 DURATION=10s judges a ratio better than one
#                  40-second run of each target after the other.
#   WORKERS (2*cores+1)  WORKER_CLASS (sync)  THREADS_PER_WORKER (1): gunicorn.
#   TARGETS        a subset of "healthz stack home region api api-plain" (default all six; the
#                  ratios need healthz and stack).
#   JSON=1         print the summary also as one JSON line, last.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PY=$ROOT/.venv/bin/python
CORES=$(nproc)
HZ=$(getconf CLK_TCK)
TINY=""
case "${1:-}" in
"") ;;
--tiny)
    TINY=1
    CONNECTIONS=${CONNECTIONS:-2} DURATION=${DURATION:-1s} THREADS=${THREADS:-1} WORKERS=${WORKERS:-2}
    SEED_ARGS=${SEED_ARGS:---filesystems 5 --regions 1 --clusters 1 --arrays 1 --probes 1 --days 1}
    DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/vigil_load_tiny_$$}
    ;;
*)
    echo "usage: bench/load.sh [--tiny] (settings in the environment: see the top of this file)" >&2
    exit 2
    ;;
esac
CONNECTIONS=${CONNECTIONS:-200}
DURATION=${DURATION:-60s}
THREADS=${THREADS:-2}
TIMEOUT=${TIMEOUT:-30s}
WARMUP=${WARMUP:-${TINY:+1s}}
WARMUP=${WARMUP:-5s}
WORKERS=${WORKERS:-$((2 * CORES + 1))}
WORKER_CLASS=${WORKER_CLASS:-sync}
THREADS_PER_WORKER=${THREADS_PER_WORKER:-1}
ROUNDS=${ROUNDS:-1}
ROUNDS_SHOWN=$([ "$ROUNDS" -gt 1 ] && echo "$ROUNDS" || true)
TARGETS=${TARGETS:-healthz stack home region api api-plain}
SEED_ARGS=${SEED_ARGS:---filesystems 1000 --regions 10 --clusters 50 --arrays 500 --probes 1000 --days 30}
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/vigil_load}

if ! command -v wrk >/dev/null; then
    echo "Installing Debian's wrk"
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk
fi

WORK=$(mktemp -d -t vigil-load-XXXXXX)
chmod 700 "$WORK"
GUNICORN_PID=""
REDIS_PID=""
CREATED_DATABASE=""
cleanup() {
    if [ -s "$WORK/credentials.sh" ]; then
        "$PY" bench/load_setup.py cleanup "$WORK/credentials.sh" || true
    fi
    [ -n "$GUNICORN_PID" ] && kill "$GUNICORN_PID" 2>/dev/null && wait "$GUNICORN_PID" 2>/dev/null
    [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
    if [ -n "$TINY" ] && [ -n "$CREATED_DATABASE" ]; then
        "$PY" bench/load_setup.py dropdb || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# CPU time (user + system, in clock ticks) of the processes given and of the children they
# waited for; a process that is gone counts 0.
ticks() {
    local pid total=0 stat
    for pid in "$@"; do
        # after "pid (name) ": state is field 0, utime, stime, cutime, cstime fields 11-14
        read -ra stat < <(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null) || continue
        total=$((total + stat[11] + stat[12] + stat[13] + stat[14]))
    done
    echo "$total"
}
server_ticks() {
    # shellcheck disable=SC2046
    ticks "$GUNICORN_PID" $(pgrep -P "$GUNICORN_PID")
}

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- Redis of our own, on loopback, no persistence ----------------------------------------------
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --dir "$WORK" \
    --logfile "$WORK/redis.log" &
REDIS_PID=$!
for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# --- Production settings -----------------------------------------------------------------------
export DJANGO_SETTINGS_MODULE=config.settings.production
SECRET_KEY=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(50))')
export SECRET_KEY
export ALLOWED_HOSTS=127.0.0.1 DEBUG=false SESSION_COOKIE_SECURE=true VIGIL_DEMO=false
export CACHE_URL=redis://127.0.0.1:$REDIS_PORT/1 CELERY_BROKER_URL=redis://127.0.0.1:$REDIS_PORT/0
export LOG_LEVEL=WARNING
# Raise the API's rate limits (see above), if this version of Vigil has them (wherever its
# settings are declared).
for name in VIGIL_API_RATE_READ VIGIL_API_RATE_WRITE VIGIL_API_RATE_USER_READ \
    VIGIL_API_RATE_USER_WRITE; do
    if grep -rqs --include='*.py' "\"$name\"" config apps; then export "$name=1000000000/min"; fi
done

# --- Database: create, migrate, seed when empty ------------------------------------------------
if [ "$("$PY" bench/load_setup.py createdb)" = created ]; then
    CREATED_DATABASE=1
    echo "Created database ${DATABASE_URL##*/}"
fi
"$PY" manage.py migrate --noinput -v0
"$PY" manage.py collectstatic --noinput -v0
# shellcheck disable=SC2086
"$PY" bench/load_setup.py seed $SEED_ARGS

# --- Credentials (a session, an API key): to a private file, never to the output ---------------
"$PY" bench/load_setup.py prepare "$WORK/credentials.sh"
# shellcheck disable=SC1091
. "$WORK/credentials.sh"

# --- gunicorn ----------------------------------------------------------------------------------
PORT=$(free_port)
mkdir "$WORK/cpu"
LOAD_CPU_DIR=$WORK/cpu "$ROOT/.venv/bin/gunicorn" load_wsgi:application --pythonpath "$ROOT/bench" --bind "127.0.0.1:$PORT" \
    --workers "$WORKERS" --worker-class "$WORKER_CLASS" --threads "$THREADS_PER_WORKER" \
    --backlog 2048 --timeout 60 --log-level warning --error-logfile "$WORK/gunicorn.log" &
GUNICORN_PID=$!
BASE=http://127.0.0.1:$PORT
for _ in $(seq 100); do
    curl -fsS -o /dev/null "$BASE/healthz" 2>/dev/null && break
    sleep 0.2
done

echo "Machine: $CORES cores; gunicorn: $WORKERS $WORKER_CLASS workers x $THREADS_PER_WORKER" \
    "thread(s); wrk: $CONNECTIONS connections, $THREADS threads, $DURATION per target," \
    "timeout $TIMEOUT; database: PostgreSQL; fleet: $LOAD_FLEET"

RESULTS=$WORK/results.txt
: >"$RESULTS"
for round in $(seq "$ROUNDS"); do for target in $TARGETS; do
    case $target in
    healthz) path=/healthz header=X-Bench value=floor ;;
    stack) path=/__bench__/stack/ header=X-Bench value=floor ;;
    home) path=/ header=Cookie value=$LOAD_SESSION_COOKIE ;;
    region)
        path=$LOAD_REGION_PATH header=Cookie value=$LOAD_SESSION_COOKIE
        [ -n "$path" ] || { echo "No region to load; skipping the region page" >&2; continue; }
        ;;
    api | api-plain)
        path="/api/efs/filesystems/?limit=100" header=Authorization value="Bearer $LOAD_API_KEY"
        ;;
    *) echo "Unknown target $target (healthz, stack, home, region, api, api-plain)" >&2; exit 2 ;;
    esac
    encoding="gzip, deflate" # what requests and httpx send, and browsers (with more)
    if [ "$target" = api-plain ]; then encoding=""; fi
    if [ "$round" = 1 ]; then
        # One request first: a target that does not answer 200 is not worth a minute of load.
        status=$(LOAD_HEADER_VALUE=$value "$PY" -c '
import os, sys, urllib.request
request = urllib.request.Request(sys.argv[1], headers={sys.argv[2]: os.environ["LOAD_HEADER_VALUE"], "X-Forwarded-Proto": "https"})
class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args): return None
try:
    print(urllib.request.build_opener(NoRedirect).open(request, timeout=60).status)
except urllib.error.HTTPError as error:
    print(error.code)
' "$BASE$path" "$header")
        if [ "$status" != 200 ]; then
            echo "$target ($path) answers $status, not 200: not loading it" >&2
            tail -20 "$WORK/gunicorn.log" >&2
            exit 1
        fi
        # Warm every worker first (its database connection, lazy imports): not measured, and
        # left out of the CPU split (X-Bench-Warmup, bench/load_wsgi.py).
        LOAD_TARGET=$target LOAD_HEADER_NAME=$header LOAD_HEADER_VALUE=$value LOAD_WARMUP=1 \
            LOAD_ACCEPT_ENCODING=$encoding \
            wrk -t "$THREADS" -c "$CONNECTIONS" -d "$WARMUP" --timeout "$TIMEOUT" \
            -s bench/load.lua "$BASE$path" >/dev/null
    fi
    echo
    echo "=== $target: GET $path${ROUNDS_SHOWN:+ (round $round of $ROUNDS)}"
    server_before=$(server_ticks) redis_before=$(ticks "$REDIS_PID")
    LOAD_TARGET=$target LOAD_HEADER_NAME=$header LOAD_HEADER_VALUE=$value \
        LOAD_ACCEPT_ENCODING=$encoding "$PY" bench/load_setup.py cpu "$WORK/wrk-cpu" \
        wrk --latency -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" --timeout "$TIMEOUT" \
        -s bench/load.lua "$BASE$path" | tee "$WORK/wrk-$target.txt"
    server_after=$(server_ticks) redis_after=$(ticks "$REDIS_PID")
    grep '^RESULT ' "$WORK/wrk-$target.txt" | sed 's/^RESULT //' >>"$RESULTS"
    echo "{\"target\": \"$target\", \"server\": $(((server_after - server_before) * 1000 / HZ))," \
        "\"redis\": $(((redis_after - redis_before) * 1000 / HZ)), \"wrk\": $(cat "$WORK/wrk-cpu")}" \
        >>"$WORK/processes.txt"
done; done

echo
"$PY" - "$RESULTS" "$WORK/gunicorn.log" "${JSON:-}" "$WORK/cpu" "$WORK/processes.txt" "$ROUNDS" <<'EOF'
import json, pathlib, sys

# ROUNDS > 1: each target's rounds added up (requests, time, errors, CPU), its latencies the
# worst round's.
results, processes = {}, {}
for r in map(json.loads, open(sys.argv[1])):
    if (total := results.setdefault(r["target"], r)) is not r:
        for name in ("requests", "duration_s", "non_2xx_3xx", "not_200"):
            total[name] += r[name]
        for name in ("p50_ms", "p90_ms", "p99_ms", "max_ms"):
            total[name] = max(total[name], r[name])
        for part in ("socket_errors", "statuses"):
            for name, n in r[part].items():
                total[part][name] = total[part].get(name, 0) + n
        total["requests_per_s"] = total["requests"] / total["duration_s"]
results = list(results.values())
for p in map(json.loads, open(sys.argv[5])):
    if (total := processes.setdefault(p["target"], p)) is not p:
        for part in ("server", "redis", "wrk"):
            total[part] += p[part]
log = open(sys.argv[2]).read()
floor = next((r["requests_per_s"] for r in results if r["target"] == "healthz"), None)
stack = next((r["requests_per_s"] for r in results if r["target"] == "stack"), None)
GOALS = {"api": 0.5}  # of the stack floor's requests/s
print(f"{'target':<8} {'req/s':>8} {'x healthz':>9} {'x stack':>8} {'goal':>6} {'p50 ms':>8}"
      f" {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8} {'socket errors':>14} {'non-2xx/3xx':>11}"
      f" {'not 200':>8}")
for r in results:
    socket = sum(r["socket_errors"].values())
    r["x_healthz"] = round(r["requests_per_s"] / floor, 2) if floor else None
    r["x_stack"] = round(r["requests_per_s"] / stack, 2) if stack else None
    ratio = f"{r['x_healthz']:.2f}" if floor else "-"
    goal = f">={GOALS[r['target']]}" if r["target"] in GOALS else ""
    of_stack = f"{r['x_stack']:.2f}" if stack else "-"
    print(f"{r['target']:<8} {r['requests_per_s']:>8.1f} {ratio:>9} {of_stack:>8} {goal:>6}"
          f" {r['p50_ms']:>8.1f} {r['p90_ms']:>8.1f}"
          f" {r['p99_ms']:>8.1f} {r['max_ms']:>8.1f} {socket:>14} {r['non_2xx_3xx']:>11}"
          f" {r['not_200']:>8}")
    if socket or r["not_200"]:
        print(f"         socket errors {r['socket_errors']}, statuses {r['statuses']}")
print(f"CPU per request, ms (user + system): {'server':>7} {'Redis':>6} {'wrk':>6}"
      f"   cores busy: {'server':>6} {'Redis':>6} {'wrk':>6}")
for r in results:
    p, seconds = processes[r["target"]], r["duration_s"]
    n = max(r["requests"], 1)
    r["cpu_ms"] = {part: round(p[part] / n, 3) for part in ("server", "redis", "wrk")}
    print(f"  {r['target']:<33} {p['server'] / n:>7.2f} {p['redis'] / n:>6.2f} {p['wrk'] / n:>6.2f}"
          f"   {'':>11}{p['server'] / 1000 / seconds:>6.2f} {p['redis'] / 1000 / seconds:>6.2f}"
          f" {p['wrk'] / 1000 / seconds:>6.2f}")
api = next((r for r in results if r["target"] == "api"), None)
if api and stack and api["x_stack"] is not None:
    met = "met" if api["x_stack"] >= GOALS["api"] else "NOT met"
    rounds = f" over {sys.argv[6]} rounds" if sys.argv[6] != "1" else ""
    print(f"api list: {api['x_stack']:.2f}x the stack floor{rounds} (goal >= {GOALS['api']}x:"
          f" {met})")
    floor = next(r for r in results if r["target"] == "stack")["cpu_ms"]
    print(f"api list: {api['cpu_ms']['server']:.2f} ms of server CPU a request against the stack"
          f" floor's {floor['server']:.2f} ms, wrk {api['cpu_ms']['wrk']:.2f} ms against"
          f" {floor['wrk']:.2f} ms (the load is shared: req/s moves with it, CPU a request less)")
cpu = {}  # API target -> part -> seconds, added up over the workers
for part in pathlib.Path(sys.argv[4]).glob("*.json"):
    for target, sums in json.loads(part.read_text()).items():
        for name, value in sums.items():
            cpu.setdefault(target, {}).setdefault(name, 0.0)
            cpu[target][name] += value
for target in [r["target"] for r in results if cpu.get(r["target"], {}).get("requests")]:
    n = cpu[target]["requests"]
    ms = {name: 1000 * value / n for name, value in cpu[target].items() if name != "requests"}
    fast = {name: ms[name] for name in ("fast", "fast key", "fast rate limits")}
    split = {
        "API key": ms["key"] + fast["fast key"],
        "role": ms["role"],
        "rate limits": ms["rate limits"] + fast["fast rate limits"],
        "view": ms["dispatch"] - ms["key"] - ms["role"] - ms["rate limits"]
        + fast["fast"] - fast["fast key"] - fast["fast rate limits"],
        "middleware, rendering, WSGI": ms["total"] - ms["dispatch"] - fast["fast"],
    }
    print(f"{target} CPU per request: {ms['total']:.2f} ms over {int(n)} requests = "
          + " + ".join(f"{name} {value:.2f}" for name, value in split.items()))
    print(f"{target} fast path (apps/api/fastpath.py): {int(cpu[target]['answered'])} of {int(n)}"
          " requests answered before DRF; the rest went through the whole stack")
print(f"gunicorn: {log.count('WORKER TIMEOUT')} worker timeouts, "
      f"{log.count('Traceback')} tracebacks in its log")
errors = sum(sum(r["socket_errors"].values()) + r["not_200"] for r in results)
print("errors: 0 (goal met)" if errors == 0 else f"errors: {errors} (goal: 0)")
if sys.argv[3]:
    print(json.dumps({r.pop("target"): r for r in results}))
EOF
