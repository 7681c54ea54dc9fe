#!/usr/bin/env bash
# Runs every fuzz target for SECONDS, as many at a time as the machine has cores (each
# target is one process; CI and this machine have 2 cores, so 6 targets take 3 x SECONDS).
# Fails if any target found something.
#   fuzz/run-all.sh SECONDS [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: fuzz/run-all.sh SECONDS [BUILD_DIR]}
build=${2:-build-asan}
fuzz/make-corpus.sh "$build" >/dev/null || exit 1
# xargs exits non-zero when any run.sh did; each prints its own one-line summary.
printf '%s\n' hprof hprof_gz phd classic javacore snapshot |
    xargs -P "$(nproc)" -I{} fuzz/run.sh {} "$seconds" "$build"
