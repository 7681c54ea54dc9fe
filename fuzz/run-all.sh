#!/usr/bin/env bash
# Runs every fuzz target in turn, SECONDS each (one process at a time: CI and this machine
# have 2 cores). Fails if any target found something.
#   fuzz/run-all.sh SECONDS [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: fuzz/run-all.sh SECONDS [BUILD_DIR]}
build=${2:-build-asan}
failed=0
fuzz/make-corpus.sh "$build" >/dev/null || exit 1
for target in hprof hprof_gz phd classic javacore snapshot; do
    fuzz/run.sh "$target" "$seconds" "$build" || failed=1
done
exit $failed
