#!/usr/bin/env bash
# A relocatable copy of the built wheelgate CLI for a machine that lacks its libraries (the GPU
# machine: Ubuntu 24.04, glibc 2.39, no libbfd/libzip/libyaml/jansson/PCRE2/libcsv...):
# OUT_DIR/wheelgate with RUNPATH $ORIGIN/lib, and in OUT_DIR/lib libwheelgate.so.0 and every
# library ldd resolves for them except the C/C++ runtime, which the target system provides
# (newer there), each with RUNPATH $ORIGIN and its debug info stripped.
# Then proves that the copy runs with an empty LD_LIBRARY_PATH and that ldd resolves every
# library it copied from OUT_DIR/lib.
# Usage: bench/real-env/bundle.sh BUILD_DIR OUT_DIR
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
build=$1 out=$2
bin="$build/wheelgate"
[ -x "$bin" ] || { echo "bundle: $bin not found: build wheelgate first" >&2; exit 2; }
for t in patchelf ldd strip; do
	command -v "$t" >/dev/null || {
		echo "bundle: needs $t (apt-get install patchelf binutils)" >&2; exit 2; }
done

# The C/C++ runtime stays the target system's: copying it would mix two glibcs in one process.
runtime='^(linux-vdso|libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so'

rm -rf "$out"
mkdir -p "$out/lib"
cp -L "$bin" "$out/wheelgate"
# ldd of the binary already walks libwheelgate.so.0 and everything below it.
copied=()
while read -r name path; do
	[[ $name =~ $runtime ]] && continue
	[ -f "$path" ] || { echo "bundle: ldd could not resolve $name for $bin" >&2; exit 1; }
	cp -L "$path" "$out/lib/$name"
	copied+=("$name")
done < <(LD_LIBRARY_PATH= ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }
	$2 == "=>" && $3 == "not" { print $1, "MISSING" }')

chmod u+w "$out/wheelgate" "$out"/lib/*
strip --strip-debug "$out/wheelgate" "$out"/lib/*
patchelf --set-rpath '$ORIGIN/lib' "$out/wheelgate"
for f in "$out"/lib/*; do
	patchelf --set-rpath '$ORIGIN' "$f"
done

# Proof: nothing but the runtime comes from outside the bundle, and the copy runs.
abs=$(cd "$out" && pwd)
bad=$(env -u LD_LIBRARY_PATH ldd "$abs/wheelgate" | awk -v lib="$abs/lib/" -v rt="$runtime" '
	$2 == "=>" { n = $1; p = $3 } $2 != "=>" { next }
	p == "not" { print n " not found"; next }
	n ~ rt { next }
	index(p, lib) != 1 { print n " => " p }')
[ -z "$bad" ] || { echo "bundle: resolved outside $abs/lib:" >&2; echo "$bad" >&2; exit 1; }
for name in "${copied[@]}"; do
	env -u LD_LIBRARY_PATH ldd "$abs/lib/$name" | grep -q 'not found' && {
		echo "bundle: $name has an unresolved library" >&2; exit 1; }
done
env -u LD_LIBRARY_PATH "$abs/wheelgate" --version >/dev/null
env -u LD_LIBRARY_PATH "$abs/wheelgate" check --self-test >/dev/null
echo "bundle: $abs: wheelgate + ${#copied[@]} libraries ($(du -sh "$abs" | cut -f1))," \
     "runs with an empty LD_LIBRARY_PATH"
printf '  %s\n' "${copied[@]}"
