#!/usr/bin/env bash
# The benchmark suite, one command: `make bench` (or `bash bench/run.sh [--quick] [suite options]`).
#
# Installs what it needs (wrk from Debian's packages; granian for the server comparison), creates a
# throwaway PostgreSQL database, runs `python -m bench.suite` (which starts the partner, the service
# and the baselines, seeds, measures and prints the table), and on any exit stops every process the
# suite started (by the PIDs it wrote to a file: each is a session leader, so its workers go too) and
# drops the database. Extra options can also come from BENCH_ARGS (e.g. BENCH_ARGS=--quick make bench).
#
# PostgreSQL: BENCH_PGHOST (127.0.0.1), BENCH_PGUSER (postgres), reached with createdb/dropdb.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${BENCH_PYTHON:-$ROOT/.venv/bin/python}
PGHOST=${BENCH_PGHOST:-127.0.0.1}
PGUSER=${BENCH_PGUSER:-postgres}
GRANIAN_VERSION=2.8.7

if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (apt-get)" >&2
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
if ! "$PY" -m pip show granian >/dev/null 2>&1; then
  echo "installing granian==$GRANIAN_VERSION (server comparison only)" >&2
  "$PY" -m pip install --quiet "granian==$GRANIAN_VERSION"
fi

DB="bench_transfers_$(date +%Y%m%d%H%M%S)_$$"
PIDFILE=$(mktemp /tmp/transfers-bench-pids.XXXXXX)
SUITE_PID=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ -n "$SUITE_PID" ] && kill -0 "$SUITE_PID" 2>/dev/null; then
    kill -TERM "$SUITE_PID" 2>/dev/null || true
    sleep 1
  fi
  if [ -s "$PIDFILE" ]; then
    while read -r pid; do kill -TERM -- "-$pid" 2>/dev/null || true; done <"$PIDFILE"
    sleep 2
    while read -r pid; do kill -KILL -- "-$pid" 2>/dev/null || true; done <"$PIDFILE"
  fi
  rm -f "$PIDFILE"
  for db in "$DB" "${DB}_small" "${DB}_hosted" "${DB}_console" "${DB}_webhooks" "${DB}_search" "${DB}_tracking" "${DB}_agency" "${DB}_flights" "${DB}_flights_late" "${DB}_requestlog" "${DB}_positions" "${DB}_returns" "${DB}_statements" "${DB}_quality" "${DB}_fx" "${DB}_messages" "${DB}_ranking"; do dropdb -h "$PGHOST" -U "$PGUSER" --if-exists --force "$db" 2>/dev/null || true; done
  exit "$status"
}
trap cleanup EXIT INT TERM

createdb -h "$PGHOST" -U "$PGUSER" "$DB"
echo "database $DB created; pids in $PIDFILE" >&2
# shellcheck disable=SC2086
"$PY" -m bench.suite --dsn "postgresql://$PGUSER@$PGHOST/$DB" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@" &
SUITE_PID=$!
wait "$SUITE_PID"
SUITE_PID=""

# The search fan-out alone, on PostgreSQL and SQLite, 4 searches at a time: 10 partners, 50
# partners, 9 + 1 hanging (CPU of the API process per search, overhead over the slowest partner).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_search"
# shellcheck disable=SC2086
"$PY" -m bench.search --dsn "postgresql://$PGUSER@$PGHOST/${DB}_search" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# The yardstick: the search's overhead against a plain FastAPI + aiohttp fan-out to the same partners,
# loaded in the same run, on SQLite and on PostgreSQL (its own throwaway database, dropped by itself);
# docs/operations/performance.md#yardstick.
# shellcheck disable=SC2086
"$PY" -m bench.yardstick --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# The CPU one hosted partner (rate card, in-process) adds to a search among 10 server partners.
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_hosted"
# shellcheck disable=SC2086
"$PY" -m bench.hosted --dsn "postgresql://$PGUSER@$PGHOST/${DB}_hosted" ${BENCH_ARGS:-} "$@"

# The operator console's pages with a million bookings (server time, p50/p95; target < 50 ms).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_console"
# shellcheck disable=SC2086
"$PY" -m bench.console --dsn "postgresql://$PGUSER@$PGHOST/${DB}_console" ${BENCH_ARGS:-} "$@"

# Client webhooks: a create with 3 subscribed endpoints against none (target within 5 %), and
# one worker's delivery rate to a fast local receiver (target >= 300 events/s).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_webhooks"
# shellcheck disable=SC2086
"$PY" -m bench.webhooks --dsn "postgresql://$PGUSER@$PGHOST/${DB}_webhooks" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# The traveller's page /t/{token} (HTML and JSON), one API process (target >= 500 req/s).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_tracking"
# shellcheck disable=SC2086
"$PY" -m bench.tracking_page --dsn "postgresql://$PGUSER@$PGHOST/${DB}_tracking" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# The agency portal's Bookings page (search, filters, pages) for an agency with 100 000 bookings
# among 300 000 (server time, p50/p95; target < 300 ms).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_agency"
# shellcheck disable=SC2086
"$PY" -m bench.agency --dsn "postgresql://$PGUSER@$PGHOST/${DB}_agency" ${BENCH_ARGS:-} "$@"

# One flight-watch pass over 10,000 watched bookings (1,000 flights), sandbox provider (target <= 5 s,
# provider calls == distinct flights): every flight on time, then 15 % of them late (1,500 pickups moved).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_flights"
# shellcheck disable=SC2086
"$PY" -m bench.flights --dsn "postgresql://$PGUSER@$PGHOST/${DB}_flights" --late-percent 0 ${BENCH_ARGS:-} "$@"
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_flights_late"
# shellcheck disable=SC2086
"$PY" -m bench.flights --dsn "postgresql://$PGUSER@$PGHOST/${DB}_flights_late" --late-percent 15 ${BENCH_ARGS:-} "$@"

# The request log's cost to GET booking (on vs off, interleaved rounds; target < 5 %), with
# the parts measured alone (record per request, the batch write per row).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_requestlog"
# shellcheck disable=SC2086
"$PY" -m bench.request_log --dsn "postgresql://$PGUSER@$PGHOST/${DB}_requestlog" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# Driver positions ingested through the reverse API by one API process, batches of 10 and of 1
# (target >= 1,000 positions/s in batches of 10).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_positions"
# shellcheck disable=SC2086
"$PY" -m bench.ride_positions --dsn "postgresql://$PGUSER@$PGHOST/${DB}_positions" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# Return trips: a return search's CPU against a one-way search with the same 10 partners (target
# <= 2x), creating a pair against one create (target <= 1.6x); API process CPU per call, interleaved rounds.
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_returns"
# shellcheck disable=SC2086
"$PY" -m bench.return_trips --dsn "postgresql://$PGUSER@$PGHOST/${DB}_returns" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# A partner statement of 100,000 lines as JSON (target <= 2 s) and streamed as CSV (the API
# process growing < 50 MiB), a month close over 1,000 partners (target <= 10 s), create + cancel with the journal.
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_statements"
# shellcheck disable=SC2086
"$PY" -m bench.statements --dsn "postgresql://$PGUSER@$PGHOST/${DB}_statements" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# Several currencies: a 10-partner search with every quote converted (target <= +5 % CPU), a create and
# a GET booking of a converted booking (target: within noise), each against the same as quoted.
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_fx"
# shellcheck disable=SC2086
"$PY" -m bench.fx_costs --dsn "postgresql://$PGUSER@$PGHOST/${DB}_fx" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# Every partner's scorecards over 1,000,000 bookings, 100 partners (target <= 60 s), then the console's
# Quality page for those 100 partners over a 400-day history (target <= 300 ms).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_quality"
# shellcheck disable=SC2086
"$PY" -m bench.quality --dsn "postgresql://$PGUSER@$PGHOST/${DB}_quality" ${BENCH_ARGS:-} "$@"

# A 10-partner search with the quality ranking and without it: CPU per search (target <= +3 %).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_ranking"
# shellcheck disable=SC2086
"$PY" -m bench.ranking --dsn "postgresql://$PGUSER@$PGHOST/${DB}_ranking" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"

# Messages to travellers: the reminders pass over 100,000 upcoming bookings (target <= 5 s), messages per
# second through one worker to a local SMTP server and a local Twilio-shaped server (goal >= 100/s).
createdb -h "$PGHOST" -U "$PGUSER" "${DB}_messages"
# shellcheck disable=SC2086
"$PY" -m bench.messages --dsn "postgresql://$PGUSER@$PGHOST/${DB}_messages" --pidfile "$PIDFILE" ${BENCH_ARGS:-} "$@"
