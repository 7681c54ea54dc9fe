#!/usr/bin/env bash
# Generate the LeakDemo sample heap dumps (+ matching class histograms) for heapgraph tests.
#
# usage:
#   data/gen/gen.sh                      # both standard samples:
#                                        #   data/samples/leakdemo.hprof        (compressed oops)
#                                        #   data/samples/leakdemo-nocoops.hprof (-XX:-UseCompressedOops)
#   data/gen/gen.sh OUT.hprof [JVM flags...]   # one dump at OUT.hprof (must end in .hprof),
#                                              # extra flags appended to the JVM command line
#
# For each dump OUT.hprof it also writes OUT.histo.txt: `jcmd <pid> GC.class_histogram -all`
# taken from the same JVM right after the dump, while the program sits blocked without allocating
# (see LeakDemo.java / /tmp/data-gen-notes.md). Needs a JDK 17 (javac, java, jcmd) on PATH;
# if python3 is available the result is cross-checked with data/gen/hprof_check.py.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

# Flags chosen to keep the dump small and the heap deterministic:
#   -Xshare:off        no CDS archive: fewer symbols/classes in the dump (6.9 MB -> 6.3 MB in tests)
#   -XX:+UseSerialGC   single-threaded simple heap; with -Xmx32m the smallest dumps
#   -XX:-UseTLAB       no TLABs, hence no int[] filler objects written for retired TLABs
#                      (makes dump and histogram agree on int[] too; saves ~0.7 MB)
#   -Xms32m -Xmx32m -Xmn24m  eden ~19 MB, far more than the ~6 MB the program allocates,
#                      so no GC can run before the dump (checked below via the GC log)
#   -XX:+StartAttachListener  attach listener thread exists from startup, so the jcmd
#                      attach does not allocate a Thread object between dump and histogram
BASE_FLAGS=(-Xshare:off -XX:+UseSerialGC -XX:-UseTLAB -Xms32m -Xmx32m -Xmn24m
            -XX:+StartAttachListener)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/leakdemo.XXXXXX")
jpid=
cleanup() {
    if [[ -n $jpid ]] && kill -0 "$jpid" 2>/dev/null; then kill "$jpid" 2>/dev/null || true; fi
    exec 3>&- 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

javac -XDstringConcat=inline -d "$tmp/classes" "$here/LeakDemo.java"

# run_one OUT.hprof [extra JVM flags...]
run_one() {
    local out=$1; shift
    [[ $out == /* ]] || out=$PWD/$out
    [[ $out == *.hprof ]] || { echo "gen.sh: output must end in .hprof: $out" >&2; return 2; }
    local histo=${out%.hprof}.histo.txt
    local run=$tmp/run.$RANDOM
    mkdir -p "$run" "$(dirname "$out")"
    rm -f "$out" "$histo"        # dumpHeap refuses to overwrite an existing file

    mkfifo "$run/ctl"
    java "${BASE_FLAGS[@]}" "$@" -Xlog:gc*:file="$run/gc.log" \
        -cp "$tmp/classes" LeakDemo "$out" <"$run/ctl" >"$run/stdout" 2>"$run/stderr" &
    jpid=$!
    exec 3>"$run/ctl"            # unblocks the JVM's open of its stdin

    local dumped= i
    for ((i = 0; i < 600; i++)); do
        if grep -qx DUMPED "$run/stdout"; then dumped=1; break; fi
        if ! kill -0 "$jpid" 2>/dev/null; then
            echo "gen.sh: LeakDemo exited before dumping" >&2; cat "$run/stdout" "$run/stderr" >&2; return 1
        fi
        sleep 0.1
    done
    [[ -n $dumped ]] || { echo "gen.sh: timed out waiting for the dump" >&2; return 1; }

    # Histogram of the very same heap: the program is blocked in a read() and allocates nothing.
    # -all = inspect all objects, no full GC first (so the unreachable Garbage ring is counted).
    # ($jpid is the JVM itself: bash execs java directly in the background child.)
    jcmd "$jpid" GC.class_histogram -all >"$run/histo.raw"
    echo go >&3
    exec 3>&-
    wait "$jpid"
    jpid=
    # drop jcmd's leading "<pid>:" line so the file is reproducible
    sed '1{/^[0-9]*:$/d}' "$run/histo.raw" >"$histo"
    chmod 644 "$out" "$histo"

    if grep -q 'Pause' "$run/gc.log"; then
        echo "gen.sh: a GC ran before the dump; unreachable objects may be missing:" >&2
        grep 'Pause' "$run/gc.log" >&2
        return 1
    fi
    local cls want got
    for cls in 'LeakDemo$Session=2000' 'LeakDemo$Node=500' 'LeakDemo$TreeNode=127' \
               'LeakDemo$Garbage=1000' 'LeakDemo$Holder=1' 'LeakDemo$HolderThread=1'; do
        want=${cls#*=}; cls=${cls%=*}
        got=$(awk -v c="$cls" '$4 == c { print $2 }' "$histo")
        [[ $got == "$want" ]] || { echo "gen.sh: histogram has ${got:-0} $cls, expected $want" >&2; return 1; }
    done
    if command -v python3 >/dev/null; then
        if ! python3 "$here/hprof_check.py" "$out" "$histo" >"$run/check.txt"; then
            cat "$run/check.txt" >&2; echo "gen.sh: hprof_check.py failed" >&2; return 1
        fi
        grep -E 'differing classes|LeakDemo checks' "$run/check.txt" | sed 's/^ */  /'
    fi
    echo "wrote $out ($(stat -c %s "$out") bytes) and $histo"
}

# ThreeLeaks (issue 7): three planted leaks, a live gzip dump by jcmd -gz=1.
run_threeleaks() {
    local out=$repo/data/samples/threeleaks.hprof.gz run=$tmp/three
    mkdir -p "$run"
    javac -XDstringConcat=inline -d "$run/classes" "$here/ThreeLeaks.java"
    rm -f "$out"
    mkfifo "$run/ctl"
    java -Xshare:off -XX:+UseSerialGC -Xmx64m -cp "$run/classes" ThreeLeaks <"$run/ctl" >"$run/stdout" 2>&1 &
    jpid=$!
    exec 3>"$run/ctl"
    local i
    for ((i = 0; i < 600; i++)); do grep -qx READY "$run/stdout" && break; sleep 0.1; done
    grep -qx READY "$run/stdout" || { echo "gen.sh: ThreeLeaks did not start" >&2; return 1; }
    jcmd "$jpid" GC.heap_dump -gz=1 "$out" >/dev/null
    echo go >&3
    exec 3>&-
    wait "$jpid"
    jpid=
    chmod 644 "$out"
    echo "wrote $out ($(stat -c %s "$out") bytes)"
}

# StepLeak (issue 8): three dumps of a leak growing in steps, two of a steady state; the
# program dumps itself (HotSpotDiagnosticMXBean, live), we gzip.
run_stepleak() {
    local run=$tmp/step mode
    mkdir -p "$run"
    javac -XDstringConcat=inline -d "$run/classes" "$here/StepLeak.java"
    for mode in leak steady; do
        java -Xshare:off -XX:+UseSerialGC -Xmx64m -cp "$run/classes" StepLeak "$mode" "$run" >/dev/null
    done
    local f
    for f in stepleak-1 stepleak-2 stepleak-3 steady-1 steady-2; do
        gzip -9 -n -c "$run/$f.hprof" >"$repo/data/samples/$f.hprof.gz"
        chmod 644 "$repo/data/samples/$f.hprof.gz"
        echo "wrote data/samples/$f.hprof.gz ($(stat -c %s "$repo/data/samples/$f.hprof.gz") bytes)"
    done
}

if [[ ${1:-} == threeleaks ]]; then
    run_threeleaks
elif [[ ${1:-} == stepleak ]]; then
    run_stepleak
elif (($# == 0)); then
    run_one "$repo/data/samples/leakdemo.hprof"
    run_one "$repo/data/samples/leakdemo-nocoops.hprof" -XX:-UseCompressedOops
    # Committed gzipped: it keeps the repository small and exercises the gzip reader.
    gzip -9 -f "$repo/data/samples/leakdemo-nocoops.hprof"
else
    run_one "$@"
fi
