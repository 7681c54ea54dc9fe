#!/usr/bin/env bash
# bench/estimate.sh DUMP... : `heapgraph estimate` beside the peak RSS `analyze --json` reaches
# (from --timings), one line per dump, and their ratio. Used to fit analysis/estimate.cpp.
set -euo pipefail
HG=${HEAPGRAPH:-$(dirname "$0")/../build/cli/heapgraph}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "%-48s %10s %10s %12s %12s %12s %6s\n" dump objects refs scan_peak estimate measured ratio
for dump in "$@"; do
    "$HG" estimate "$dump" > "$out/e.json"
    "$HG" analyze "$dump" --json "$out/r.json" --timings --progress=never > /dev/null 2>&1
    python3 - "$dump" "$out/e.json" "$out/r.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[2])); r = json.load(open(sys.argv[3]))
peak = max(t["peak_rss_bytes"] for t in r["timings"])
print("%-48s %10d %10d %12d %12d %12d %6.2f" % (sys.argv[1][-48:], e["objects"], e["references"], e["scan_peak_rss_bytes"], e["memory_bytes"], peak,
                                            e["memory_bytes"] / peak))
PY
done
