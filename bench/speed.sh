#!/usr/bin/env bash
# Speed of `wheelgate check` side by side with what it is measured against (issue 14, point 5):
# `unzip -p W >/dev/null`, `auditwheel show W` (given a source tree) and bench_floor (mapped
# wheel, libdeflate, SHA-256 and CRC-32 of every member: the floor; and its ISA-L streaming
# mode, bench_floor -s, each member inflated into one 1 MiB buffer per thread), with 1 and 2
# threads, on a deflated wheel of CUDA libraries, its stored twin, a wheel of 20,000 tiny
# members and a wheel of one 1 GiB shared object (issue 30: memory that does not follow the
# member). Every row says its peak RSS and peak anonymous RSS (bench/speed_run.py). With
# --baseline WG, an earlier wheelgate's `check` is timed in the same rounds ("check (before)").
# Medians of RUNS interleaved rounds (every command once per round, the page cache warmed
# before each); each ratio is the median of its per-round ratios. See bench/speed.md.
# SPDX-License-Identifier: GPL-3.0-or-later
#
#   bash bench/speed.sh [--quick] [--auditwheel SRC] [--baseline WG] [--deflated W] [--stored W]
#                       [--tiny W] [--huge W] [BUILD_DIR]
#
# BUILD_DIR: default build (needs the targets wheelgate-cli and bench_floor). Environment:
# WG_SPEED_RUNS (rounds, default 3; --quick: 1), WG_AUDITWHEEL_SRC (as --auditwheel),
# WG_SPEED_DEFLATED, WG_SPEED_STORED, WG_SPEED_TINY, WG_SPEED_HUGE (the wheels; default
# /work/bw/...), WG_SPEED_BASELINE (as --baseline).
# Prints Markdown tables; exit 1 when a target is missed, 2 on a usage or setup error.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
name=nvidia_bench-13.0.0-py3-none-manylinux_2_27_x86_64.whl
RUNS=${WG_SPEED_RUNS:-3}
AW_SRC=${WG_AUDITWHEEL_SRC:-}
DEFLATED=${WG_SPEED_DEFLATED:-/work/bw/$name}
STORED=${WG_SPEED_STORED:-/work/bw/stored/$name}
TINY=${WG_SPEED_TINY:-/work/bw/tiny/$name}
HUGE=${WG_SPEED_HUGE:-/work/bw/huge/$name}
BASE=${WG_SPEED_BASELINE:-}
BUILD=

die() { echo "speed.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) RUNS=1 ;;
	--auditwheel) [ $# -ge 2 ] || die "--auditwheel needs a directory"; AW_SRC=$2; shift ;;
	--deflated) [ $# -ge 2 ] || die "--deflated needs a wheel"; DEFLATED=$2; shift ;;
	--stored) [ $# -ge 2 ] || die "--stored needs a wheel"; STORED=$2; shift ;;
	--tiny) [ $# -ge 2 ] || die "--tiny needs a wheel"; TINY=$2; shift ;;
	--huge) [ $# -ge 2 ] || die "--huge needs a wheel"; HUGE=$2; shift ;;
	--baseline) [ $# -ge 2 ] || die "--baseline needs a wheelgate binary"; BASE=$2; shift ;;
	-h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) [ -z "$BUILD" ] || die "one BUILD_DIR only"; BUILD=$1 ;;
	esac
	shift
done
BUILD=${BUILD:-$root/build}
case $RUNS in ''|*[!0-9]*|0) die "WG_SPEED_RUNS must be a positive integer, not '$RUNS'" ;; esac

WG=$BUILD/wheelgate
FLOOR=$BUILD/bench_floor
[ -x "$WG" ] || die "$WG not found: build first (cmake --build $BUILD --target wheelgate-cli)"
[ -x "$FLOOR" ] || die "$FLOOR not found: build first (cmake --build $BUILD --target bench_floor)"
command -v unzip >/dev/null || die "unzip not found (apt-get install unzip)"
hint() {
	local libs=/usr/local/cuda/lib64
	case $1 in
	deflated) echo "python3 bench/make-wheel.py $2 $libs/libcublasLt.so.13 $libs/libcudnn_engines_precompiled.so.9 $libs/libnccl.so.2" ;;
	stored) echo "python3 bench/make-wheel.py --stored $2 $libs/libcublasLt.so.13 $libs/libcudnn_engines_precompiled.so.9 $libs/libnccl.so.2" ;;
	tiny) echo "python3 bench/make-wheel.py --tiny 20000 $2" ;;
	huge) echo "python3 bench/make-wheel.py --huge-elf 1024 $2" ;;
	esac
}
[ -z "$BASE" ] || [ -x "$BASE" ] || die "--baseline $BASE: not an executable"
for kind in deflated stored tiny huge; do
	case $kind in deflated) w=$DEFLATED ;; stored) w=$STORED ;; tiny) w=$TINY ;; huge) w=$HUGE ;; esac
	[ -f "$w" ] || die "$w: no such wheel (the $kind input); make it with:
  $(hint "$kind" "$w")
or name another with --$kind W"
done

out=$here/out
mkdir -p "$out"
aw=()
if [ -n "$AW_SRC" ]; then
	[ -d "$AW_SRC/src/auditwheel" ] || die "$AW_SRC: not an auditwheel source tree (no src/auditwheel)"
	# auditwheel's main() asks importlib.metadata for its own version: a stub dist-info answers.
	stub=$out/auditwheel-stub
	mkdir -p "$stub/auditwheel-0+src.dist-info"
	printf 'Metadata-Version: 2.1\nName: auditwheel\nVersion: 0+src\n' \
		>"$stub/auditwheel-0+src.dist-info/METADATA"
	aw=(env "PYTHONPATH=$AW_SRC/src:$stub" /usr/bin/python3 -m auditwheel show)
	"${aw[@]}" --help >/dev/null 2>&1 || die "auditwheel from $AW_SRC does not run: ${aw[*]} --help"
fi

jobs_flag=0
if "$WG" check --help 2>&1 | grep -q -- '--jobs'; then
	jobs_flag=1
fi
cores=$(nproc)
run=(python3 "$here/speed_run.py")

# measure KIND WHEEL: RUNS rounds of every command on WHEEL, interleaved; results in
# $out/KIND.tsv as "round label wall_s rss_kb exit".
measure() {
	local kind=$1 w=$2 r i
	local -a labels=() cmds=()
	labels+=("check"); cmds+=("$WG check --no-config $w")
	if [ -n "$BASE" ]; then
		labels+=("check (before)"); cmds+=("$BASE check --no-config $w")
	fi
	if [ $jobs_flag = 1 ]; then
		labels+=("check -j 1"); cmds+=("$WG check --no-config -j 1 $w")
		labels+=("check -j 2"); cmds+=("$WG check --no-config -j 2 $w")
	fi
	labels+=("unzip -p"); cmds+=("unzip -p $w")
	if [ ${#aw[@]} -gt 0 ] && [ "$kind" != tiny ]; then
		labels+=("auditwheel show"); cmds+=("${aw[*]} $w")
	fi
	labels+=("floor -j 1"); cmds+=("$FLOOR -j 1 $w")
	labels+=("floor -j 2"); cmds+=("$FLOOR -j 2 $w")
	labels+=("floor -s -j 1"); cmds+=("$FLOOR -s -j 1 $w")
	labels+=("floor -s -j 2"); cmds+=("$FLOOR -s -j 2 $w")
	: >"$out/$kind.tsv"
	for r in $(seq "$RUNS"); do
		for i in "${!labels[@]}"; do
			# Word splitting of the command is wanted: no path here holds a space (checked).
			# shellcheck disable=SC2086
			res=$("${run[@]}" "$w" ${cmds[$i]})
			printf '%s\t%s\t%s\n' "$r" "${labels[$i]}" "${res// /$'\t'}" >>"$out/$kind.tsv"
		done
	done
}
for w in "$DEFLATED" "$STORED" "$TINY" "$HUGE" "$WG" "$FLOOR" "$AW_SRC" "$BASE"; do
	case $w in *[[:space:]]*) die "'$w': a path with a space is not supported" ;; esac
done

echo "# wheelgate speed ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $cores cores for this process, $RUNS round(s))"
echo
[ $jobs_flag = 1 ] || echo "(this wheelgate has no -j/--jobs: the check -j 1 and -j 2 rows are left out)"
[ ${#aw[@]} -gt 0 ] || echo "(no auditwheel source tree given (--auditwheel SRC or WG_AUDITWHEEL_SRC): its rows are left out)"
echo
measure deflated "$DEFLATED"
measure stored "$STORED"
measure tiny "$TINY"
measure huge "$HUGE"

# A plain check uses the cores this process may use, or one thread where it has no -j.
workers=$cores
[ $jobs_flag = 1 ] || workers=1
python3 "$here/speed_report.py" "$out" "$workers" "$DEFLATED" "$STORED" "$TINY" "$HUGE"
