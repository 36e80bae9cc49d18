#!/usr/bin/env bash
# The CLI's fixed start-up cost (docs/startup.md): perf stat -r N (task-clock and elapsed) of
# `--version`, `check` of a small wheel in a directory without a pyproject.toml, and the same
# with one, and the shared objects the dynamic loader maps for each (LD_DEBUG=files).
# Usage: bench/startup.sh [WHEELGATE [WHEEL [OTHER_WHEELGATE]]]: OTHER_WHEELGATE (e.g. a copy
# of an older build) is measured in the same rounds, alternating, for a paired comparison.
# Run it on a quiet machine: not while building.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
wg=$(realpath "${1:-$root/build/wheelgate}")
wheel=$(realpath "${2:-$root/../shared/corpus/wheels/wgcpu_cpu_good-0.1.0-cp312-cp312-linux_x86_64.whl}")
other=${3:+$(realpath "$3")}
runs=${RUNS:-30}
rounds=${ROUNDS:-3}
command -v perf >/dev/null || { echo "perf not found (linux-perf)"; exit 2; }
[ -f "$wheel" ] || { echo "no wheel: $wheel (../shared/corpus absent?)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/plain" "$tmp/toml"
printf '[tool.wheelgate]\nfail-on = "error"\n' > "$tmp/toml/pyproject.toml"

objects() { # dir exe args...: shared objects mapped
  (cd "$1" && LD_DEBUG=files "$2" "${@:3}" 2>&1 >/dev/null) | grep -c 'generating link map' || true
}
stat1() { # dir exe args...: "task-clock-ms elapsed-ms", perf stat's means over $runs runs
  (cd "$1" && perf stat -r "$runs" "$2" "${@:3}" 2>&1 >/dev/null) |
    awk '/task-clock/{t=$1} /seconds time elapsed/{e=$1*1000} END{printf "%.2f %.2f\n", t, e}'
}
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

exes=("$wg")
[ -n "$other" ] && exes+=("$other")
printf '%-26s %-6s %8s %13s %11s\n' case build objects task-clock elapsed
for c in version check check-toml; do
  case $c in
    version) dir=$tmp/plain; args=(--version); label="--version" ;;
    check) dir=$tmp/plain; args=(check "$wheel"); label="check W" ;;
    check-toml) dir=$tmp/toml; args=(check "$wheel"); label="check W, pyproject.toml" ;;
  esac
  declare -A tc el
  for x in "${exes[@]}"; do tc[$x]=; el[$x]=; done
  for _ in $(seq "$rounds"); do
    for x in "${exes[@]}"; do
      read -r t e < <(stat1 "$dir" "$x" "${args[@]}")
      tc[$x]+="$t "; el[$x]+="$e "
    done
  done
  for x in "${exes[@]}"; do
    name=this; [ "$x" = "$wg" ] || name=other
    printf '%-26s %-6s %8s %10s ms %8s ms\n' "$label" "$name" "$(objects "$dir" "$x" "${args[@]}")" \
      "$(tr ' ' '\n' <<<"${tc[$x]}" | grep . | median)" "$(tr ' ' '\n' <<<"${el[$x]}" | grep . | median)"
  done
done
echo "W = $(basename "$wheel"); perf stat -r $runs (task-clock and elapsed), medians of" \
  "$rounds rounds${other:+, the two builds alternating}; objects: LD_DEBUG=files"
