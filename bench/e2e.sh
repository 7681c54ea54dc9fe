#!/usr/bin/env bash
# bench/e2e.sh [SIZE_MB=2048] [WORKDIR=/tmp/heapgraph-e2e]
#
# End-to-end benchmark of heapgraph on a large, realistic HotSpot heap dump.
#
#  1. Generates (once) a heap with data/gen/BigHeap.java sized for a ~SIZE_MB dump, and takes
#       WORKDIR/bigheap-<SIZE_MB>m.hprof      jcmd <pid> GC.heap_dump -all
#       WORKDIR/bigheap-<SIZE_MB>m.hprof.gz   jcmd <pid> GC.heap_dump -all -gz=1 (multi-member gzip)
#     plus the marker WORKDIR/bigheap-<SIZE_MB>m.done; when the marker matches (size, hash of
#     BigHeap.java and the byte counts of both dumps), generation is skipped on re-runs.
#     With REPLICA=N it also writes (once; again when the plain dump is newer)
#       WORKDIR/bigheap-<SIZE_MB>m-x<N>.hprof  N copies of every object of the plain dump, made by
#                                              bench/replicate_hprof.cpp (classes once, ids shifted)
#     for sizes one JVM cannot conveniently dump (2 GB x8 = 17 GB; it needs that much free disk).
#  2. Runs `heapgraph analyze DUMP --json OUT --timings --progress=never --threads N` RUNS times
#     on each dump (plain, gz, and the replica if any) under /usr/bin/time -v: wall, MB/s, peak
#     RSS, RSS/dump ratio, median wall, and the "timings" object of the JSON report (if the
#     binary writes one).
#  3. If Debian's visualvm package is installed (/usr/share/visualvm), runs the VisualVM 2.1.5
#     peer (/work/shared/peers/visualvm/run.sh) once on the plain dump and prints its wall time,
#     peak RSS and the VisualVM/heapgraph ratios.
#
# Environment:
#   HEAPGRAPH   heapgraph binary (default <repo>/build-release/cli/heapgraph; built with
#               cmake -G Ninja -DCMAKE_BUILD_TYPE=Release if that default is missing);
#               .../cli/heapgraph-wide beside it benchmarks the 64-bit node ids build
#   THREADS     --threads for heapgraph (default: nproc)
#   RUNS        heapgraph runs per dump (default 3)
#   BIGHEAP_JAVA_OPTS  JVM flags of the generator (default "-Xms10g -Xmx10g -Xmn2g -XX:+UseParallelGC
#               -XX:-UseAdaptiveSizePolicy -XX:-ResizeTLAB -XX:TLABSize=256k"; ~4 GB RSS for 2 GB)
#   PEER=0      skip the VisualVM peer;  PEER_DIR (default /work/shared/peers/visualvm)
#   PEER_XMX (default 8g), PEER_SCRATCH (default WORKDIR/peer), PEER_OPTS: passed to run.sh.
#               G1 grows the peer's heap to PEER_XMX whatever it needs (its dominator phase
#               allocates fast; old gen < 1 GB for the 2 GB dump): with 16g the peer reached
#               21 GB RSS on the 2 GB dump, so its RSS mostly reflects PEER_XMX.
#   PEER_TIMEOUT  seconds before the peer is stopped (default 0 = no limit). VisualVM's
#               dominator phase is slow on this heap: ~6 min for the 200 MB dump, still
#               unfinished after 27 min (when it was stopped) for the 2 GB one.
#   REGEN=1     regenerate the dumps even if the marker matches
#   MEMORY_LIMIT=SIZE  passes --memory-limit SIZE (graph columns past it go to files under
#               --temp-dir; docs/pipeline.md, "Column storage"); default: heapgraph's own
#   REPLICA=N   also benchmark an N-times replica of the plain dump (N >= 2; default: none).
#               Copies k >= 1 share copy 0's classes, and static fields point into copy 0, so
#               what only statics hold is unreachable in the copies: BigHeap's 256 MB dump x2
#               reaches 1.2x, not 2x, the bytes. REPLICA_ROOTS=1 passes --root-class-refs (each
#               copy roots what the classes refer to: reachable bytes then scale N-fold) and
#               writes bigheap-<SIZE_MB>m-x<N>-rooted.hprof instead.
#   REPLICATE   replicate_hprof binary (default: target replicate_hprof of build-release when
#               that build dir has it, else compiled from bench/replicate_hprof.cpp with ${CXX:-c++}
#               into WORKDIR/bin)
set -euo pipefail

SIZE_MB=${1:-2048}
WORKDIR=${2:-/tmp/heapgraph-e2e}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-3}
THREADS=${THREADS:-$(nproc)}
# Fixed generation sizes: a big old generation, so that no GC after BigHeap's final System.gc()
# can be a full GC (that would collect the deliberate garbage before the dumps). Fixed 256k
# TLABs: adaptive TLABs end up ~100 MB, dumped as huge unreachable int[] fillers.
BIGHEAP_JAVA_OPTS=${BIGHEAP_JAVA_OPTS:--Xms10g -Xmx10g -Xmn2g -XX:+UseParallelGC -XX:-UseAdaptiveSizePolicy -XX:-ResizeTLAB -XX:TLABSize=256k}
PEER_DIR=${PEER_DIR:-/work/shared/peers/visualvm}

[[ $SIZE_MB =~ ^[0-9]+$ ]] || { echo "usage: $0 [SIZE_MB=2048] [WORKDIR=/tmp/heapgraph-e2e]" >&2; exit 2; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive integer" >&2; exit 2; }
[[ -z ${REPLICA:-} || $REPLICA =~ ^[1-9][0-9]*$ ]] || { echo "REPLICA must be a positive integer" >&2; exit 2; }
mkdir -p "$WORKDIR"
WORKDIR=$(cd "$WORKDIR" && pwd)

NAME=bigheap-${SIZE_MB}m
PLAIN=$WORKDIR/$NAME.hprof
GZ=$WORKDIR/$NAME.hprof.gz
MARK=$WORKDIR/$NAME.done
SRC_SHA=$(sha256sum "$REPO/data/gen/BigHeap.java" | cut -c1-16)

hr() { printf '%s\n' "------------------------------------------------------------------------------"; }
fsize() { stat -c %s "$1"; }
mb() { python3 -c "import sys; print(f'{int(sys.argv[1]) / 1048576:.1f}')" "$1"; }
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }
# marker_get KEY -> value from the marker file
marker_get() { sed -n "s/^$1=//p" "$MARK" 2>/dev/null | head -1; }

# ---------------------------------------------------------------------------- 1. dumps
marker_ok() {
    [[ -f $MARK && -f $PLAIN && -f $GZ ]] || return 1
    [[ $(marker_get size_mb) == "$SIZE_MB" ]] || return 1
    [[ $(marker_get src_sha256) == "$SRC_SHA" ]] || return 1
    [[ $(marker_get plain_bytes) == "$(fsize "$PLAIN")" ]] || return 1
    [[ $(marker_get gz_bytes) == "$(fsize "$GZ")" ]] || return 1
}

JPID=
cleanup() {
    if [[ -n $JPID ]] && kill -0 "$JPID" 2>/dev/null; then kill "$JPID" 2>/dev/null || true; fi
}
trap cleanup EXIT

generate() {
    local classes=$WORKDIR/classes out=$WORKDIR/$NAME.gen.log gclog=$WORKDIR/$NAME.gc.log
    rm -f "$MARK" "$PLAIN" "$GZ" "$gclog"
    mkdir -p "$classes"
    javac -nowarn -d "$classes" "$REPO/data/gen/BigHeap.java" || exit 1
    echo "generating heap: java $BIGHEAP_JAVA_OPTS BigHeap $SIZE_MB"
    local t0 t1 t2 t3
    t0=$(now)
    # shellcheck disable=SC2086
    java $BIGHEAP_JAVA_OPTS -Xlog:gc:file="$gclog" -cp "$classes" BigHeap "$SIZE_MB" 7200 >"$out" 2>&1 &
    JPID=$!
    local i
    for ((i = 0; i < 1200; i++)); do
        grep -q '^READY ' "$out" && break
        kill -0 "$JPID" 2>/dev/null || { echo "BigHeap died:" >&2; cat "$out" >&2; exit 1; }
        sleep 0.5
    done
    grep -q '^READY ' "$out" || { echo "BigHeap not READY after 600 s" >&2; cat "$out" >&2; exit 1; }
    t1=$(now)
    sed -n 's/^STATS /  /p' "$out"
    jcmd "$JPID" GC.heap_dump -all "$PLAIN" | sed 's/^/  jcmd: /'
    [[ -s $PLAIN ]] || { echo "jcmd did not write $PLAIN" >&2; exit 1; }
    t2=$(now)
    jcmd "$JPID" GC.heap_dump -all -gz=1 "$GZ" | sed 's/^/  jcmd: /'
    [[ -s $GZ ]] || { echo "jcmd did not write $GZ" >&2; exit 1; }
    t3=$(now)
    # the garbage survives only if no GC ran after BigHeap's final System.gc()
    local last
    last=$(grep 'Pause' "$gclog" | tail -1)
    kill "$JPID" 2>/dev/null || true
    wait "$JPID" 2>/dev/null || true
    JPID=
    if [[ $last != *"Pause Full (System.gc())"* ]]; then
        echo "WARNING: a GC ran after BigHeap's System.gc(), the dumps may lack the garbage: $last" >&2
        return 1
    fi
    {
        echo "size_mb=$SIZE_MB"
        echo "src_sha256=$SRC_SHA"
        echo "plain_bytes=$(fsize "$PLAIN")"
        echo "gz_bytes=$(fsize "$GZ")"
        echo "build_s=$(secs "$t0" "$t1")"
        echo "dump_plain_s=$(secs "$t1" "$t2")"
        echo "dump_gz_s=$(secs "$t2" "$t3")"
        echo "stats=$(sed -n 's/^STATS //p' "$out")"
        echo "created=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    } >"$MARK"
}

hr
echo "heapgraph end-to-end benchmark: SIZE_MB=$SIZE_MB WORKDIR=$WORKDIR RUNS=$RUNS THREADS=$THREADS"
echo "host: $(nproc) CPUs, $(free -g | awk '/^Mem:/{print $2}') GB RAM, $(uname -r)"
hr
if [[ ${REGEN:-0} != 1 ]] && marker_ok; then
    echo "dumps: reusing $NAME.* (marker $MARK, created $(marker_get created))"
else
    generate || { echo "retrying the generation once" >&2; generate; } || exit 1
fi
PLAIN_B=$(fsize "$PLAIN"); GZ_B=$(fsize "$GZ")
printf 'plain dump: %s  %s MB (%d bytes)\n' "$PLAIN" "$(mb "$PLAIN_B")" "$PLAIN_B"
printf 'gz dump:    %s  %s MB (%d bytes, %.1f%% of plain)\n' "$GZ" "$(mb "$GZ_B")" "$GZ_B" \
    "$(python3 -c "print(100 * $GZ_B / $PLAIN_B)")"
printf 'generation: heap build+gc %ss (JVM start to READY), jcmd plain %ss, jcmd gz %ss\n' \
    "$(marker_get build_s)" "$(marker_get dump_plain_s)" "$(marker_get dump_gz_s)"
printf 'generator:  %s\n' "$(marker_get stats)"

# ---------------------------------------------------------------------------- 1b. replica
# replicator: REPLICATE, else build-release's target, else compiled here from its one source file
find_replicator() {
    [[ -n ${REPLICATE:-} ]] && return
    local src=$REPO/bench/replicate_hprof.cpp build=$REPO/build-release
    # bench/ (and so the target) exists only in developer builds without sanitizers
    if grep -qx 'HEAPGRAPH_DEVELOPER:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null &&
        ! grep -qx 'HEAPGRAPH_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
        cmake --build "$build" --target replicate_hprof >/dev/null
        REPLICATE=$build/bench/replicate_hprof
    else
        REPLICATE=$WORKDIR/bin/replicate_hprof
        if [[ ! -x $REPLICATE || $src -nt $REPLICATE || -n $(find "$REPO/formats" -newer "$REPLICATE" -print -quit) ]]; then
            echo "compiling $REPLICATE ..."
            mkdir -p "$WORKDIR/bin"
            # it uses formats/ (the HPROF value sizes): compiled in, no build dir needed
            "${CXX:-c++}" -std=c++20 -O2 -I"$REPO/formats" -o "$REPLICATE.tmp" "$src" "$REPO"/formats/*.cpp &&
                mv -f "$REPLICATE.tmp" "$REPLICATE"
        fi
    fi
}

REPLICA_FILE=
if [[ -n ${REPLICA:-} ]]; then
    REPLICA_FLAGS=() REPLICA_LABEL=x$REPLICA
    if [[ ${REPLICA_ROOTS:-0} == 1 ]]; then
        REPLICA_FLAGS=(--root-class-refs) REPLICA_LABEL=x$REPLICA-rooted
    fi
    REPLICA_FILE=$WORKDIR/$NAME-$REPLICA_LABEL.hprof
    if [[ -f $REPLICA_FILE && $REPLICA_FILE -nt $PLAIN ]]; then
        echo "replica:    reusing $REPLICA_FILE"
    else
        find_replicator
        [[ -x $REPLICATE ]] || { echo "replicate_hprof binary not found: $REPLICATE" >&2; exit 1; }
        rm -f "$REPLICA_FILE"
        need=$((PLAIN_B * REPLICA)) avail=$(df --output=avail -B1 "$WORKDIR" | tail -1)
        ((avail > need)) || { echo "replica needs ~$(mb "$need") MB, $WORKDIR has $(mb "$avail") MB free" >&2; exit 1; }
        echo "replica:    $REPLICATE ${REPLICA_FLAGS[*]:-} $(basename "$PLAIN") $(basename "$REPLICA_FILE") $REPLICA"
        t0=$(now)
        "$REPLICATE" "${REPLICA_FLAGS[@]}" "$PLAIN" "$REPLICA_FILE" "$REPLICA" | sed 's/^/  /'
        echo "  took $(secs "$t0" "$(now)") s"
    fi
    printf 'replica:    %s  %s MB (%d bytes)\n' "$REPLICA_FILE" "$(mb "$(fsize "$REPLICA_FILE")")" "$(fsize "$REPLICA_FILE")"
fi

# ---------------------------------------------------------------------------- 2. heapgraph
if [[ -z ${HEAPGRAPH:-} ]]; then
    HEAPGRAPH=$REPO/build-release/cli/heapgraph
    if [[ ! -x $HEAPGRAPH ]]; then
        echo "building $HEAPGRAPH ..."
        (cd "$REPO" && cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
            cmake --build build-release)
    fi
fi
[[ -x $HEAPGRAPH ]] || { echo "heapgraph binary not found: $HEAPGRAPH" >&2; exit 1; }
HEAPGRAPH_SRC=$(readlink -f "$HEAPGRAPH")
# Run a private copy: others may rebuild the binary in place while the benchmark runs.
mkdir -p "$WORKDIR/bin"
HEAPGRAPH=$WORKDIR/bin/heapgraph
snapshot_hg() { cp -f "$HEAPGRAPH_SRC" "$HEAPGRAPH.tmp" && mv -f "$HEAPGRAPH.tmp" "$HEAPGRAPH"; }
snapshot_hg

# Flags under development: passed only if `analyze --help` lists them.
WANT_FLAGS=(--timings --progress=never ${MEMORY_LIMIT:+--memory-limit=$MEMORY_LIMIT})
hg_flags() {
    local help f
    help=$("$HEAPGRAPH" analyze --help 2>&1 || true)
    HG_FLAGS=()
    for f in "${WANT_FLAGS[@]}"; do
        if grep -q -- "${f%%=*}\b" <<<"$help"; then HG_FLAGS+=("$f"); fi
    done
}
hg_flags
hr
echo "heapgraph: $HEAPGRAPH_SRC (built $(date -r "$HEAPGRAPH_SRC" '+%F %T'), run from a copy in $WORKDIR/bin)"
SKIPPED=$(comm -23 <(printf '%s\n' "${WANT_FLAGS[@]}" | sort) <(printf '%s\n' "${HG_FLAGS[@]:-}" | sort) | xargs)
echo "  flags: --threads $THREADS ${HG_FLAGS[*]:-}${SKIPPED:+  (not supported by this binary: $SKIPPED)}"

# timev FILE -> "wall_s max_rss_kb" from a /usr/bin/time -v report
timev() {
    python3 - "$1" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t)
wall = sum(float(p) * 60 ** i for i, p in enumerate(reversed(m.group(1).split(":")))) if m else float("nan")
m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)
print(wall, m.group(1) if m else 0)
EOF
}

# run_hg LABEL DUMP [UNCOMPRESSED_BYTES=size of the plain dump] -> prints per-run lines; sets
# MED_WALL and MAX_RSS_KB
run_hg() {
    local label=$1 dump=$2 raw=${3:-$PLAIN_B} bytes i rc out tf log walls=() wall rss
    bytes=$(fsize "$dump")
    MAX_RSS_KB=0
    echo
    echo "[$label] $(basename "$dump")  ($(mb "$bytes") MB on disk, $(mb "$raw") MB uncompressed)"
    for ((i = 1; i <= RUNS; i++)); do
        out=$WORKDIR/hg-$NAME-$label-$i.json; tf=$out.time; log=$out.log
        local attempt
        for attempt in 1 2 3; do
            set +e
            /usr/bin/time -v -o "$tf" "$HEAPGRAPH" analyze "$dump" --json "$out" \
                --threads "$THREADS" "${HG_FLAGS[@]}" >"$log" 2>&1
            rc=$?
            set -e
            [[ $rc == 0 ]] && break
            echo "  run $i attempt $attempt failed (rc=$rc): $(grep -v '^\s*$' "$log" | tail -2 | tr '\n' ' ')"
            if ((${#HG_FLAGS[@]})) && grep -qiE 'timings|progress|extra|not expected|unknown' "$log"; then
                echo "  retrying without ${HG_FLAGS[*]}"; HG_FLAGS=()
            else
                sleep 10      # binary may be being rebuilt by someone else: take a fresh copy
                if [[ -x $HEAPGRAPH_SRC ]] && snapshot_hg; then hg_flags; fi
            fi
        done
        [[ $rc == 0 ]] || { echo "  heapgraph failed $attempt times; see $log" >&2; return 1; }
        read -r wall rss < <(timev "$tf")
        walls+=("$wall")
        ((rss > MAX_RSS_KB)) && MAX_RSS_KB=$rss
        python3 - "$wall" "$rss" "$bytes" "$raw" "$i" <<'EOF'
import sys
wall, rss, b, plain, i = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
M = 1048576
extra = f" ({plain / M / wall:.0f} MB/s uncompressed)" if b != plain else ""
ratio = f"{rss * 1024 / b:.2f}x dump" + (f", {rss * 1024 / plain:.2f}x uncompressed" if b != plain else "")
print(f"  run {i}: wall {wall:7.2f} s  {b / M / wall:7.1f} MB/s{extra}  peak RSS {rss / 1024:8.1f} MB  ({ratio})")
EOF
    done
    MED_WALL=$(python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" "${walls[@]}")
    printf '  median wall %.2f s over %d run(s), max peak RSS %.1f MB\n' "$MED_WALL" "$RUNS" \
        "$(python3 -c "print($MAX_RSS_KB / 1024)")"
    python3 - "$out" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"  (cannot read JSON {sys.argv[1]}: {e})"); sys.exit(0)
s = d.get("summary", {})
keys = ["objects", "instances", "object_arrays", "primitive_arrays", "classes", "gc_roots",
        "reachable_objects", "unreachable_objects", "edges", "shallow_bytes"]
print("  summary: " + ", ".join(f"{k}={s[k]}" for k in keys if k in s))
t = d.get("timings")
if t is None:
    print("  timings: (not in JSON)")
else:
    print("  timings: " + json.dumps(t, separators=(", ", ": ")))
EOF
    if [[ " ${HG_FLAGS[*]:-} " == *" --timings "* && -s $log ]]; then
        echo "  stderr of the last run (--timings):"
        tail -n 25 "$log" | sed 's/^/    /'
    fi
}

run_hg plain "$PLAIN"
HG_WALL=$MED_WALL; HG_RSS_KB=$MAX_RSS_KB; HG_JSON=$WORKDIR/hg-$NAME-plain-$RUNS.json
run_hg gz "$GZ"
if [[ -n $REPLICA_FILE ]]; then
    run_hg "$REPLICA_LABEL" "$REPLICA_FILE" "$(fsize "$REPLICA_FILE")"
fi

# ---------------------------------------------------------------------------- 3. VisualVM peer
hr
if [[ ${PEER:-1} == 0 ]]; then
    echo "VisualVM peer: skipped (PEER=0)"
elif [[ ! -d /usr/share/visualvm ]]; then
    echo "VisualVM peer: skipped (/usr/share/visualvm missing; apt-get install visualvm)"
elif [[ ! -x $PEER_DIR/run.sh ]]; then
    echo "VisualVM peer: skipped ($PEER_DIR/run.sh missing)"
else
    PEER_OUT=$WORKDIR/peer-$NAME.json
    PEER_SCR=${PEER_SCRATCH:-$WORKDIR/peer}
    rm -f "$PEER_OUT"
    echo "VisualVM 2.1.5 peer on the plain dump (PEER_XMX=${PEER_XMX:-8g}, PEER_TIMEOUT=${PEER_TIMEOUT:-0}) ..."
    echo "  started $(date '+%F %T'); progress in $PEER_OUT.log"
    if PEER_XMX=${PEER_XMX:-8g} PEER_SCRATCH=$PEER_SCR \
        timeout "${PEER_TIMEOUT:-0}" "$PEER_DIR/run.sh" "$PLAIN" "$PEER_OUT" 2>"$PEER_OUT.stderr"; then
        python3 - "$PEER_OUT" "$PLAIN_B" "$HG_WALL" "$HG_RSS_KB" "$HG_JSON" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
b, hw, hr = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
try:
    hs = json.load(open(sys.argv[5])).get("summary", {})
except Exception:
    hs = {}
tv = d.get("time_v", {})
w, r = tv.get("wall_s") or float("nan"), tv.get("max_rss_kb") or 0
M = 1048576
print(f"  wall {w:.2f} s  {b / M / w:.1f} MB/s  peak RSS {r / 1024:.1f} MB  ({r * 1024 / b:.2f}x dump)")
tm = d.get("times_ms", {})
if tm:
    print("  phases (ms): " + ", ".join(f"{k}={v}" for k, v in tm.items()))
print(f"  instances={d.get('instances')} (heapgraph objects={hs.get('objects')}), "
      f"classes={d.get('classes')}, gc_roots={d.get('gc_roots')}, "
      f"unreachable={d.get('unreachable_instances')} (heapgraph {hs.get('unreachable_objects')})")
print(f"  index files on disk: {d.get('cache_dir_bytes', 0) / M:.1f} MB")
print(f"  VisualVM / heapgraph (plain, median wall, max RSS): wall {w / hw:.1f}x, peak RSS {r / hr:.2f}x")
EOF
    else
        rc=$?
        if [[ $rc == 124 ]]; then
            echo "  VisualVM peer stopped after PEER_TIMEOUT=${PEER_TIMEOUT}s; last progress:"
            # run.sh's EXIT trap may not have run: remove its scratch dirs (only under our default dir)
            [[ -z ${PEER_SCRATCH:-} ]] && rm -rf "$PEER_SCR"/run.*
        else
            echo "  VisualVM peer failed (rc=$rc); see $PEER_OUT.stderr and $PEER_OUT.log"
        fi
        tail -n 5 "$PEER_OUT.log" "$PEER_OUT.stderr" 2>/dev/null | sed 's/^/  /' || true
    fi
fi
hr
