#!/usr/bin/env bash
# The hostile inputs of issue 12 ("Why"), each run once under /usr/bin/time with a wall-clock
# limit (WG_HOSTILE_TIMEOUT, 300 s) and an address-space limit (WG_HOSTILE_VMEM_KB, unset:
# none): wall time, peak RSS, exit status and the first line wheelgate said. Inputs are made by
# bench/hostile_gen.py into bench/out/hostile/ (a few MB; the 4 GiB stdin is streamed).
# Measured numbers, before and after: bench/hostile.md.
# Usage: bench/hostile.sh [BUILD_DIR | WHEELGATE_BINARY]
set -uo pipefail
cd "$(dirname "$0")/.."
arg=${1:-build}
wg=$arg
[ -d "$arg" ] && wg="$arg/wheelgate"
wg=$(readlink -f "$wg")
[ -x "$wg" ] || { echo "hostile: build wheelgate first ($wg not found)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "hostile: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
gen="/usr/bin/python3 bench/hostile_gen.py"
out=bench/out/hostile
mkdir -p "$out"
limit=${WG_HOSTILE_TIMEOUT:-300}

measure() { # label command... (run by bash -c so that pipes work)
  local label=$1; shift
  ( [ -n "${WG_HOSTILE_VMEM_KB:-}" ] && ulimit -v "$WG_HOSTILE_VMEM_KB"
    /usr/bin/time -f "%e %M %x" -o "$out/time.txt" timeout "$limit" bash -c "$*" \
      >"$out/stdout.txt" 2>"$out/stderr.txt" )
  read -r secs kb rc < <(tail -n 1 "$out/time.txt")
  [ "$rc" = 124 ] && secs=">$limit"
  local said
  said=$( (grep -v '^Command' "$out/stderr.txt"; grep -E 'error\[WG-(ERR|GEN)|limit|too large|alias' "$out/stdout.txt") | head -n 1 | cut -c1-110)
  printf "%-34s %8s s %9.1f MiB  exit %-3s %s\n" "$label" "$secs" "$(echo "$kb/1024" | bc -l)" "$rc" "$said"
}

[ -f "$out/meta.whl" ] || $gen meta "$out/hostile_meta-1.0-py3-none-any.whl" && touch "$out/meta.whl"
[ -f "$out/hostile_init-1.0-py3-none-any.whl" ] || $gen init "$out/hostile_init-1.0-py3-none-any.whl"
[ -f "$out/hostile_imports-1.0-py3-none-any.whl" ] || $gen imports "$out/hostile_imports-1.0-py3-none-any.whl"
[ -f "$out/aliases.yaml" ] || $gen rules "$out/aliases.yaml"
[ -f "$out/symenv/lib/python3.12/site-packages/torch/lib/libc10.so" ] || $gen symbols "$out/symenv"
[ -f "$out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl" ] ||
  { mkdir -p "$out/names" && $gen names "$out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl" 1; }
mkdir -p "$out/emptyenv/lib/python3.12/site-packages"
[ -f "$out/many-1.0-py3-none-any.whl" ] || $gen members "$out/many-1.0-py3-none-any.whl"
[ -f "$out/hostile_rp-1.0-py3-none-any.whl" ] ||
  $gen runpath "$out/rpenv" "$out/outside" "$out/hostile_rp-1.0-py3-none-any.whl"
rm -f "$out/fifo.whl" "$out/fifo.yaml"
mkfifo "$out/fifo.whl" "$out/fifo.yaml"
rm -rf "$out/cacheenv" "$out/cache"
$gen cache "$out/cacheenv" "$out/cache" >/dev/null

echo "wheelgate: $wg"
measure "4000 x 1 MiB METADATA ($(du -k "$out/hostile_meta-1.0-py3-none-any.whl" | cut -f1) KB)" \
  "$wg" check --no-config "$out/hostile_meta-1.0-py3-none-any.whl"
measure "1 MiB __init__.py of imports" "$wg" check --no-config "$out/hostile_init-1.0-py3-none-any.whl"
measure "  same, --format json" "$wg" check --no-config --format json "$out/hostile_init-1.0-py3-none-any.whl"
measure "1 MiB of 'from x import a   !'" "$wg" check --no-config "$out/hostile_imports-1.0-py3-none-any.whl"
measure "1 MB rule file of aliases" "$wg" check --no-config --rules "$out/aliases.yaml" \
  "$out/hostile_init-1.0-py3-none-any.whl"
measure "4 GiB on stdin (check -)" "$gen stdin 4 | $wg check --no-config -"
measure "4 GiB on stdin (inspect -)" "$gen stdin 4 | $wg inspect -"
measure "200,000 symbols of one name (env)" "$wg" env --no-cache "$out/symenv"
measure "cache entry, 1.5M names (env)" "XDG_CACHE_HOME=$PWD/$out/cache $wg env $out/cacheenv"
measure "1 MiB of imported names (--env)" "$wg" check --no-config --env "$out/emptyenv" \
  "$out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl"
measure "1,000,000 members ($(du -k "$out/many-1.0-py3-none-any.whl" | cut -f1) KB)" \
  "$wg" check --no-config "$out/many-1.0-py3-none-any.whl"
measure "RUNPATH outside env, 4 GiB non-ELF" "$wg" check --no-config --env "$out/rpenv" \
  "$out/hostile_rp-1.0-py3-none-any.whl"
measure "a FIFO as input" "$wg" check --no-config "$out/fifo.whl"
measure "a FIFO as --rules" "$wg" check --no-config --rules "$out/fifo.yaml" \
  "$out/hostile_init-1.0-py3-none-any.whl"

# Issue 25, point 1: work and output per input (each must end in <= 30 s and <= 700 MB).
[ -f "$out/budget/req/hostile_req-1.0-py3-none-any.whl" ] ||
  { mkdir -p "$out/budget/req" && $gen requires "$out/budget/req/hostile_req-1.0-py3-none-any.whl"; }
[ -f "$out/budget/reqx/hostile_req-1.0-py3-none-any.whl" ] ||
  { mkdir -p "$out/budget/reqx" && $gen requires-extras "$out/budget/reqx/hostile_req-1.0-py3-none-any.whl"; }
[ -f "$out/budget/hostile_rec-1.0-py3-none-any.whl" ] ||
  $gen record-missing "$out/budget/hostile_rec-1.0-py3-none-any.whl"
[ -f "$out/budget/hostile_hollow-1.0-py3-none-any.whl" ] ||
  $gen hollow "$out/budget/hostile_hollow-1.0-py3-none-any.whl"
[ -f "$out/budget/hostile_fatbin-1.0-py3-none-any.whl" ] ||
  $gen fatbin "$out/budget/hostile_fatbin-1.0-py3-none-any.whl"
measure "10,000 Requires-Dist x 1,000 imports" "$wg" check --no-config --env "$out/emptyenv" \
  "$out/budget/req/hostile_req-1.0-py3-none-any.whl"
measure "100,000 Requires-Dist (extras) x 10k" "$wg" check --no-config --env "$out/emptyenv" \
  "$out/budget/reqx/hostile_req-1.0-py3-none-any.whl"
measure "RECORD of 999,000 missing (json)" "$wg" check --no-config --format json \
  "$out/budget/hostile_rec-1.0-py3-none-any.whl"
measure "hollow wheel, 69,064 imports" "$wg" check --no-config \
  "$out/budget/hostile_hollow-1.0-py3-none-any.whl"
measure "1,000,000 fatbin entries (inspect --json)" "$wg" inspect --json \
  "$out/budget/hostile_fatbin-1.0-py3-none-any.whl"
measure "6G of zeros on stdin (inspect -)" "head -c 6G /dev/zero | $wg inspect -"
