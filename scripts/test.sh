#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds wheelgate and runs the whole test suite.
#   scripts/test.sh              build in build/ and run ctest
#   scripts/test.sh --sanitize   the same under AddressSanitizer + UBSan, in build-asan/ (less
#                                the gate under pip 25.0/26.2.1/26.3.dev0 and the Debian
#                                corpus: labels pip, debian)
#   scripts/test.sh --release    a Release build with gcc in build-release/, then the unit suites
#   scripts/test.sh --clang      a Debug build with clang-14 in build-clang/ (every target) and
#                                the unit and threads suites
#   scripts/test.sh --tsan       ThreadSanitizer (clang-14) in build-tsan/: the threads test
#                                (the corpus on 8 threads, one shared context) and the unit suites
#   scripts/test.sh --wheel      the self-contained manylinux wheel (-DWG_PORTABLE=ON) in
#                                build-wheel/dist/, then its test (label wheel; docs/install.md)
#   scripts/test.sh --fuzz       the libFuzzer harnesses (clang-14) in build-fuzz/, each run for
#                                WG_FUZZ_SECONDS (default 60) from the seeds of the fixtures in
#                                build/ (built first when missing); any finding fails, a slow
#                                input (tests/fuzz/run.sh's limits) included
# WG_WERROR=ON in the environment (CI sets it) makes compiler warnings errors.
# CI=true in the environment (CI sets it) makes a missing ../shared or python3-jsonschema fail
# the tests that need them instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
setup=(--test)
build=build
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
tests=()
targets=()
case "$mode" in
"") ;;
--sanitize)
  build=build-asan
  flags=(-DCMAKE_BUILD_TYPE=Debug -DWG_SANITIZE=ON)
  # The gate under the other pips (label pip, about 10 minutes) tests Python glue against pip
  # versions, and the Debian corpus (label debian) pure-Python packages, not the C build: the
  # plain build runs them; pip-gate (the default pip) runs here. CI has 90 minutes in all.
  tests=(-LE '^(pip|debian)$')
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # Check forks each test; ASan needs no special treatment for that.
  ;;
--release)
  build=build-release
  flags=(-DCMAKE_BUILD_TYPE=Release)
  tests=(-L unit)
  ;;
--clang)
  setup+=(--clang)
  build=build-clang
  flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)
  # clang-14's warnings (as errors in CI) over every target, and the unit suites: the
  # integration suite runs in the plain and the ASan builds (CI has 90 minutes in all)
  tests=(-L "unit|threads")
  ;;
--wheel)
  build=build-wheel
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWG_PORTABLE=ON)
  # the wheel is built afresh (a wheel of another tag left in dist/ would be a second one)
  rm -rf "$build/dist"
  targets=(--target python-wheel)
  tests=(-L wheel)
  ;;
--fuzz)
  setup+=(--clang)
  build=build-fuzz
  flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
         -DWG_FUZZ=ON -DWG_BUILD_TESTS=OFF)
  ;;
--tsan)
  setup+=(--clang)
  build=build-tsan
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWG_TSAN=ON -DCMAKE_C_COMPILER=clang-14
         -DCMAKE_CXX_COMPILER=clang++-14)
  # A race (or a lock-order inversion) is a failure: the first report ends the run.
  # tests/threads/tsan.supp lists what is not a race (glibc's own locking), and why.
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:exitcode=66:suppressions=$PWD/tests/threads/tsan.supp}
  # fixtures: serve_reload (label threads) swaps configurations under checks of the wheels.
  targets=(--target wg_threads check_wheelgate wheelgate-cli fixtures)
  tests=(-L "threads|unit")
  ;;
*)
  echo "usage: scripts/test.sh [--sanitize | --release | --clang | --tsan | --wheel | --fuzz]" >&2
  exit 2
  ;;
esac
flags+=(-DWG_WERROR="${WG_WERROR:-OFF}")
bash scripts/setup.sh "${setup[@]}"
cmake -S . -B "$build" "${flags[@]}" >/dev/null
if [ "$mode" = --fuzz ]; then
  cmake --build "$build" -j "$(nproc)" --target \
    fuzz_wheel fuzz_elf fuzz_fatbin fuzz_rules fuzz_cache fuzz_filename fuzz_target fuzz_facts fuzz_python \
    fuzz_records fuzz_index fuzz_serve fuzz_stream fuzz_sparse
  # The seeds come from the fixtures of the normal build (g++, nvcc's prebuilt objects).
  if [ ! -f build/tests/fixtures/wheels/.stamp ] || [ ! -x build/wheelgate ]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWG_WERROR="${WG_WERROR:-OFF}" >/dev/null
    cmake --build build -j "$(nproc)" --target fixtures wheelgate-cli
  fi
  bash tests/fuzz/make-seeds.sh build/tests/fixtures "$build/seeds" build/wheelgate
  rm -rf "$build/run"
  exec bash tests/fuzz/run.sh "$build/tests/fuzz" "$build/seeds" "$build/run" \
    "${WG_FUZZ_SECONDS:-60}" "$(nproc)" 1
fi
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "${tests[@]}"
