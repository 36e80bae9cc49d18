#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds wheelgate, and inspects and checks the example wheels: the real
# corpus in ../shared/corpus/wheels when it is there, and two generated flash-attn style
# wheels (built with g++ by the test fixtures) that differ only in their C++ string ABI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
# The build's own output goes to a log, shown only when the build fails.
log=build/demo-build.log
mkdir -p build
echo "demo: building wheelgate in build/ (log: $log)"
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build -j "$(nproc)"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "demo: the build failed; the whole log is $log" >&2
  exit 1
fi
echo "demo: built build/wheelgate"
echo
wheels=()
if [ -d ../shared/corpus/wheels ]; then
  wheels+=(../shared/corpus/wheels/*.whl)
fi
wheels+=(build/tests/fixtures/wheels/flash_attn-*.whl)
status=0
build/wheelgate inspect --symbols=none --gpu H100 "${wheels[@]}" || status=$?
echo "wheelgate inspect exited with $status (0: all read, nothing wrong; 1: problems; 2: unreadable)"
echo
echo "== wheelgate check, for the GPU machine the corpus ran on (Ubuntu 24.04: glibc 2.39,"
echo "   GLIBCXX 3.4.33; torch 2.11.0+cu130, C++11 ABI, H200):"
status=0
build/wheelgate check --no-config \
  --target python=3.12,torch=2.11.0+cu130,cxx11abi=1,cuda=13.0,glibc=2.39,glibcxx=3.4.33 \
  --gpu H200 "${wheels[@]}" || status=$?
echo "wheelgate check exited with $status (0: nothing blocks; 1: a blocking finding; 2: unreadable)"
