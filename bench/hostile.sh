#!/usr/bin/env bash
# The hostile inputs of issues 12 and 25 ("Why"), each made by bench/hostile_gen.py (into
# WG_HOSTILE_OUT, default bench/out/hostile/; large inputs are generated, never committed; the
# stdin cases are streamed) and run once under /usr/bin/time with its limits, then ASSERTED:
#   - wall time <= WG_HOSTILE_MAX_S (30 s) and peak RSS <= WG_HOSTILE_MAX_MB (700 MiB);
#   - the exit status matches the case's expected statuses;
#   - a line wheelgate said (stderr first, then stdout) matches the case's expected pattern:
#     a clear finding or error, named; the first such line is printed;
#   - what it wrote to stdout is at most the case's output bound (a report, not a flood).
# A case is stopped at WG_HOSTILE_TIMEOUT (60 s); WG_HOSTILE_VMEM_KB (unset: none) limits the
# address space. A generator bench/hostile_gen.py lacks is a loud "MISSING GENERATOR" line and a
# failure. Prints a table; exit status 1 when any case failed, 2 on a usage error.
# Usage: bench/hostile.sh [--quick] [--serve] [--list] [BUILD_DIR | WHEELGATE_BINARY]
#   --quick  only the cases marked quick (each under 5 s, inputs made in seconds): ctest's
#            hostile-quick runs this on every plain build
#   --serve  also the gate's cases (wheelgate serve under attack on loopback), run by the script
#            bench/slowloris.py (WG_HOSTILE_SERVE_SCRIPT overrides); its absence is a failure
#   --list   the cases, their limits and expectations, without running anything
# Measured numbers, before and after: bench/hostile.md.
set -uo pipefail
quick=0 serve=0 list=0
while [ $# -gt 0 ]; do
  case "$1" in
  --quick) quick=1 ;;
  --serve) serve=1 ;;
  --list) list=1 ;;
  -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
  -*) echo "hostile: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
  shift
done
cd "$(dirname "$0")/.."
root=$PWD
arg=${1:-build}
wg=$arg
[ -d "$arg" ] && wg="$arg/wheelgate"
wg=$(readlink -f "$wg")
if [ "$list" = 0 ]; then
  [ -x "$wg" ] || { echo "hostile: build wheelgate first ($wg not found)" >&2; exit 2; }
  command -v /usr/bin/time >/dev/null || { echo "hostile: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
fi
genpy="$root/bench/hostile_gen.py"
gen="/usr/bin/python3 $genpy"
out=$(mkdir -p "${WG_HOSTILE_OUT:-bench/out/hostile}" && cd "${WG_HOSTILE_OUT:-bench/out/hostile}" && pwd)
limit=${WG_HOSTILE_TIMEOUT:-60}
max_s=${WG_HOSTILE_MAX_S:-30}
max_mb=${WG_HOSTILE_MAX_MB:-700}
fails=0 ran=0 missing=0
results="$out/results.txt"
: > "$results"

# ---------------------------------------------------------------------------------------------
# Inputs. gen_input OUTPUT SUBCOMMAND ARGS...: runs `hostile_gen.py SUBCOMMAND ARGS...` unless OUTPUT
# exists; a subcommand the generator does not have (its name nowhere in hostile_gen.py, or it
# answers with the usage) is MISSING GENERATOR, any other failure GENERATOR FAILED; both fail.
gen_failed=()
gen_input() {
  local target=$1 sub=$2; shift 2
  [ "$list" = 1 ] && return 0
  [ -e "$target" ] && return 0
  if ! grep -q "[\"']$sub[\"']" "$genpy"; then
    echo "MISSING GENERATOR: bench/hostile_gen.py has no '$sub' (wanted: $sub $*)" | tee -a "$results"
    missing=$((missing + 1)); gen_failed+=("$sub")
    return 1
  fi
  if ! $gen "$sub" "$@" > "$out/gen-$sub.log" 2>&1 || [ ! -e "$target" ]; then
    if grep -q '^Usage:' "$out/gen-$sub.log"; then
      echo "MISSING GENERATOR: bench/hostile_gen.py $sub answered with its usage (wanted: $sub $*)" | tee -a "$results"
    else
      echo "GENERATOR FAILED: bench/hostile_gen.py $sub $* (made no $target): $(tail -n 1 "$out/gen-$sub.log")" | tee -a "$results"
    fi
    missing=$((missing + 1)); gen_failed+=("$sub")
    rm -rf "$target"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
# A case. run_case LABEL QUICK RCS PATTERN OUT_MAX_KB COMMAND
#   QUICK: 1 when it belongs to --quick; RCS: the exit statuses allowed (an ERE, e.g. '[01]');
#   PATTERN: an ERE one line of what it said must match; OUT_MAX_KB: the most stdout may hold;
#   COMMAND: run by bash -c (pipes work), from the repository root.
printf_row() { printf "%-44s %8s %9s %5s %9s  %-4s %s\n" "$@"; }
header_done=0
run_case() {
  local label=$1 q=$2 rcs=$3 pat=$4 outmax=$5; shift 5
  if [ "$list" = 1 ]; then
    printf '%-44s quick=%s exit=%-6s out<=%sKB  /%s/\n' "$label" "$q" "$rcs" "$outmax" "$pat"
    return
  fi
  [ "$quick" = 1 ] && [ "$q" != 1 ] && return
  if [ "$header_done" = 0 ]; then
    printf_row "case (limits: ${max_s} s, ${max_mb} MiB)" "seconds" "peak MiB" "exit" "stdout KB" "ok?" "first line said that matches"
    header_done=1
  fi
  ran=$((ran + 1))
  ( [ -n "${WG_HOSTILE_VMEM_KB:-}" ] && ulimit -v "$WG_HOSTILE_VMEM_KB"
    /usr/bin/time -f "%e %M %x" -o "$out/time.txt" timeout "$limit" bash -c "$*" \
      >"$out/stdout.txt" 2>"$out/stderr.txt" )
  local secs kb rc
  read -r secs kb rc < <(tail -n 1 "$out/time.txt")
  # time says 0 for a command a signal ended (a crash): never a pass.
  local sig
  sig=$(sed -nE 's/^Command terminated by signal ([0-9]+).*/\1/p' "$out/time.txt")
  [ -n "$sig" ] && rc="signal$sig"
  local why=() shown
  local outkb=$(( $(stat -c %s "$out/stdout.txt") / 1024 ))
  local mib
  mib=$(awk -v k="${kb:-0}" 'BEGIN { printf "%.1f", k / 1024 }')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    why+=("killed at the ${limit} s limit"); secs=">$limit"
  elif awk -v s="$secs" -v m="$max_s" 'BEGIN { exit !(s > m) }'; then
    why+=("over ${max_s} s")
  fi
  awk -v k="${kb:-0}" -v m="$max_mb" 'BEGIN { exit !(k / 1024 > m) }' && why+=("over ${max_mb} MiB")
  [[ "$rc" =~ ^($rcs)$ ]] || why+=("exit $rc, expected $rcs")
  [ "$outkb" -le "$outmax" ] || why+=("${outkb} KB of output, over ${outmax} KB")
  # What it said: stderr (less time's own line), then stdout; the first line matching PATTERN.
  shown=$( (grep -v "^Command " "$out/stderr.txt"; cat "$out/stdout.txt") | grep -m1 -E -- "$pat" | sed "s/^ *//" | cut -c1-100)
  if [ -z "$shown" ]; then
    why+=("said nothing matching /$pat/")
    shown="[no match] $( (grep -v '^Command ' "$out/stderr.txt"; head -n 3 "$out/stdout.txt") | head -n 1 | cut -c1-80)"
  fi
  local ok=ok
  if [ ${#why[@]} -gt 0 ]; then
    ok=FAIL fails=$((fails + 1))
  fi
  printf_row "$label" "$secs" "$mib" "$rc" "$outkb" "$ok" "$shown" | tee -a "$results"
  if [ "$ok" = FAIL ]; then
    local w joined=""
    for w in "${why[@]}"; do joined+="${joined:+; }$w"; done
    printf '  FAILED: %s\n' "$joined" | tee -a "$results"
  fi
  return 0
}
# A case whose input could not be made: counted, never silently skipped.
no_input() {
  [ "$list" = 1 ] && return
  [ "$quick" = 1 ] && [ "$2" != 1 ] && return
  printf_row "$1" "-" "-" "-" "-" "FAIL" "MISSING GENERATOR: no input" | tee -a "$results"
  fails=$((fails + 1))
}
# case_with INPUT LABEL QUICK RCS PATTERN OUT_MAX_KB COMMAND: the case when INPUT was made.
case_with() {
  local input=$1; shift
  if [ "$list" = 1 ] || [ -e "$input" ]; then run_case "$@"; else no_input "$1" "$2"; fi
}

echo "wheelgate: $wg"
echo "inputs: $out"
check="$wg check --no-config"
# Output bounds (KB of stdout): a text report, a JSON document, a refusal.
txt=512 json=4096 refusal=64
# The text report's lines (and the JSON document's error entries) wheelgate prints.
verdict='error\[WG-|warning\[WG-|^PASS |^[0-9]+ inputs?:'

# ---------------------------------------------------------------------------------------------
# Issue 12's cases (kept).
want() { [ "$list" = 1 ] || [ "$quick" = 0 ] || [ "$1" = 1 ]; } # make the input of a case run now
if want 0; then
  [ -f "$out/meta.whl" ] || { $gen meta "$out/hostile_meta-1.0-py3-none-any.whl" && touch "$out/meta.whl"; }
fi
if want 1; then
  gen_input "$out/hostile_init-1.0-py3-none-any.whl" init "$out/hostile_init-1.0-py3-none-any.whl"
  gen_input "$out/hostile_imports-1.0-py3-none-any.whl" imports "$out/hostile_imports-1.0-py3-none-any.whl"
  gen_input "$out/aliases.yaml" rules "$out/aliases.yaml"
  gen_input "$out/hostile_rp-1.0-py3-none-any.whl" runpath "$out/rpenv" "$out/outside" "$out/hostile_rp-1.0-py3-none-any.whl"
  if [ "$list" = 0 ]; then
    rm -f "$out/fifo.whl" "$out/fifo.yaml"
    mkfifo "$out/fifo.whl" "$out/fifo.yaml"
  fi
fi
if want 0; then
  gen_input "$out/symenv/lib/python3.12/site-packages/torch/lib/libc10.so" symbols "$out/symenv"
  [ -f "$out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl" ] || [ "$list" = 1 ] ||
    { mkdir -p "$out/names" && gen_input "$out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl" names "$out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl" 1; }
  mkdir -p "$out/emptyenv/lib/python3.12/site-packages"
  gen_input "$out/many-1.0-py3-none-any.whl" members "$out/many-1.0-py3-none-any.whl"
  if [ "$list" = 0 ]; then
    rm -rf "$out/cacheenv" "$out/cache"
    $gen cache "$out/cacheenv" "$out/cache" >/dev/null
  fi
fi

[ "$list" = 1 ] && echo "== issue 12"
case_with "$out/meta.whl" "4000 x 1 MiB METADATA (16 MB wheel)" 0 '[01]' "$verdict" "$txt" \
  "$check $out/hostile_meta-1.0-py3-none-any.whl"
case_with "$out/hostile_init-1.0-py3-none-any.whl" "1 MiB __init__.py of imports" 1 '[01]' "$verdict" "$txt" \
  "$check $out/hostile_init-1.0-py3-none-any.whl"
case_with "$out/hostile_init-1.0-py3-none-any.whl" "  same, --format json" 1 '[01]' '"rule": *"WG-' "$json" \
  "$check --format json $out/hostile_init-1.0-py3-none-any.whl"
case_with "$out/hostile_imports-1.0-py3-none-any.whl" "1 MiB of 'from x import a   !'" 1 '[01]' "$verdict" "$txt" \
  "$check $out/hostile_imports-1.0-py3-none-any.whl"
case_with "$out/aliases.yaml" "1 MB rule file of aliases" 1 '[12]' 'alias' "$refusal" \
  "$check --rules $out/aliases.yaml $out/hostile_init-1.0-py3-none-any.whl"
case_with "$genpy" "4 GiB on stdin (check -)" 0 '[12]' 'max-stdin|too large|budget' "$refusal" \
  "$gen stdin 4 | $check -"
case_with "$genpy" "4 GiB on stdin (inspect -)" 0 '[12]' 'max-stdin|too large|budget' "$refusal" \
  "$gen stdin 4 | $wg inspect -"
case_with "$out/symenv/lib/python3.12/site-packages/torch/lib/libc10.so" "200,000 symbols of one name (env)" 0 '0' '.' "$txt" \
  "$wg env --no-cache $out/symenv"
case_with "$out/cacheenv" "cache entry, 1.5M names (env)" 0 '0' '.' "$txt" \
  "XDG_CACHE_HOME=$out/cache $wg env $out/cacheenv"
case_with "$out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl" "1 MiB of imported names (--env)" 0 '[01]' "$verdict" "$txt" \
  "$check --env $out/emptyenv $out/names/hostile_names-1.0-cp312-cp312-linux_x86_64.whl"
case_with "$out/many-1.0-py3-none-any.whl" "1,000,000 members (92 MB)" 0 '[12]' 'member|max_members|too many' "$refusal" \
  "$check $out/many-1.0-py3-none-any.whl"
case_with "$out/hostile_rp-1.0-py3-none-any.whl" "RUNPATH outside env, 4 GiB non-ELF" 1 '[01]' "$verdict" "$txt" \
  "$check --env $out/rpenv $out/hostile_rp-1.0-py3-none-any.whl"
case_with "$out/fifo.whl" "a FIFO as input" 1 '[12]' 'not a regular file' "$refusal" \
  "$check $out/fifo.whl"
case_with "$out/fifo.yaml" "a FIFO as --rules" 1 '[12]' 'not a regular file' "$refusal" \
  "$check --rules $out/fifo.yaml $out/hostile_init-1.0-py3-none-any.whl"

# ---------------------------------------------------------------------------------------------
# Issue 25's cases. The generators (bench/hostile_gen.py SUBCOMMAND OUT [N ...]) are written with
# the fixes; the sizes are the issue's. Expected: bounded work and output, and what the fix says:
# an aggregated finding ("and N more like this", the count kept), a refusal naming the budget or
# the option that raises it, or the finding the hostile structure deserves.
[ "$list" = 1 ] && echo "== issue 25"
req=$out/req/hostile_req-1.0-py3-none-any.whl
req2=$out/reqx/hostile_req-1.0-py3-none-any.whl
ovl=$out/hostile_overlap-1.0-py3-none-any.whl
rec=$out/hostile_rec-1.0-py3-none-any.whl
hol=$out/hostile_hollow-1.0-py3-none-any.whl
fat=$out/hostile_fatbin-1.0-py3-none-any.whl
nam=$out/zipstruct
elf=$out/hostile_noshdr-1.0-cp312-cp312-linux_x86_64.whl
if want 1; then
  [ "$list" = 1 ] || mkdir -p "$out/req" "$out/reqx" "$out/emptyenv/lib/python3.12/site-packages"
  gen_input "$req" requires "$req" 10000 1000
  gen_input "$req2" requires-extras "$req2" 100000 10000
  gen_input "$ovl" overlap "$ovl"
  gen_input "$rec" record-missing "$rec" 999000
  gen_input "$hol" hollow "$hol"
  gen_input "$fat" fatbin "$fat" 1000000
  gen_input "$nam/zs_symlink_abs-1.0-py3-none-any.whl" zipstruct "$nam"
  gen_input "$elf" elf-noshdr "$elf"
fi
case_with "$req" "10,000 Requires-Dist x 1,000 imports" 1 '[01]' "$verdict" "$txt" \
  "$check --env $out/emptyenv $req"
case_with "$req2" "100,000 Requires-Dist (extras) x 10,000 imp." 1 '[01]' "$verdict" "$txt" \
  "$check --env $out/emptyenv $req2"
case_with "$ovl" "overlapping members, one deflate stream" 1 '1|2' 'overlap|shared|bomb' "$refusal" \
  "$check $ovl"
case_with "$ovl" "  same, -j 1" 1 '1|2' 'overlap|shared|bomb' "$refusal" \
  "$check -j 1 $ovl"
case_with "$rec" "RECORD of 999,000 missing rows (json)" 1 '1' 'more like this|"more"|"count"|budget' "$json" \
  "$check --format json $rec"
case_with "$rec" "  same, text" 1 '1' 'more like this|budget' "$txt" \
  "$check $rec"
case_with "$fat" "fatbin of 1,000,000 entries (inspect --json)" 1 '[012]' 'more|"count"|budget|entries' "$json" \
  "$wg inspect --json $fat"
case_with "$fat" "  same, inspect (text)" 1 '[012]' 'more|budget|entries' "$txt" \
  "$wg inspect $fat"
case_with "$hol" "hollow wheel of 245 KB (69,064 findings)" 1 '1' 'more like this|budget' "$txt" \
  "$check $hol"
case_with "$hol" "  same, --format json" 1 '1' 'more like this|"more"|"count"|budget' "$json" \
  "$check --format json $hol"
case_with "$nam/zs_symlink_abs-1.0-py3-none-any.whl" "symlinks, NUL, case, ./ and // in names" 1 '1' 'symlink|unsafe|WG-[A-Z]+-[0-9]+.*name' "$txt" \
  "$check $nam/zs_symlink_abs-1.0-py3-none-any.whl $nam/zs_symlink_up-1.0-py3-none-any.whl $nam/zs_nul-1.0-py3-none-any.whl $nam/zs_case-1.0-py3-none-any.whl $nam/zs_dot-1.0-py3-none-any.whl $nam/zs_empty-1.0-py3-none-any.whl"
case_with "$elf" "ELF with zeroed e_shoff/e_shnum/e_shstrndx" 1 '1' 'error\[WG-ABI-001\]' "$txt" \
  "$check --target cxx11abi=1 $elf"
case_with "$genpy" "6 GiB of zeros on stdin (inspect -)" 0 '[12]' 'max-stdin|too large|budget|starts with' "$refusal" \
  "head -c 6G /dev/zero | $wg inspect -"

# ---------------------------------------------------------------------------------------------
# The gate (wheelgate serve) under attack on loopback: a separate script, run with --serve. It
# is to cover, each with its own pass/fail line and exit status 1 on any failure: 200
# connections held 60 s with /healthz answered within 1 s throughout; bodies trickled a byte at
# a time (closed, not waited on); two overlap uploads beside a good /v1/check; 4 Requires-Dist
# uploads (memory); x.whl., "x.whl " and filename*= never forwarded unchecked; two different
# Content-Length refused; a 100 KB chunk extension answered, logged and counted.
if [ "$serve" = 1 ]; then
  script=${WG_HOSTILE_SERVE_SCRIPT:-}
  if [ -z "$script" ]; then
    for s in bench/slowloris.py bench/serve_hostile.py; do [ -f "$s" ] && { script=$s; break; }; done
  fi
  echo "== the gate (wheelgate serve) on loopback: ${script:-no script}"
  if [ -z "$script" ] || [ ! -f "$script" ]; then
    echo "MISSING GENERATOR: no gate script (bench/slowloris.py or WG_HOSTILE_SERVE_SCRIPT)" | tee -a "$results"
    missing=$((missing + 1))
  else
    ran=$((ran + 1))
    if timeout "${WG_HOSTILE_SERVE_TIMEOUT:-600}" /usr/bin/python3 "$script" "$wg" > "$out/serve.txt" 2>&1; then
      tail -n 40 "$out/serve.txt"
      echo "serve: ok"
    else
      tail -n 40 "$out/serve.txt"
      echo "serve: FAIL (exit status of $script; whole output in $out/serve.txt)" | tee -a "$results"
      fails=$((fails + 1))
    fi
  fi
elif [ "$list" = 1 ]; then
  echo "== the gate: --serve runs bench/slowloris.py WHEELGATE (exit 0: every case held)"
fi

[ "$list" = 1 ] && exit 0
echo
echo "$ran cases run, $fails failed, $missing generators missing or failing${gen_failed[*]:+ (${gen_failed[*]})}"
if [ "$fails" -gt 0 ] || [ "$missing" -gt 0 ]; then
  echo "HOSTILE: FAILED (every failure above, also in $results)"
  exit 1
fi
echo "HOSTILE: every case held (<= ${max_s} s, <= ${max_mb} MiB, the expected exit status and message)"
