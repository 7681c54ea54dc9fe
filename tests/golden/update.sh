#!/usr/bin/env bash
# Rewrites every golden entry of tests/golden/manifest.txt with the given build's CLI.
# A golden changes only in a commit that says why (README "Golden reports").
#   tests/golden/update.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")"
cli=../../${1:-build}/cli/heapgraph
grep -v '^#' manifest.txt | while read -r name args; do
    [ -n "$name" ] && ./report.sh "$cli" . "$name" $args
done
