#!/usr/bin/env bash
# The hostile inputs too large to commit (issue 25), made by bench/hostile_gen.py at test time
# and replayed through the harnesses with replay_main.c's limits per input (time and peak
# memory: an input over either fails, named). ctest's fuzz-replay-hostile runs this.
#   tests/fuzz/replay-hostile.sh REPLAY_DIR OUT
# REPLAY_DIR: the replay_<h> binaries (build/tests/fuzz); OUT: where the inputs are made (kept
# between runs: an input already there is not made again). Each made file goes to the harness
# its first bytes name: a zip to replay_wheel, an ELF (less its magic, which the harness
# prepends) to replay_elf. A generator bench/hostile_gen.py lacks is "MISSING GENERATOR" and
# fails the test once the rest has run. The harness's own limits apply (fuzz_common.h: 16 MiB a
# member, 64 MiB in all): bench/hostile.sh runs the same inputs with the CLI's defaults.
set -uo pipefail
[ $# -eq 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
bin=$1 out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
genpy=$root/bench/hostile_gen.py
mkdir -p "$out/made" "$out/wheel" "$out/elf"
failed=0
# file subcommand args... (OUT: the file; the names and sizes are bench/hostile.sh's)
cases=(
  "hostile_req-1.0-py3-none-any.whl requires OUT 10000 1000"
  "hostile_reqx-1.0-py3-none-any.whl requires-extras OUT 100000 10000"
  "hostile_overlap-1.0-py3-none-any.whl overlap OUT"
  "hostile_rec-1.0-py3-none-any.whl record-missing OUT 999000"
  "hostile_hollow-1.0-py3-none-any.whl hollow OUT"
  "hostile_fatbin-1.0-py3-none-any.whl fatbin OUT 1000000"
  "hostile_noshdr-1.0-cp312-cp312-linux_x86_64.whl elf-noshdr OUT"
  "hostile_init-1.0-py3-none-any.whl init OUT"
  "hostile_imports-1.0-py3-none-any.whl imports OUT"
)
for c in "${cases[@]}"; do
  read -r name sub args <<< "$c"
  f=$out/made/$name
  if [ ! -s "$f" ]; then
    if ! grep -q "[\"']$sub[\"']" "$genpy"; then
      echo "MISSING GENERATOR: bench/hostile_gen.py has no '$sub'"
      failed=1; continue
    fi
    # shellcheck disable=SC2086
    if ! /usr/bin/python3 "$genpy" $sub ${args/OUT/$f} > "$f.log" 2>&1 || [ ! -s "$f" ]; then
      echo "GENERATOR FAILED: bench/hostile_gen.py $sub ${args/OUT/$f}: $(tail -n 1 "$f.log")"
      rm -f "$f"; failed=1; continue
    fi
  fi
  magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
  504b*) cp "$f" "$out/wheel/$name" ;;
  7f454c46) tail -c +5 "$f" > "$out/elf/$name" ;;
  *) echo "hostile $name: neither a zip nor an ELF (magic $magic)"; failed=1 ;;
  esac
done
# the zip-structure cases: one small wheel each, made into a directory
if [ ! -s "$out/made/zipstruct/zs_symlink_abs-1.0-py3-none-any.whl" ]; then
  if ! /usr/bin/python3 "$genpy" zipstruct "$out/made/zipstruct" > "$out/made/zipstruct.log" 2>&1; then
    echo "GENERATOR FAILED: bench/hostile_gen.py zipstruct: $(tail -n 1 "$out/made/zipstruct.log")"
    failed=1
  fi
fi
cp "$out/made/zipstruct/"*.whl "$out/wheel/" 2>/dev/null ||
  { echo "hostile: bench/hostile_gen.py zipstruct made no wheel"; failed=1; }
for h in wheel elf; do
  [ -n "$(ls -A "$out/$h")" ] || continue
  "$bin/replay_$h" "$out/$h" || failed=1
done
[ "$failed" = 0 ] || echo "fuzz-replay-hostile: FAILED (above: a missing generator, or an input over a limit)"
exit "$failed"
