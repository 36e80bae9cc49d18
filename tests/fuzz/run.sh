#!/usr/bin/env bash
# Runs every libFuzzer harness for a fixed time and fails on any finding (a crash, a leak, an
# input slower than 20 s, more than 2 GiB of memory, a sanitizer report).
#   tests/fuzz/run.sh FUZZ_DIR SEEDS OUT SECONDS [PARALLEL] [JOBS]
# FUZZ_DIR: the fuzz_<h> binaries (build-fuzz/tests/fuzz); SEEDS: make-seeds.sh's output;
# OUT: corpora, logs and findings (OUT/findings/<h>-crash-...); SECONDS: per harness;
# PARALLEL: harnesses run at once (default: the number of CPUs); JOBS: libFuzzer -fork jobs per
# harness (default 1). WG_FUZZ_HARNESSES="wheel elf" picks harnesses.
# Prints a line per harness: seconds, CPU seconds, inputs run, corpus size, findings; and the
# total. Exit status 1 when anything was found (each finding belongs in tests/fuzz/regress/).
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
bin=$1 seeds=$2 out=$3 secs=$4 par=${5:-$(nproc)} jobs=${6:-1}
src=$(cd "$(dirname "$0")" && pwd)
harnesses=${WG_FUZZ_HARNESSES:-wheel elf fatbin rules cache filename target facts python serve}
mkdir -p "$out/findings"
# fuzz_cache writes each input as a file: in memory where there is a tmpfs.
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

one() {
	local h=$1
	local corpus="$out/corpus-$h" log="$out/log-$h"
	mkdir -p "$corpus"
	[ -d "$seeds/$h" ] || { echo "$h: no seeds in $seeds/$h" > "$out/stat-$h"; return; }
	local fork=()
	[ "$jobs" -gt 1 ] && fork=(-fork="$jobs" -ignore_crashes=0 -ignore_ooms=0 -ignore_timeouts=0)
	local t0=$SECONDS
	(
		"$bin/fuzz_$h" "${fork[@]}" -max_total_time="$secs" -max_len=262144 -rss_limit_mb=2048 \
			-malloc_limit_mb=2048 -timeout=20 -print_final_stats=1 -dict="$src/dict/$h.dict" \
			-artifact_prefix="$out/findings/$h-" "$corpus" "$seeds/$h" > "$log" 2>&1
		echo "rc $?" >> "$log"
		times > "$out/times-$h.both" # the second line: the fuzzer's (and its jobs') time
	)
	local wall=$((SECONDS - t0))
	# CPU: the children's user + system time, as `times` printed it (NmS.SSSs NmS.SSSs).
	local cpu
	cpu=$(tail -1 "$out/times-$h.both" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%d", s }')
	local execs
	execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{ s += $2 } END { print s + 0 }')
	[ "$execs" -gt 0 ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
	local found
	found=$(find "$out/findings" -name "$h-*" -type f | wc -l)
	printf '%-9s %5ss wall %6ss CPU %10s inputs %6s in corpus %3s findings (%s)\n' "$h" "$wall" \
		"$cpu" "${execs:-0}" "$(find "$corpus" -type f | wc -l)" "$found" "$(tail -1 "$log")" \
		> "$out/stat-$h"
}
export -f one
export bin seeds out secs jobs src
printf '%s\n' $harnesses | xargs -P "$par" -I{} bash -c 'one {}'
cat "$out"/stat-*
awk '{ w += $2; c += $4; n += $6; f += $11 } END { printf "all       %d CPU-seconds (%.1f CPU-minutes), %d inputs, %d findings\n", c, c / 60, n, f }' "$out"/stat-*
if [ -n "$(ls -A "$out/findings")" ]; then
	echo "FINDINGS (reproduce with the harness and the file; keep each in tests/fuzz/regress/<h>/):"
	ls -l "$out/findings"
	for l in "$out"/log-*; do grep -l -E 'ERROR: |SUMMARY: ' "$l" >/dev/null && { echo "== $l"; grep -A30 -m1 -E '==ERROR|ERROR: libFuzzer|SUMMARY' "$l" | head -60; }; done
	exit 1
fi
