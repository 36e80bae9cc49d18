#!/usr/bin/env bash
# Installs what wheelgate needs to build and test on Debian 12 (bookworm), idempotently:
# only missing packages are installed, and apt's lists are refreshed only when needed.
# Usage: scripts/setup.sh [--test] [--clang]   (--test adds what the test suite needs,
# --clang the clang-14 compiler that CI builds with too)
set -euo pipefail
test=false clang=false
for a in "$@"; do
  case "$a" in
  --test) test=true ;;
  --clang) clang=true ;;
  *) echo "usage: scripts/setup.sh [--test] [--clang]" >&2; exit 2 ;;
  esac
done

pkgs=(build-essential cmake pkg-config
      libzip-dev binutils-dev libiberty-dev libpcre2-dev libyaml-dev libjansson-dev
      libssl-dev libcsv-dev libzstd-dev liblz4-dev libtomlplusplus-dev zlib1g-dev
      libmicrohttpd-dev libcurl4-openssl-dev libdeflate-dev libxml2-dev
      libisal-dev) # libisal-dev: ISA-L's igzip, members inflated as streams (input/zip_stream.c)
if $test; then
  # Check for the unit tests; g++ builds the ABI fixtures; python3 generates wheel fixtures
  # and runs the CLI tests; python3-jsonschema validates JSON output; zip/unzip for the
  # benchmark; binutils (nm, readelf) is the independent reader the tests compare with;
  # patchelf rewrites ELF fixtures the way auditwheel does;
  # python3-venv, -setuptools and -wheel give the pip gate's tests a real pip 23 and an
  # offline sdist build; twine, python3-passlib (pypiserver's htpasswd) and python3-pip
  # upload through `wheelgate serve` to a real repository and install from it;
  # nodejs/npm (tsc is installed by the test into the build tree), groovy with a JRE and
  # systemd (systemd-analyze) run the docs/integrations examples (ctest integrations).
  pkgs+=(check g++ python3 python3-jsonschema zip unzip binutils patchelf time bc
         python3-venv python3-setuptools python3-wheel twine python3-passlib python3-pip
         nodejs npm groovy default-jre-headless systemd)
  # zstd: the fuzzers' seeds decompress stored facts (tests/fuzz/make-seeds.sh)
  pkgs+=(zstd)
  # wrk: the load benchmark of wheelgate serve (bench/serve.sh)
  pkgs+=(wrk)
  # python3-mypy: the Python binding's type hints are checked (--strict, and through py.typed
  # from an installed wheel) by ctest python-package
  pkgs+=(python3-mypy)
  # python3-dask and python3-distributed: wheelgate.dask's scans on a LocalCluster (ctest dask);
  # python3-matplotlib: the charts of wheelgate.report's HTML page
  pkgs+=(python3-dask python3-distributed python3-matplotlib)
  # ctest debian (tests/debian): Debian's own pure python3-* packages repacked into wheels
  # need at least 80 of them; the lines above pull in 65 on a fresh Debian 12 (python3-sympy
  # among them, named here as the example), these and the 25 packages they pull in
  # (23 pure python3-* ones: IPython's, Sphinx's, pytest's, Flask's) make it 95. Which of
  # the installed packages are judged is tests/debian/repack.py's rule, not this list.
  # (32 packages, 10 MB to download; apt-get install from apt's cache took 100 s, 40 s of
  # CPU, on a busy 2-core machine.)
  pkgs+=(python3-sympy python3-patsy python3-ipython python3-sphinx python3-pytest
         python3-flask python3-networkx python3-hypothesis)
fi
if $clang; then
  # libclang-rt-14-dev: the sanitizer and libFuzzer runtimes (tests/fuzz, scripts/test.sh --fuzz)
  pkgs+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${pkgs[@]}"; do
  # A Node.js that brings its own npm (NodeSource's nodejs package, which conflicts with
  # Debian's npm) does the job: Debian's nodejs and npm are only wanted when there is none.
  case $p in nodejs|npm) command -v node >/dev/null && command -v npm >/dev/null && continue ;; esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
