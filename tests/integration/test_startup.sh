#!/usr/bin/env bash
# The CLI loads only what it uses (docs/startup.md): check, inspect, env, gpus, --version and
# --help never load the service's libraries (libmicrohttpd, libcurl, gnutls, libxml2) nor toml++ and
# libstdc++; reading a pyproject.toml loads the TOML module (and then toml++ and libstdc++),
# and `wheelgate serve` runs the service's own executable. The loaded objects are the dynamic
# loader's own list (LD_DEBUG=files).
# Usage: test_startup.sh WHEELGATE WHEEL
set -euo pipefail
wg=$(realpath "$1")
wheel=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# What the executable itself needs, as linked.
needed=$(readelf -d "$wg" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || fail "readelf found no NEEDED entries in $wg"
for lib in libstdc++ libtomlplusplus libmicrohttpd libcurl libxml2; do
  ! grep -q "^$lib" <<<"$needed" || fail "$wg links $lib: $needed"
done

# The objects the loader maps for one run, in directory $1, of wheelgate "${@:2}".
loaded() {
  (cd "$1" && LD_DEBUG=files "$wg" "${@:2}" 2>&1 >/dev/null) |
    sed -n 's/.*file=\([^ ]*\) \[0\];  generating link map.*/\1/p; s/.*file=\([^ ]*\) \[0\];  dynamically loaded.*/\1/p' |
    sort -u
}
# libstdc++ may be in the executable's own closure for a reason of the build's (UBSan's
# runtime needs it): then only toml++ and the module tell the TOML reader was not loaded.
never="libmicrohttpd libcurl libgnutls libnettle libtomlplusplus libxml2 libicuuc wheelgate-toml wheelgate-serve wheelgate-fetch"
# (ldd's whole output first: `ldd | grep -q` under pipefail fails when grep exits before
# ldd has written everything, and ldd dies of SIGPIPE.)
closure=$(ldd "$wg")
if grep -q 'libstdc++' <<<"$closure"; then
  echo "note: libstdc++ is in $wg's own closure ($(grep -o '^[[:space:]]*lib[a-z]*san[^ ]*' <<<"$closure" | tr -d '\t' | tr '\n' ' ')): not asserted absent"
else
  never="$never libstdc++"
fi
mkdir "$tmp/plain"
count=0
for args in "--version" "--help" "gpus" "inspect --symbols=none $wheel" "check $wheel"; do
  # shellcheck disable=SC2086
  objs=$(loaded "$tmp/plain" $args)
  [ -n "$objs" ] || fail "LD_DEBUG=files listed nothing for 'wheelgate $args'"
  grep -q libwheelgate <<<"$objs" || fail "'wheelgate $args': libwheelgate not among the loaded objects: $objs"
  for lib in $never; do
    ! grep -q "$lib" <<<"$objs" || fail "'wheelgate $args' loaded $lib: $objs"
  done
  n=$(wc -l <<<"$objs")
  [ "$args" = "--version" ] && count=$n
done
echo "wheelgate --version loads $count shared objects"

# With [tool.wheelgate] in ./pyproject.toml, check loads the module and obeys it.
mkdir "$tmp/toml"
printf '[tool.wheelgate]\nformat = "json"\n' > "$tmp/toml/pyproject.toml"
objs=$(loaded "$tmp/toml" check "$wheel")
for lib in wheelgate-toml libtomlplusplus libstdc++; do
  grep -q "$lib" <<<"$objs" || fail "check with a pyproject.toml did not load $lib: $objs"
done
out=$(cd "$tmp/toml" && "$wg" check "$wheel" 2>/dev/null || true)
python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$out" ||
  fail "pyproject.toml's format = \"json\" was not applied: $out"
# A pyproject.toml that is not TOML is an error naming the file and the place.
printf '[tool.wheelgate\n' > "$tmp/toml/pyproject.toml"
rc=0; err=$(cd "$tmp/toml" && "$wg" check "$wheel" 2>&1 >/dev/null) || rc=$?
[ "$rc" = 2 ] && grep -q "pyproject.toml:1:" <<<"$err" || fail "a broken pyproject.toml: rc $rc, $err"

# wheelgate serve runs wheelgate-serve, and only serve loads the service's libraries.
raw=$(cd "$tmp/plain" && LD_DEBUG=files "$wg" serve --help 2>&1 >/dev/null)
# (the CLI does not link libmicrohttpd: readelf above, and no other command loaded it)
grep -q "file=libmicrohttpd" <<<"$raw" ||
  fail "'wheelgate serve --help' did not run the service's executable: $(tail -c 2000 <<<"$raw")"
# Without its helpers beside it (or in ../libexec/wheelgate), the CLI says where it looked.
mkdir "$tmp/alone"
cp "$wg" "$tmp/alone/wheelgate"
rc=0; err=$("$tmp/alone/wheelgate" serve --help 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -q "looked for $tmp/alone/../libexec/wheelgate/wheelgate-serve or $tmp/alone/wheelgate-serve" <<<"$err" ||
  fail "serve without wheelgate-serve: rc $rc, $err"
printf '[tool.wheelgate]\nformat = "json"\n' > "$tmp/alone/pyproject.toml"
rc=0; err=$(cd "$tmp/alone" && ./wheelgate check "$wheel" 2>&1 >/dev/null) || rc=$?
[ "$rc" = 2 ] && grep -q "TOML module, which is missing: looked for $tmp/alone/" <<<"$err" ||
  fail "check without the TOML module: rc $rc, $err"
echo "startup: check, inspect, gpus, --version and --help load neither the service nor toml++;" \
  "pyproject.toml and serve load theirs"
