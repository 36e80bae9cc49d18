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
# The public header and every part of it (lib/include/wheelgate/*.h) are installed as they are.
inc=$(cd "$(dirname "$0")/../../lib/include" && pwd)
for h in "$inc"/wheelgate.h "$inc"/wheelgate/*.h; do
  cmp -s "$h" "$pfx/include/${h#"$inc"/}" || { echo "not installed as it is: include/${h#"$inc"/}"; exit 1; }
done
grep -q "string ABI  new" <<<"$("$pfx/bin/wheelgate" inspect --symbols=none "$wheel")"
# The CLI's helpers (docs/startup.md) are installed where it finds them: `check` reads
# [tool.wheelgate] from ./pyproject.toml through the TOML module, and `serve` runs the
# service's executable, which answers a check over HTTP and stops cleanly on SIGTERM.
for h in wheelgate-serve wheelgate-toml.so wheelgate-fetch.so; do
  [ -f "$pfx/libexec/wheelgate/$h" ] || { echo "not installed: libexec/wheelgate/$h"; exit 1; }
done
mkdir "$tmp/proj"
printf '[tool.wheelgate]\nformat = "json"\n' > "$tmp/proj/pyproject.toml"
out=$(cd "$tmp/proj" && "$pfx/bin/wheelgate" check "$wheel" 2>/dev/null || true)
python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert d, d' <<<"$out" ||
  { echo "installed check did not apply pyproject.toml's format = \"json\": $out"; exit 1; }
# The log exists before the server starts (the background job opens it in its own time), its
# stdout is not this script's (an orphan would hold ctest's pipe open), and it is killed
# whatever way this script ends.
: > "$tmp/serve.err"
"$pfx/bin/wheelgate" serve --listen 127.0.0.1:0 >/dev/null 2>"$tmp/serve.err" &
srv=$!
trap 'kill -KILL "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
port=
for _ in $(seq 1 300); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/serve.err" || true)
  [ -n "$port" ] && break
  kill -0 "$srv" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { kill "$srv" 2>/dev/null; echo "installed serve did not start: $(cat "$tmp/serve.err")"; exit 1; }
code=$(python3 - "$port" "$wheel" "$tmp/served.json" <<'PY'
import os, sys, urllib.error, urllib.parse, urllib.request
port, wheel, out = sys.argv[1:]
url = "http://127.0.0.1:%s/v1/check?filename=%s" % (port, urllib.parse.quote(os.path.basename(wheel)))
try:
    with urllib.request.urlopen(urllib.request.Request(url, data=open(wheel, "rb").read()), timeout=60) as r:
        code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
open(out, "wb").write(body)
print(code)
PY
) || code=request-failed
kill -TERM "$srv"
rc=0; wait "$srv" || rc=$?
[ "$code" = 200 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["inputs"], d' "$tmp/served.json" ||
  { echo "installed serve: HTTP $code: $(head -c 1000 "$tmp/served.json")"; cat "$tmp/serve.err"; exit 1; }
[ "$rc" = 0 ] || { echo "installed serve exited $rc after SIGTERM"; cat "$tmp/serve.err"; exit 1; }
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
echo "install: CLI (check with pyproject.toml, serve), pkg-config and find_package consumers, and the Python binding work"
