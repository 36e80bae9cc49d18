#!/usr/bin/env bash
# How the checks' cost grows with the size of a wheel: each input grows in one dimension only,
# and the time should grow linearly with it.
#  - `check --env` (the torch 2.11 stand-in environment) on wheels holding 2, 16 and 64 copies
#    of one object, each a top-level extension module (OBJECT, else the stand-in's 15 MB
#    libtorch_cpu.so, else the corpus's wgdemo_cuda): N loads to resolve.
#  - `check` (the hollow-wheel check) on pure wheels of 1,000, 8,000 and 32,000 packages, each
#    __init__.py importing siblings.
# Prints wall time and peak RSS of each (/usr/bin/time), and the time per copy / per package.
# Measured numbers, before and after the analysis step: bench/scale.md.
# Usage: bench/scale.sh [BUILD_DIR] [OBJECT]
# WG_SCALE_COPIES / WG_SCALE_PACKAGES override the sizes ("2 16 64", "1000 8000 32000").
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
obj=${2:-}
wg="$build/wheelgate"
envdir="$build/tests/fixtures/envs/torch211"
[ -x "$wg" ] || { echo "scale: build wheelgate first ($wg not found)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "scale: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
out=bench/out
mkdir -p "$out"

measure() { # label per-unit-count command...
  local label=$1 units=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt" || {
    local rc=$?; [ $rc -le 1 ] || { echo "scale: $label failed ($rc)"; cat "$out/stderr.txt"; exit 1; }
  }
  read -r secs kb < <(tail -n 1 "$out/time.txt")
  printf "  %-36s %8.2f s %10.1f MiB peak RSS %10.2f ms per unit\n" "$label" "$secs" \
    "$(echo "$kb/1024" | bc -l)" "$(echo "$secs*1000/$units" | bc -l)"
}

if [ -z "$obj" ] && [ -f "$envdir/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so" ]; then
  obj="$envdir/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so" # 15 MB, 78k symbols
fi
if [ -z "$obj" ]; then
  whl=../shared/corpus/wheels/wgdemo_good_sm90-0.1.0-cp312-cp312-linux_x86_64.whl
  if [ -f "$whl" ]; then
    obj="$out/wgdemo_cuda.cpython-312-x86_64-linux-gnu.so"
    [ -f "$obj" ] || unzip -p "$whl" wgdemo_cuda.cpython-312-x86_64-linux-gnu.so >"$obj"
  fi
fi
if [ -n "$obj" ] && [ -f "$obj" ] && [ -d "$envdir" ]; then
  echo "check --env $envdir on N copies of $(basename "$obj") ($(( $(stat -c %s "$obj") / 1048576 )) MiB):"
  for n in ${WG_SCALE_COPIES-2 16 64}; do
    mkdir -p "$out/copies-$n"
    w="$out/copies-$n/wgscale_copies-0.1.0-cp312-cp312-linux_x86_64.whl"
    [ -f "$w" ] || python3 bench/make-scale-wheels.py copies "$w" "$n" "$obj"
    cache=$(mktemp -d)
    # The environment's index is built once (cold) so that the runs measured read it warm.
    XDG_CACHE_HOME="$cache" "$wg" check --no-config --env "$envdir" "$w" >/dev/null 2>&1 || true
    measure "$n copies" "$n" env XDG_CACHE_HOME="$cache" "$wg" check --no-config --env "$envdir" "$w"
    measure "$n copies, without --env" "$n" "$wg" check --no-config "$w"
    rm -rf "$cache"
  done
else
  echo "scale: no extension object (../shared/corpus absent and no OBJECT) or no $envdir: --env part skipped"
fi

echo "check (hollow-wheel) on pure wheels of N packages:"
for n in ${WG_SCALE_PACKAGES-1000 8000 32000}; do
  mkdir -p "$out/pure-$n"
  w="$out/pure-$n/wgscale_pure-0.1.0-py3-none-any.whl"
  [ -f "$w" ] || python3 bench/make-scale-wheels.py pure "$w" "$n"
  measure "$n packages" "$n" "$wg" check --no-config "$w"
done
