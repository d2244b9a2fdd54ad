-- wrk script for bench/load.sh: sends the credential, counts answers by HTTP status, and
-- prints one "RESULT {json}" line when done.
--
-- The credential comes from the environment, never the command line (ps would show it):
-- LOAD_HEADER_NAME / LOAD_HEADER_VALUE, e.g. "Cookie" / "sessionid=..." or
-- "Authorization" / "Bearer vgr_...". LOAD_TARGET names the target in the result.
--
-- wrk itself counts socket errors (connect, read, write, timeout) and "Non-2xx or 3xx
-- responses"; a 302 to the login page would pass that test, so this script also counts every
-- answer that is not a 200, by status.

local name = os.getenv("LOAD_HEADER_NAME")
local value = os.getenv("LOAD_HEADER_VALUE")
if name and name ~= "" then
  wrk.headers[name] = value
end
-- The codings the client takes (LOAD_ACCEPT_ENCODING), as a script's HTTP client says them:
-- "gzip, deflate" is what Python's requests and httpx send by default; empty sends nothing (curl
-- without --compressed, urllib).
local encoding = os.getenv("LOAD_ACCEPT_ENCODING")
if encoding and encoding ~= "" then
  wrk.headers["Accept-Encoding"] = encoding
end
-- Production settings trust X-Forwarded-Proto from the proxy that terminates TLS: say the
-- request came over HTTPS, as it would behind that proxy (no redirect, secure cookies hold).
wrk.headers["X-Forwarded-Proto"] = "https"
-- The target, so that bench/load_wsgi.py adds up the CPU split of each API target apart.
wrk.headers["X-Bench-Target"] = os.getenv("LOAD_TARGET") or "?"
-- A warm-up run (LOAD_WARMUP=1) says so: bench/load_wsgi.py leaves it out of the CPU split.
if os.getenv("LOAD_WARMUP") == "1" then
  wrk.headers["X-Bench-Warmup"] = "1"
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local by_status = {}
  local not_200 = 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do
      by_status[status] = (by_status[status] or 0) + n
      if status ~= 200 then
        not_200 = not_200 + n
      end
    end
  end
  local parts = {}
  for status, n in pairs(by_status) do
    table.insert(parts, string.format('"%d": %d', status, n))
  end
  local e = summary.errors
  io.write(string.format(
    'RESULT {"target": "%s", "requests": %d, "duration_s": %.2f, "requests_per_s": %.1f, '
      .. '"p50_ms": %.1f, "p90_ms": %.1f, "p99_ms": %.1f, "max_ms": %.1f, '
      .. '"socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, '
      .. '"non_2xx_3xx": %d, "not_200": %d, "statuses": {%s}}\n',
    os.getenv("LOAD_TARGET") or "?", summary.requests, summary.duration / 1e6,
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    e.connect, e.read, e.write, e.timeout, e.status, not_200, table.concat(parts, ", ")))
end
