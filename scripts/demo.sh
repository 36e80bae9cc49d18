#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds wheelgate, and inspects the example wheels: the real
# corpus in ../shared/corpus/wheels when it is there, and two generated flash-attn style
# wheels (built with g++ by the test fixtures) that differ only in their C++ string ABI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
wheels=()
if [ -d ../shared/corpus/wheels ]; then
  wheels+=(../shared/corpus/wheels/*.whl)
fi
wheels+=(build/tests/fixtures/wheels/flash_attn-*.whl)
status=0
build/wheelgate inspect "${wheels[@]}" || status=$?
echo "wheelgate inspect exited with $status (0: all read, nothing wrong; 1: problems; 2: unreadable)"
