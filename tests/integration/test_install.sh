#!/usr/bin/env bash
# Installs the build into a scratch prefix and checks that it can be used from there:
# the installed CLI runs, and a C program builds against it both through pkg-config and
# through CMake's find_package(wheelgate), then reads a wheel.
# Usage: test_install.sh BUILD_DIR WHEEL
set -euo pipefail
build=$1
wheel=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pfx="$tmp/prefix"
cmake --install "$build" --prefix "$pfx" >/dev/null
"$pfx/bin/wheelgate" inspect --symbols=none "$wheel" | grep -q "string ABI  new"
cat > "$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <wheelgate.h>
int main(int argc, char **argv)
{
	wg_context *ctx;
	wg_scanner *sc;
	wg_scan *scan;
	if (wg_context_new(&ctx, NULL) < 0 || wg_scanner_new(&sc, ctx) < 0)
		return 2;
	if (wg_scan_path(&scan, sc, argv[1]) < 0) {
		fprintf(stderr, "%s\n", wg_scanner_error(sc));
		return 2;
	}
	wg_object_info oi = WG_OBJECT_INFO_INIT;
	wg_object_get_info(&oi, wg_scan_object(scan, 0));
	printf("%s %s %s\n", wg_version_string(), oi.module, wg_string_abi_name(oi.torch_abi));
	wg_scan_free(scan);
	wg_scanner_free(sc);
	wg_context_free(ctx);
	(void)argc;
	return 0;
}
C
export PKG_CONFIG_PATH="$pfx/lib/pkgconfig"
# CONSUMER_CFLAGS: a sanitizer build's library needs consumers built with the same runtime.
cflags=${CONSUMER_CFLAGS:-}
cc -std=c99 -Wall -Werror $cflags -o "$tmp/by-pkgconfig" "$tmp/consumer.c" \
  $(pkg-config --cflags --libs wheelgate) -Wl,-rpath,"$pfx/lib"
out=$("$tmp/by-pkgconfig" "$wheel")
[ "$out" = "$(pkg-config --modversion wheelgate) flash_attn_2_cuda new" ] || { echo "pkg-config consumer: $out"; exit 1; }
mkdir -p "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.21)
project(consumer C)
find_package(wheelgate 0.1 REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE wheelgate::wheelgate)
C
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$pfx" -DCMAKE_C_FLAGS="$cflags" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
out=$("$tmp/cm/build/consumer" "$wheel")
case "$out" in *"flash_attn_2_cuda new") ;; *) echo "cmake consumer: $out"; exit 1 ;; esac
# The Python binding, installed, finds the installed library without WHEELGATE_LIB.
site=$(find "$pfx" -type d -name wheelgate -path "*packages/wheelgate" | head -n 1)
[ -n "$site" ] || { echo "the Python binding was not installed"; find "$pfx" -maxdepth 5 -type d; exit 1; }
libpath=$(env -u WHEELGATE_LIB PYTHONPATH="$(dirname "$site")" python3 -c \
  'import wheelgate; print(wheelgate.library_path())')
[ "$libpath" = "$pfx/lib/libwheelgate.so.0" ] || { echo "binding found: $libpath"; exit 1; }
echo "install: CLI, pkg-config and find_package consumers, and the Python binding work"
