#!/usr/bin/env bash
# Issue 30 on the GPU host (its python3 holds torch 2.11+cu130, cupy, jax and about 200
# distributions): the self-contained wheel installed in a fresh venv, then
#  1. bench/stream_facts.py over every ELF file of 8 MB or more in the environment's
#     site-packages and /usr/local/cuda: inspect JSON streamed against whole;
#  2. `wheelgate audit` of the environment streamed (max_member_held=0) and whole (100G):
#     the same JSON, time and peak RSS of each.
# Output under $OUT (or ./stream-device). SPDX-License-Identifier: GPL-3.0-or-later
set -uo pipefail
OUT=${OUT:-stream-device}
mkdir -p "$OUT"
py=$(command -v python3)
"$py" -m venv /tmp/wgv && /tmp/wgv/bin/pip install -q --no-index build-wheel/dist/wheelgate-*.whl
WG=/tmp/wgv/bin/wheelgate
sp=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
{
	echo "python: $py ($("$py" --version)), site-packages: $sp, $(nproc) cores"
	"$WG" --version
	echo "== stream_facts"
	"$py" bench/stream_facts.py --each --wheelgate "$WG" "$sp" /usr/local/cuda/lib64 2>&1
	echo "stream_facts rc=$?"
	echo "== audit"
	for h in 0 100G; do
		/usr/bin/time -f "audit max_member_held=$h: %e s, peak RSS %M KB" "$WG" audit \
			"$py" --format json --limit max_member_held=$h >"$OUT/audit-$h.json" \
			2>"$OUT/audit-$h.err"
		echo "audit rc=$?"; tail -1 "$OUT/audit-$h.err"
	done
	cmp "$OUT/audit-0.json" "$OUT/audit-100G.json" && echo "audit JSON identical ($(wc -c <"$OUT/audit-0.json") bytes)"
	"$py" - "$OUT/audit-0.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("audit document keys:", sorted(d)[:12])
for k in ("inputs", "reports", "summary"):
    if k in d:
        print(k, len(d[k]) if isinstance(d[k], list) else d[k])
PY
} 2>&1 | tee "$OUT/report.txt"

# 3. The bench wheel made here from this machine's CUDA libraries, timed on 2 cores (taskset),
#    the native CLI of the wheel against unzip -p, 3 interleaved rounds, peak RSS of each.
native=$(find /tmp/wgv -path '*wheelgate/_native/bin/wheelgate' -type f | head -1)
lib=/usr/local/cuda/lib64
bw=/tmp/bw/nvidia_bench-13.0.0-py3-none-manylinux_2_27_x86_64.whl
mkdir -p /tmp/bw
pick() { find "$lib" "$sp/nvidia" -name "$1" -type f 2>/dev/null | head -1; }
libs="$(pick 'libcublasLt.so.13*') $(pick 'libcudnn_engines_precompiled.so.9*') $(pick 'libnccl.so.2*')"
echo "bench wheel of: $libs" | tee -a "$OUT/report.txt"
# shellcheck disable=SC2086
if [ "$(echo $libs | wc -w)" = 3 ] && "$py" bench/make-wheel.py "$bw" $libs; then
	{
		echo "== 2 cores (taskset -c 0,1): $(ls -la "$bw" | awk '{print $5}') bytes"
		for r in 1 2 3; do
			for c in "$native check --no-config --limit max_member_held=8M" "$native check --no-config --limit max_member_held=100G" "unzip -p"; do
				cat "$bw" >/dev/null
				/usr/bin/time -f "round $r: $c: %e s, peak RSS %M KB" taskset -c 0,1 $c "$bw" >/dev/null 2>/tmp/t
				tail -1 /tmp/t
			done
		done
	} 2>&1 | tee -a "$OUT/report.txt"
else
	echo "(no CUDA libraries for the bench wheel here)" | tee -a "$OUT/report.txt"
fi
