#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root, apt reachable):
#   ./quickstart.sh sample   install packages, build, analyse data/samples/leakdemo.hprof -> report.json
#   ./quickstart.sh test     install packages, build with tests, run the whole suite through ctest;
#                            then again under ASan + UBSan, and each fuzz target briefly
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential cmake ninja-build pkg-config libtbb-dev libboost-graph-dev
          nlohmann-json3-dev doctest-dev libbenchmark-dev libdeflate-dev zlib1g-dev libcli11-dev
          libxxhash-dev)
# The test suite also loads the HTML report in a headless browser (tests/reports/html_browser_test.cpp);
# clang builds the sanitizer tree and the fuzz targets (docs/hardening.md); python3 checks the
# HPROF replicator's reports (tests/bench/replicate_test.sh).
test_packages=(chromium fonts-dejavu-core clang libclang-rt-14-dev python3)

install_packages() {  # install_packages [more packages]
    local all=("${packages[@]}" "$@")
    if dpkg -s "${all[@]}" >/dev/null 2>&1; then return; fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${all[@]}" >/dev/null
}

# A unity build (each target's files compiled in batches of 8) halves a clean build here: the
# headers are parsed once a batch, not once a file (docs/hardening.md, "Where CI's time goes").
build() {  # build DIR [cmake options]
    local dir=$1; shift
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON "$@" >/dev/null
    cmake --build "$dir"
}

case "${1:-}" in
    sample)
        install_packages
        build build-release
        ./build-release/cli/heapgraph analyze data/samples/leakdemo.hprof --json report.json
        echo "wrote report.json"
        ;;
    test)
        install_packages "${test_packages[@]}"
        build build-test -DHEAPGRAPH_DEVELOPER=ON
        ctest --test-dir build-test --output-on-failure -j "$(nproc)"
        # The whole suite again under ASan + UBSan (any report fails its test), then each
        # fuzz target for a minute (docs/hardening.md). The chromium cases are the Release
        # suite's: the browser is not instrumented, and the pages they load are made under the
        # sanitizers by the golden tests.
        CC=clang CXX=clang++ build build-asan -DHEAPGRAPH_DEVELOPER=ON -DHEAPGRAPH_FUZZ=ON -DCMAKE_CXX_FLAGS=-gline-tables-only
        ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -E '^html report in chromium: '
        fuzz/run-all.sh 60 build-asan
        ;;
    *)
        echo "usage: $0 sample|test" >&2
        exit 1
        ;;
esac
