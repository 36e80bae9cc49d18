#!/usr/bin/env bash
# wheelgate's speed and memory on a large real wheel: `wheelgate inspect` on a wheel holding
# libcublasLt.so.13 (541 MB) from the CUDA toolkit, next to `unzip -p WHEEL >/dev/null` (which
# only inflates) on the same wheel, in the same run; then the bare .so, which is read
# without any decompression. Prints wall time and peak RSS of each; then the time to list
# every fatbin container and entry of the library next to the time to read it.
# Usage: bench/bench.sh [BUILD_DIR] [LIB]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
lib=${2:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so.13}
wg="$build/wheelgate"
[ -x "$wg" ] || { echo "bench: build wheelgate first ($wg not found)" >&2; exit 2; }
[ -f "$lib" ] || { echo "bench: $lib not found (set CUDA_HOME or pass LIB)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "bench: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
out=bench/out
mkdir -p "$out"
whl="$out/nvidia_bench-13.0.0-py3-none-manylinux_2_27_x86_64.whl"
if [ ! -f "$whl" ] || [ "$lib" -nt "$whl" ]; then
  echo "bench: packing $(basename "$lib") into $whl (once; deflate level 6)..."
  python3 bench/make-wheel.py "$whl" "$lib"
fi

measure() { # label command...
  local label=$1; shift
  # Warm the page cache so that both sides read from memory, not disk.
  cat "${@: -1}" >/dev/null 2>&1 || true
  /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" >/dev/null 2>"$out/stderr.txt" || {
    local rc=$?; [ $rc -le 1 ] || { echo "bench: $label failed ($rc)"; cat "$out/stderr.txt"; exit 1; }
  }
  read -r secs kb < <(tail -n 1 "$out/time.txt")
  printf "%-44s %8.2f s %10.1f MiB peak RSS\n" "$label" "$secs" "$(echo "$kb/1024" | bc -l)"
}

size=$(stat -c %s "$lib")
wsize=$(stat -c %s "$whl")
echo "library: $lib ($((size / 1048576)) MiB); wheel: $((wsize / 1048576)) MiB compressed"
measure "wheelgate inspect WHEEL" "$wg" inspect --symbols=none "$whl"
measure "unzip -p WHEEL >/dev/null" sh -c "unzip -p '$whl' >/dev/null" "$whl"
measure "wheelgate inspect --json WHEEL (all symbols)" "$wg" inspect --json "$whl"
measure "wheelgate inspect LIB (no decompression)" "$wg" inspect --symbols=none "$lib"
echo
echo "fatbin listing vs reading the file (best of 3, file in the page cache):"
"$build/bench_fatbin" "$lib" 3

# check --env: the environment's exported-symbol index, built cold and reused warm.
envdir="$build/tests/fixtures/envs/torch211"
if [ -d "$envdir" ] && [ -d ../shared/corpus/wheels ]; then
  cache=$(mktemp -d)
  echo
  echo "check --env (the faithful torch 2.11 stand-in, 78k-symbol libtorch_cpu) on the 6 corpus wheels:"
  for run in cold warm; do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" env XDG_CACHE_HOME="$cache" "$wg" check --no-config \
      --env "$envdir" ../shared/corpus/wheels/*.whl >/dev/null 2>&1 || true
    read -r secs kb < <(tail -n 1 "$out/time.txt")
    printf "  %-42s %8.2f s %10.1f MiB peak RSS\n" "$run (index $( [ $run = cold ] && echo built || echo cached))" "$secs" "$(echo "$kb/1024" | bc -l)"
  done
  /usr/bin/time -f "%e %M" -o "$out/time.txt" "$wg" check --no-config ../shared/corpus/wheels/*.whl >/dev/null 2>&1 || true
  read -r secs kb < <(tail -n 1 "$out/time.txt")
  printf "  %-42s %8.2f s %10.1f MiB peak RSS\n" "without --env (reading the wheels alone)" "$secs" "$(echo "$kb/1024" | bc -l)"
  rm -rf "$cache"
fi

# The pip gate's overhead: the corpus wheels installed into a target directory with plain pip
# and through the gate (warn-only: the corpus has wheels the gate would block, and this
# measures the checking, not the refusing). Needs python3-venv.
if [ -d ../shared/corpus/wheels ] && /usr/bin/python3 -m venv --help >/dev/null 2>&1; then
  v=$(mktemp -d)
  /usr/bin/python3 -m venv "$v/venv" >/dev/null
  echo
  echo "pip install of the 6 corpus wheels (--target, --python-version 3.12, offline):"
  for mode in plain gated; do
    rm -rf "$v/target"
    if [ $mode = plain ]; then
      cmd=("$v/venv/bin/python" -m pip install)
    else
      cmd=("$v/venv/bin/python" -m wheelgate_pip install --wheelgate-warn-only)
    fi
    /usr/bin/time -f "%e %M" -o "$out/time.txt" env PYTHONPATH=hooks/pip \
      WHEELGATE_LIB="$build/libwheelgate.so.0" PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 \
      PIP_DISABLE_PIP_VERSION_CHECK=1 XDG_CACHE_HOME="$v/cache" "${cmd[@]}" --no-deps \
      --target "$v/target" --python-version 3.12 --only-binary=:all: \
      ../shared/corpus/wheels/*.whl >/dev/null 2>&1 || true
    read -r secs kb < <(tail -n 1 "$out/time.txt")
    printf "  %-42s %8.2f s %10.1f MiB peak RSS\n" "$mode pip install" "$secs" "$(echo "$kb/1024" | bc -l)"
  done
  rm -rf "$v"
fi
