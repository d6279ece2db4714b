#!/usr/bin/env bash
# CPU of one process per request under wrk: the figure `bench.search` and `bench.suite` report, for a
# service you started yourself (e.g. two trees' `python -m bench.suite --hold`, measured in turns).
#
#   bench/cpu_probe.sh PID URL REQUESTS_FILE [CONNECTIONS=4] [SECONDS=15]
#   MODE=cycle COUNT=count bench/cpu_probe.sh ...   # creates: lines in turn, answers counted by class
#
# PID: the API process (a `--hold` prints it as api_pid); REQUESTS_FILE: a request file a `--hold`
# printed. Prints the clock ticks the process used (utime + stime, 10 ms each), the requests, p50/p99 in
# microseconds, the answers by class (with COUNT=count) and CPU ms per request. Loopback only.
set -euo pipefail
PID=$1; URL=$2; REQ=$3; C=${4:-4}; D=${5:-15}
LUA="$(cd "$(dirname "$0")" && pwd)/wrk/requests.lua"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
before=$(ticks "$PID")
out=$(wrk -t1 -c"$C" -d"${D}s" --timeout=10s -s "$LUA" "$URL" -- "$REQ" "${MODE:-random}" 1 ${COUNT:-} 2>&1)
after=$(ticks "$PID")
echo "$out" | sed -n 's/^BENCHJSON //p' | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
spent = int(sys.argv[1])
n, p50, p99 = d["requests"], d["p50_us"], d["p99_us"]
classes = " ".join(f"{k} {d.get(k)}" for k in ("s2xx", "s4xx", "s5xx"))
print(f"ticks {spent} requests {n} p50 {p50} p99 {p99} {classes} cpu/req ms: {spent * 10 / max(1, n):.3f}")
' "$((after - before))"
