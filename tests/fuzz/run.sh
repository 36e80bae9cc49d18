#!/usr/bin/env bash
# Runs every libFuzzer harness for a fixed time and fails on any finding: a crash, a leak, a
# sanitizer report, an input slower than WG_FUZZ_SLOW seconds (a slow unit), one still running
# after WG_FUZZ_TIMEOUT seconds (a timeout) or one over WG_FUZZ_RSS_MB of memory (out of memory).
#   tests/fuzz/run.sh FUZZ_DIR SEEDS OUT SECONDS [PARALLEL] [JOBS]
# FUZZ_DIR: the fuzz_<h> binaries (build-fuzz/tests/fuzz); SEEDS: make-seeds.sh's output;
# OUT: corpora, logs and findings (OUT/findings/<h>-<kind>-<sha1>); SECONDS: per harness;
# PARALLEL: harnesses run at once (default: the number of CPUs); JOBS: libFuzzer -fork jobs per
# harness (default 1). WG_FUZZ_HARNESSES="wheel elf" picks harnesses.
# Each harness first runs its seeds one by one, timed (a slow, hanging, crashing or greedy seed
# is a finding, named, and the pass goes on), then fuzzes from the good ones for the rest of
# SECONDS: with one job until its first finding, with JOBS > 1 in fork mode to the end.
# Limits (per input, in this ASan + UBSan build): WG_FUZZ_SLOW (10 s: -report_slow_units),
# WG_FUZZ_TIMEOUT (20 s: -timeout), WG_FUZZ_RSS_MB (2048: -rss_limit_mb and -malloc_limit_mb).
# Prints a line per harness: seconds, CPU seconds, inputs run, corpus size, findings; and the
# total; then one line per finding: its kind, harness, file, size, what it means and how to
# replay it. Exit status 1 when anything was found (each finding belongs in
# tests/fuzz/regress/<h>/, see its README), and when a harness did not fuzz: no input run, or
# an exit with an error and no finding (a missing binary or dictionary, a flag refused).
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
bin=$1 seeds=$2 out=$3 secs=$4 par=${5:-$(nproc)} jobs=${6:-1}
slow=${WG_FUZZ_SLOW:-10} tmo=${WG_FUZZ_TIMEOUT:-20} rss=${WG_FUZZ_RSS_MB:-2048}
src=$(cd "$(dirname "$0")" && pwd)
harnesses=${WG_FUZZ_HARNESSES:-wheel elf fatbin rules cache filename target facts python records index serve stream sparse}
mkdir -p "$out/findings"
# fuzz_cache writes each input as a file: in memory where there is a tmpfs.
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

limits() { echo -timeout="$tmo" -rss_limit_mb="$rss" -malloc_limit_mb="$rss"; }

# The seeds (and a corpus kept from an earlier run), each run once by itself with the limits
# and timed: libFuzzer reports no slow unit among the seeds, and fork mode's first merge drops
# a seed that hangs or crashes without a word. A seed over SLOW seconds is saved as a slow unit;
# one that crashes, leaks, times out or runs out of memory is saved under that kind and the
# pass goes on with the seeds after it (at most 5 such stops).
seed_pass() {
	local h=$1 corpus=$2 log=$3 list="$out/seedlist-$h" stops=0
	find "$corpus" "$seeds/$h" -type f | sort > "$list"
	# The first input run pays for the harness's set-up (the rule set, under ASan): a warm-up
	# input, not timed, goes first.
	printf '\n' > "$out/warmup-$h"
	sed -i "1i $out/warmup-$h" "$list"
	while [ -s "$list" ] && [ "$stops" -lt 5 ]; do
		local files=()
		mapfile -t files < "$list"
		# shellcheck disable=SC2046
		"$bin/fuzz_$h" $(limits) "${files[@]}" > "$log.now" 2>&1
		local rc=$?
		cat "$log.now" >> "$log"
		[ "$rc" = 0 ] && break
		# Stopped: the seed that was running is the finding (libFuzzer saves no artifact when it
		# runs files): saved here under the kind its report names; the pass goes on after it.
		local last kind
		last=$(grep -E '^Running: ' "$log.now" | tail -n 1 | sed 's/^Running: //')
		[ -n "$last" ] && [ -f "$last" ] || break
		case "$(grep -E '^SUMMARY: |ERROR: libFuzzer' "$log.now" | tail -n 1)" in
		*libFuzzer:\ timeout*) kind=timeout ;;
		*out-of-memory*) kind=oom ;;
		*LeakSanitizer*) kind=leak ;;
		*) kind=crash ;;
		esac
		cp "$last" "$out/findings/$h-$kind-$(sha1sum < "$last" | cut -c1-40)"
		stops=$((stops + 1))
		case "$last" in "$corpus"/*) rm -f "$last" ;; esac
		{ echo "$out/warmup-$h"; awk -v l="$last" 'found { print } $0 == l { found = 1 }' "$list"; } > "$list.next"
		mv "$list.next" "$list"
	done
	rm -f "$log.now"
	# Slow seeds, from libFuzzer's "Executed FILE in N ms"; the others (those run within the
	# limits) are what fork mode starts from, so that it does not run a bad one again.
	local f ms
	rm -rf "$out/seeds-$h"
	mkdir -p "$out/seeds-$h"
	while read -r ms f; do
		[ "$f" != "$out/warmup-$h" ] && [ -f "$f" ] || continue
		if [ "$ms" -ge $((slow * 1000)) ]; then
			cp "$f" "$out/findings/$h-slow-unit-$(sha1sum < "$f" | cut -c1-40)"
			case "$f" in "$corpus"/*) rm -f "$f" ;; esac
		else
			case "$f" in "$corpus"/*) ;; *) cp "$f" "$out/seeds-$h/" ;; esac
		fi
	done < <(sed -nE 's/^Executed (.*) in ([0-9]+) ms$/\2 \1/p' "$log")
}

one() {
	local h=$1
	local corpus="$out/corpus-$h" log="$out/log-$h"
	mkdir -p "$corpus"
	[ -d "$seeds/$h" ] || { echo "$h: no seeds in $seeds/$h" > "$out/stat-$h"; return; }
	local t0=$SECONDS
	(
		seed_pass "$h" "$corpus" "$out/log-seeds-$h"
		# Fuzzing, for what is left of SECONDS (10 at least). One job: a plain run, which stops
		# at its first crash, timeout or out-of-memory (saved and named below; a slow unit is
		# saved and fuzzing goes on); JOBS > 1: fork mode, whose parent goes on after each. Not
		# fork mode for one job: its first merge runs the seeds again and each job starts
		# afresh, which in a short run cost nine tenths of the inputs (wheel, 25 s: 3,440
		# inputs plainly, 197 in fork mode).
		local left=$((secs - (SECONDS - t0)))
		[ "$left" -ge 10 ] || left=10
		local fork=()
		[ "$jobs" -gt 1 ] && fork=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
		# shellcheck disable=SC2046
		"$bin/fuzz_$h" "${fork[@]}" -max_total_time="$left" -max_len=262144 $(limits) \
			-report_slow_units="$slow" -print_final_stats=1 -dict="$src/dict/$h.dict" \
			-artifact_prefix="$out/findings/$h-" "$corpus" "$out/seeds-$h" > "$log" 2>&1
		echo "rc $?" >> "$log"
		times > "$out/times-$h.both" # the second line: the seeds' and the fuzzer's time
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
export -f one seed_pass limits
export bin seeds out secs jobs src slow tmo rss
printf '%s\n' $harnesses | xargs -P "$par" -I{} bash -c 'one {}'
cat "$out"/stat-*
awk '{ w += $2; c += $4; n += $6; f += $11 } END { printf "all       %d CPU-seconds (%.1f CPU-minutes), %d inputs, %d findings\n", c, c / 60, n, f }' "$out"/stat-*
# A harness that ran no input, or ended with an error it left no finding for (a missing
# dictionary, a bad flag), did not fuzz: that fails the run as a finding does.
broken=0
for h in $harnesses; do
	rc=$(tail -1 "$out/log-$h" 2>/dev/null | sed -n 's/^rc //p')
	execs=$(awk '{ print $6 }' "$out/stat-$h" 2>/dev/null)
	if [ "${execs:-0}" = 0 ] || { [ "${rc:-1}" != 0 ] && [ -z "$(find "$out/findings" -name "$h-*" -type f)" ]; }; then
		broken=$((broken + 1))
		echo "HARNESS DID NOT RUN: fuzz_$h (exit ${rc:-none}, ${execs:-0} inputs); the end of $out/log-$h:"
		tail -5 "$out/log-$h" 2>/dev/null | sed 's/^/  /'
	fi
done
[ -z "$(ls -A "$out/findings")" ] && [ "$broken" = 0 ] && exit 0
[ -z "$(ls -A "$out/findings")" ] && { echo "FUZZING FAILED: $broken harness(es) did not run"; exit 1; }

# Every finding, named: <harness>-<kind>-<sha1>, kind as libFuzzer writes it.
echo "FINDINGS: each fails this run; reproduce with the harness and the file, then keep it in"
echo "tests/fuzz/regress/<h>/ (named after what it broke) once fixed:"
n=0 timed=0
for f in "$out"/findings/*; do
	[ -f "$f" ] || continue
	b=$(basename "$f") h=${b%%-*}
	kind=${b#"$h"-} kind=${kind%-*}
	size=$(stat -c %s "$f")
	case "$kind" in
	slow-unit)
		# The first 3 measured again (each at most the timeout), so that the line says how slow.
		ms="not run again"
		if [ "$timed" -lt 3 ]; then
			timed=$((timed + 1))
			# shellcheck disable=SC2046
			ms=$(timeout $((tmo + 10)) "$bin/fuzz_$h" $(limits) "$out/warmup-$h" "$f" 2>&1 |
				grep -F "Executed $f in " | grep -oE '[0-9]+ ms$')
			ms="run again: ${ms:-over $((tmo + 10)) s}"
		fi
		what="SLOW INPUT: took ${slow} s or more (-report_slow_units=$slow; $ms)" ;;
	timeout) what="TIMEOUT: still running after $tmo s (-timeout=$tmo)" ;;
	oom) what="OUT OF MEMORY: over $rss MB, or one allocation over it (-rss_limit_mb)" ;;
	leak) what="LEAK (LeakSanitizer)" ;;
	crash) what="CRASH or sanitizer report" ;;
	*) what="$kind" ;;
	esac
	n=$((n + 1))
	printf 'FINDING %d: fuzz_%s %s\n  file: %s (%s bytes)\n  replay: %s %s   (or build/tests/fuzz/replay_%s FILE)\n' \
		"$n" "$h" "$what" "$f" "$size" "$bin/fuzz_$h" "$f" "$h"
done
for l in "$out"/log-*; do
	[ -f "$l" ] || continue
	grep -q -E '==ERROR|ERROR: libFuzzer|SUMMARY: ' "$l" || continue
	echo "== $l"
	grep -A30 -m1 -E '==ERROR|ERROR: libFuzzer|SUMMARY' "$l" | head -60
done
echo "FUZZING FAILED: $n finding(s) above (slow units, timeouts and out-of-memory count as findings)"
exit 1
