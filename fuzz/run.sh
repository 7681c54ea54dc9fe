#!/usr/bin/env bash
# Runs one fuzz target for a time, in one process, niced, seeded from data/ (make-corpus.sh).
#   fuzz/run.sh TARGET SECONDS [BUILD_DIR]      TARGET: hprof hprof_gz phd classic javacore snapshot
# The corpus grows in BUILD_DIR/fuzz/corpus/TARGET; crashes land in BUILD_DIR/fuzz/findings/.
# Exits non-zero on a finding (crash, sanitizer report, leak, timeout, out of memory).
# FUZZ_ARGS adds libFuzzer options (FUZZ_ARGS=-runs=1000000 stops after a million executions).
# The last line gives the executions: "TARGET: N executions in S s, ...".
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: fuzz/run.sh TARGET SECONDS [BUILD_DIR]}
seconds=${2:?usage: fuzz/run.sh TARGET SECONDS [BUILD_DIR]}
build=${3:-build-asan}
binary=$build/fuzz/fuzz_$target
[ -x "$binary" ] || { echo "$binary: not built (cmake -DHEAPGRAPH_FUZZ=ON with clang)" >&2; exit 1; }
[ -d "$build/fuzz/seeds/$target" ] || fuzz/make-corpus.sh "$build" >/dev/null
corpus=$build/fuzz/corpus/$target findings=$build/fuzz/findings
mkdir -p "$corpus" "$findings"
log=$build/fuzz/$target.log
# Leaks are checked (detect_leaks), and a finding stops the run. 64 KiB inputs keep the
# executions fast; -rss_limit_mb catches a claim that allocates instead of failing.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
set +e
started=$SECONDS
nice -n 10 "$binary" "$corpus" "$build/fuzz/seeds/$target" -max_total_time="$seconds" -max_len=65536 \
    -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$findings/$target-" ${FUZZ_ARGS:-} > "$log" 2>&1
code=$?
set -e
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
echo "$target: $runs executions in $((SECONDS - started)) s, corpus $(ls "$corpus" | wc -l) inputs, exit $code (log: $log)"
if [ $code -ne 0 ]; then grep -m 5 -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" >&2 || true; fi
exit $code
