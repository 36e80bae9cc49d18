#!/usr/bin/env bash
# Load benchmark of `wheelgate serve` (issue 13, point 6): wrk on loopback POSTs a real ~3 MB
# corpus wheel to /v1/check for DURATION seconds (bench/serve.lua), then exactly COUNT more
# through keep-alive connections (bench/serve_count.py), and says whether the service met its
# target on this machine: RSS is read from /proc/PID/status (VmRSS, VmHWM) between phases.
# SPDX-License-Identifier: GPL-3.0-or-later
#
#   bash bench/serve.sh [WHEEL]
#
# WHEEL defaults to ../shared/corpus/wheels/wgdemo_good_sm90-0.1.0-cp312-cp312-linux_x86_64.whl.
# Environment: WG (the CLI, default build/wheelgate), DURATION (phase 1, seconds, default 30),
# CONNECTIONS (default 4), WORKERS (--workers, default the number of CPUs), COUNT (phase 2's
# requests, default 10000), COUNT_BOUND (phase 2's time bound, seconds, default 900).
# Needs wrk (Debian: apt-get install wrk). Prints a Markdown table; exit 1 when a target is missed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
WG=${WG:-$root/build/wheelgate}
WHEEL=${1:-$root/../shared/corpus/wheels/wgdemo_good_sm90-0.1.0-cp312-cp312-linux_x86_64.whl}
DURATION=${DURATION:-30}
CONNECTIONS=${CONNECTIONS:-4}
WORKERS=${WORKERS:-$(nproc)}
COUNT=${COUNT:-10000}
COUNT_BOUND=${COUNT_BOUND:-900}

command -v wrk >/dev/null || { echo "serve.sh: wrk not found (apt-get install wrk)" >&2; exit 2; }
[ -x "$WG" ] || { echo "serve.sh: $WG not found: build first (cmake --build build)" >&2; exit 2; }
[ -f "$WHEEL" ] || { echo "serve.sh: $WHEEL: no such wheel (is ../shared there?)" >&2; exit 2; }

# The verdict every answer must carry: what `wheelgate check` says of the same bytes and name.
verdict=$("$WG" check --no-config --format json "$WHEEL" 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["inputs"][0]["verdict"])' || true)
case $verdict in pass|fail) ;; *) echo "serve.sh: check gave no verdict for $WHEEL" >&2; exit 2;; esac

tmp=$(mktemp -d)
srv=
cleanup() {
	if [ -n "$srv" ] && kill -0 "$srv" 2>/dev/null; then
		kill -TERM "$srv"; wait "$srv" || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

"$WG" serve --listen 127.0.0.1:0 --workers "$WORKERS" --connections $((CONNECTIONS + 16)) \
	>"$tmp/access.log" 2>"$tmp/serve.err" &
srv=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$tmp/serve.err")
	[ -n "$port" ] && break
	kill -0 "$srv" 2>/dev/null || break
	sleep 0.1
done
[ -n "$port" ] || { echo "serve.sh: serve did not start:" >&2; cat "$tmp/serve.err" >&2; exit 2; }
url=http://127.0.0.1:$port

kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$srv/status"; }
rss0=$(kib VmRSS)

# Warm-up (first-touch allocations, the scanners of every worker), not counted.
wrk -t "$CONNECTIONS" -c "$CONNECTIONS" -d 3s -s "$here/serve.lua" "$url" -- "$WHEEL" \
	"$verdict" >"$tmp/warm.txt"
rss1=$(kib VmRSS)

# Phase 1: DURATION seconds, CONNECTIONS connections.
wrk -t "$CONNECTIONS" -c "$CONNECTIONS" -d "${DURATION}s" --timeout 10s --latency \
	-s "$here/serve.lua" "$url" -- "$WHEEL" "$verdict" >"$tmp/p1.txt"
rss2=$(kib VmRSS)
hwm2=$(kib VmHWM)

# Phase 2: exactly COUNT requests over CONNECTIONS keep-alive connections (http.client: wrk
# cannot stop at a count), bounded by COUNT_BOUND seconds.
python3 "$here/serve_count.py" "$port" "$WHEEL" "$verdict" "$COUNT" "$CONNECTIONS" \
	"$COUNT_BOUND" >"$tmp/p2.txt"
rss3=$(kib VmRSS)
hwm3=$(kib VmHWM)
healthz=$(python3 -c 'import sys,urllib.request as u; print(u.urlopen(sys.argv[1], timeout=10).read().decode().strip())' "$url/healthz" 2>/dev/null || true)

get() { sed -n "s/^RESULT.* $2=\([^ ]*\).*/\1/p" "$1"; }
f=$tmp/p1.txt
e1=$(( $(get "$f" connect) + $(get "$f" read) + $(get "$f" write) + $(get "$f" timeout) +
	$(get "$f" status) + $(get "$f" non2xx) + $(get "$f" wrong) ))
e2=$(get "$tmp/p2.txt" errors)
n2=$(get "$tmp/p2.txt" requests)
growth=$(( rss3 - rss2 ))

size=$(stat -c %s "$WHEEL")
echo "## wheelgate serve under wrk ($(date -u +%F), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "Wheel: $(basename "$WHEEL") ($size bytes, verdict $verdict);" \
	"$CONNECTIONS connections, --workers $WORKERS."
echo
echo "| phase | requests | req/s | p50 ms | p90 ms | p99 ms | max ms | errors | RSS before → after (KiB) |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '| %s s | %s | %s | %s | %s | %s | %s | %s | %s → %s (peak %s) |\n' "$DURATION" \
	"$(get "$tmp/p1.txt" requests)" "$(get "$tmp/p1.txt" rps)" "$(get "$tmp/p1.txt" p50_ms)" \
	"$(get "$tmp/p1.txt" p90_ms)" "$(get "$tmp/p1.txt" p99_ms)" "$(get "$tmp/p1.txt" max_ms)" \
	"$e1" "$rss1" "$rss2" "$hwm2"
printf '| %s requests (http.client) | %s | %s | %s | %s | %s | %s | %s | %s → %s (peak %s) |\n' "$COUNT" \
	"$n2" "$(get "$tmp/p2.txt" rps)" "$(get "$tmp/p2.txt" p50_ms)" \
	"$(get "$tmp/p2.txt" p90_ms)" "$(get "$tmp/p2.txt" p99_ms)" "$(get "$tmp/p2.txt" max_ms)" \
	"$e2" "$rss2" "$rss3" "$hwm3"
echo
echo "RSS at start $rss0 KiB, after warm-up $rss1 KiB; growth over the $COUNT requests: $growth KiB." \
	"Errors count socket errors, non-2xx answers and answers without verdict \"$verdict\"."
echo

fail=0
check() { if eval "$2"; then echo "- [x] $1"; else echo "- [ ] $1 (MISSED)"; fail=1; fi; }
rps=$(get "$tmp/p1.txt" rps); p99=$(get "$tmp/p1.txt" p99_ms)
check "at least 40 checks/s (${rps})" "awk 'BEGIN{exit !($rps >= 40)}'"
check "p99 under 250 ms (${p99} ms)" "awk 'BEGIN{exit !($p99 < 250)}'"
check "0 errors ($e1 + $e2)" "[ $((e1 + e2)) -eq 0 ]"
check "exactly $COUNT requests in phase 2 ($n2)" "[ '$n2' = '$COUNT' ]"
check "RSS growth under 10 MB over $COUNT requests ($growth KiB)" "[ $growth -lt 10240 ]"
check "still healthy afterwards (/healthz: ${healthz:-no answer})" "[ '$healthz' = ok ]"
exit $fail
