#!/usr/bin/env bash
# replay_main.c's limits per input, on replay_selftest (replay_selftest.c): a quick input
# passes; a slow one fails with its name and time; one that would never end is stopped by the
# alarm, named; one over the memory limit fails with its name and peak. The limits scale by 3
# under AddressSanitizer or without optimisation: the inputs are chosen to hold either way.
#   tests/fuzz/test-replay-limits.sh REPLAY_SELFTEST
set -uo pipefail
bin=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
mkdir "$d/ok" "$d/slow" "$d/hang" "$d/greedy"
echo quick > "$d/ok/quick"
echo "sleep 0.05" > "$d/ok/brief"
echo "sleep 1.5" > "$d/slow/slow-input"
echo quick > "$d/slow/quick"
echo "sleep 100" > "$d/hang/hanging-input"
echo "alloc 400" > "$d/greedy/greedy-input"
expect() { # name rc pattern env... -- dir
  local name=$1 want=$2 pat=$3; shift 3
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local t0=$SECONDS
  env "${envs[@]}" "$bin" "$@" > "$d/out" 2>&1
  local rc=$? secs=$((SECONDS - t0))
  if [ "$rc" != "$want" ] || ! grep -qE -- "$pat" "$d/out"; then
    echo "FAIL $name: exit $rc (wanted $want), output:"; sed 's/^/  | /' "$d/out"; fail=1
  else
    echo "ok   $name ($secs s): $(grep -m1 -E -- "$pat" "$d/out")"
  fi
}
# 0.4 s a limit (1.2 s scaled): 1.5 s is over either; the alarm at twice the limit stops 100 s.
expect "quick inputs pass" 0 '2 inputs replayed' WG_REPLAY_SECONDS=0.4 -- "$d/ok"
expect "a slow input fails, named" 1 'slow-input: SLOW INPUT: 1\.[0-9]+ s, over the' \
  WG_REPLAY_SECONDS=0.4 -- "$d/slow"
expect "a hanging input is stopped, named" 1 'hanging-input: SLOW INPUT: still running' \
  WG_REPLAY_SECONDS=0.4 -- "$d/hang"
# 100 MiB (300 scaled): 400 MiB touched is over either.
expect "a greedy input fails, named" 1 'greedy-input: MEMORY: the peak resident size reached [0-9]+ MiB' \
  WG_REPLAY_MB=100 -- "$d/greedy"
expect "the default limits let it pass" 0 '1 inputs replayed' -- "$d/greedy"
exit $fail
