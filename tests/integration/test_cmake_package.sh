#!/usr/bin/env bash
# The installed CMake package and pkg-config file link the shared library without the -dev
# packages of its dependencies (issue 29, point 4): against a scratch install prefix, with
# pkg-config finding no other .pc file (PKG_CONFIG_LIBDIR an empty folder) and CMake finding
# neither PkgConfig nor any dependency's package (CMAKE_DISABLE_FIND_PACKAGE_*), a consumer
# configures with find_package(wheelgate), links wheelgate::wheelgate and runs; so does one
# built with `pkg-config --cflags --libs wheelgate`. The static library is the component
# "static": asked for under the same conditions it is reported missing (naming what it needs),
# and with the dependencies findable it links and runs.
# Usage: test_cmake_package.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pfx="$tmp/prefix"
cmake --install "$build" --prefix "$pfx" >/dev/null
mkdir -p "$tmp/empty"
cat > "$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <wheelgate.h>
int main(void)
{
	wg_context *ctx;
	if (wg_context_new(&ctx, NULL) < 0)
		return 2;
	printf("%s\n", wg_version_string());
	wg_context_free(ctx);
	return 0;
}
C
version=$(sed -n 's/^Version: //p' "$pfx/lib/pkgconfig/wheelgate.pc")
# A project whose find_package() sees only the prefix: no pkg-config, no dependency package.
consumer() { # DIR COMPONENTS LIBRARY
  mkdir -p "$1"
  cat > "$1/CMakeLists.txt" <<C
cmake_minimum_required(VERSION 3.21)
project(consumer C)
find_package(wheelgate 0.1 REQUIRED $2)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE $3)
C
}
bare=(-DCMAKE_PREFIX_PATH="$pfx" -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
      -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_DISABLE_FIND_PACKAGE_Threads=ON
      -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON
      -DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON -DCMAKE_DISABLE_FIND_PACKAGE_LibXml2=ON
      -DCMAKE_C_FLAGS="${CONSUMER_CFLAGS:-}")
export PKG_CONFIG_LIBDIR="$tmp/empty" PKG_CONFIG_PATH=""
consumer "$tmp/shared" "" wheelgate::wheelgate
cmake -S "$tmp/shared" -B "$tmp/shared/build" "${bare[@]}" > "$tmp/shared.log" 2>&1 ||
  { echo "the shared library's consumer does not configure without the dependencies:"; cat "$tmp/shared.log"; exit 1; }
cmake --build "$tmp/shared/build" > "$tmp/shared-build.log" 2>&1 || { cat "$tmp/shared-build.log"; exit 1; }
out=$("$tmp/shared/build/consumer")
[ "$out" = "$version" ] || { echo "cmake consumer printed: $out"; exit 1; }
# pkg-config: only wheelgate.pc is found
export PKG_CONFIG_PATH="$pfx/lib/pkgconfig"
flags=$(pkg-config --cflags --libs wheelgate) || { echo "pkg-config --cflags --libs wheelgate failed"; exit 1; }
cc -std=c99 -Wall -Werror ${CONSUMER_CFLAGS:-} -o "$tmp/by-pkgconfig" "$tmp/consumer.c" $flags -Wl,-rpath,"$pfx/lib"
[ "$("$tmp/by-pkgconfig")" = "$version" ] || { echo "pkg-config consumer failed"; exit 1; }
# The static component without its dependencies: not found, saying what it needs.
export PKG_CONFIG_PATH=""
consumer "$tmp/static-bare" "COMPONENTS static" wheelgate::wheelgate_static
if cmake -S "$tmp/static-bare" -B "$tmp/static-bare/build" "${bare[@]}" > "$tmp/static-bare.log" 2>&1; then
  echo "the static component was found without its dependencies"; exit 1
fi
grep -q "wheelgate::wheelgate_static needs" "$tmp/static-bare.log" ||
  { echo "the static component's failure does not say what it needs:"; cat "$tmp/static-bare.log"; exit 1; }
# ... and with them (the system's pkg-config files): it links and runs.
unset PKG_CONFIG_LIBDIR
consumer "$tmp/static" "COMPONENTS static" wheelgate::wheelgate_static
cmake -S "$tmp/static" -B "$tmp/static/build" -DCMAKE_PREFIX_PATH="$pfx" \
  -DCMAKE_C_FLAGS="${CONSUMER_CFLAGS:-}" > "$tmp/static.log" 2>&1 || { cat "$tmp/static.log"; exit 1; }
cmake --build "$tmp/static/build" > "$tmp/static-build.log" 2>&1 || { cat "$tmp/static-build.log"; exit 1; }
[ "$("$tmp/static/build/consumer")" = "$version" ] || { echo "static consumer failed"; exit 1; }
if readelf -d "$tmp/static/build/consumer" | grep -q 'libwheelgate\.so'; then
  echo "the static consumer links libwheelgate.so"; exit 1
fi
echo "cmake package: the shared library links with no dependency findable (find_package and pkg-config); the static component asks for them"
