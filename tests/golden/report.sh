#!/usr/bin/env bash
# Writes one golden entry: OUT/NAME.json (the JSON report, no timings) and OUT/NAME.digests
# (SHA-256 of the HTML page, the objects TSV and the --save snapshot of the same run).
#   tests/golden/report.sh HEAPGRAPH OUT NAME ARGS...
# ARGS are analyze's, run in data/ so that the report's dump path is relative; "@classic
# VARIANT DUMP" first converts DUMP to classic text in a scratch directory and analyses that.
set -euo pipefail
cli=$(realpath "$1") out=$(realpath "$2") name=$3
shift 3
cd "$(dirname "$0")/../../data"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ "$1" = "@classic" ]; then
    converted=$(basename "$3").$2.txt
    "$cli" convert "$3" --variant "$2" -o "$scratch/$converted" 2>/dev/null
    shift 3
    cd "$scratch"
    set -- "$converted" "$@"
fi
mkdir -p "$(dirname "$out/$name")"
"$cli" analyze "$@" --quiet --json "$out/$name.json" --html "$scratch/r.html" \
    --objects-tsv "$scratch/r.tsv" --save "$scratch/r.snapshot"
for kind in html tsv snapshot; do
    echo "$kind $(sha256sum < "$scratch/r.$kind" | cut -d' ' -f1)"
done > "$out/$name.digests"
