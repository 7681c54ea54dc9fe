#!/usr/bin/env bash
# bench/classic.sh [DUMP] [WORKDIR=/tmp/heapgraph-e2e]
#
# Classic text parsing speed, 1 thread against 2 (issue: a classic file of at least 1 GB should
# parse at close to 2x the one-thread speed with 2 threads).
#
#  1. Converts DUMP (default: the 200 MB BigHeap dump bench/e2e.sh makes; run `bench/e2e.sh 200`
#     first) to WORKDIR/<name>.classic.txt once, with `heapgraph convert --to classic`.
#  2. Runs `heapgraph analyze` on it RUNS times per thread count with --timings and prints, per
#     run, the decode stage (split + parallel parse + trailer check) in MB/s, the whole load in
#     MB/s, wall time and peak RSS; then the median decode speed-up of 2 threads over 1. The
#     file is read once first, so that every run finds it in the page cache.
#
# Environment: HEAPGRAPH (default <repo>/build-release/cli/heapgraph), RUNS (default 3).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORKDIR=${2:-/tmp/heapgraph-e2e}
DUMP=${1:-$WORKDIR/bigheap-200m.hprof}
RUNS=${RUNS:-3}
HEAPGRAPH=${HEAPGRAPH:-$REPO/build-release/cli/heapgraph}

if [[ ! -x $HEAPGRAPH ]]; then
  cmake -S "$REPO" -B "$REPO/build-release" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$REPO/build-release" heapgraph >/dev/null
fi
[[ -f $DUMP ]] || { echo "no dump $DUMP: run bench/e2e.sh 200 first, or name one" >&2; exit 1; }

CLASSIC=$WORKDIR/$(basename "${DUMP%%.*}").classic.txt
if [[ ! -f $CLASSIC || $CLASSIC -ot $DUMP ]]; then
  echo "converting $DUMP -> $CLASSIC"
  "$HEAPGRAPH" convert "$DUMP" --to classic -o "$CLASSIC"
fi
BYTES=$(stat -c %s "$CLASSIC")
printf 'classic file: %s, %.1f MB\n' "$CLASSIC" "$(echo "$BYTES / 1000000" | bc -l)"

# Read the file once so that no run pays for the disk.
cat "$CLASSIC" > /dev/null
declare -A DECODE
for threads in 1 2; do
  for run in $(seq "$RUNS"); do
    json=$WORKDIR/classic-t$threads-$run.json
    /usr/bin/time -f '%e %M' -o "$json.time" \
      "$HEAPGRAPH" analyze "$CLASSIC" --threads "$threads" --timings --progress never --json "$json" 2>/dev/null
    read -r wall rss_kb < "$json.time"
    read -r frame decode graph < <(python3 - "$json" <<'PY'
import json, sys
t = {s["stage"]: s["seconds"] for s in json.load(open(sys.argv[1]))["timings"]}
print("%.6f %.6f %.6f" % (t.get("frame", 0), t.get("decode", 0), t.get("graph", 0)))
PY
)
    DECODE[$threads]+="$decode "
    printf 'threads %s run %s: decode %.2f s = %.0f MB/s; load %.2f s = %.0f MB/s; wall %.2f s; peak RSS %.0f MB\n' \
      "$threads" "$run" "$decode" "$(echo "$BYTES / 1000000 / $decode" | bc -l)" \
      "$(echo "$frame + $decode + $graph" | bc -l)" "$(echo "$BYTES / 1000000 / ($frame + $decode + $graph)" | bc -l)" \
      "$wall" "$(echo "$rss_kb / 1024" | bc -l)"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
one=$(echo "${DECODE[1]}" | median)
two=$(echo "${DECODE[2]}" | median)
printf 'median decode: 1 thread %.2f s, 2 threads %.2f s: speed-up %.2fx (nproc %s)\n' "$one" "$two" \
  "$(echo "$one / $two" | bc -l)" "$(nproc)"
