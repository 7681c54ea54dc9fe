#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets from data/ (never committed: run it, or let
# run.sh run it): small real files whole, and the first 64 KiB of the bigger ones (a cut dump
# is a seed too, for --allow-truncated). Classic text seeds are written by `heapgraph convert`
# from the PHD and HPROF samples, in both layouts, and in EBCDIC.
#   fuzz/make-corpus.sh BUILD_DIR      seeds in BUILD_DIR/fuzz/seeds/<target>/
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: fuzz/make-corpus.sh BUILD_DIR}
seeds=$build/fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{hprof,hprof_gz,phd,classic,javacore,snapshot}

add() {  # add TARGET FILE: the file if under 1 MiB, and its first 64 KiB if bigger than that
    local target=$1 file=$2 name
    name=$(basename "$file")
    if [ "$(stat -c %s "$file")" -le 1048576 ]; then cp "$file" "$seeds/$target/$name"; fi
    if [ "$(stat -c %s "$file")" -gt 65536 ]; then head -c 65536 "$file" > "$seeds/$target/$name.64k"; fi
}

chunked_gzip() {  # chunked_gzip FILE BLOCK OUT: HotSpot's `jcmd -gz` layout, with small blocks
    local file=$1 block=$2 out=$3 parts first=1
    parts=$(mktemp -d)
    split -b "$block" -a 4 -d "$file" "$parts/block"
    : > "$out"
    for part in "$parts"/block*; do  # gzip -n writes a 10-byte header with no flags: swap it
        if [ $first = 1 ]; then printf '\037\213\010\020\000\000\000\000\004\000HPROF BLOCKSIZE=%s\000' "$block"
        else printf '\037\213\010\000\000\000\000\000\004\003'; fi >> "$out"
        gzip -9 -n -c "$part" | tail -c +11 >> "$out"
        first=0
    done
    rm -r "$parts"
}

# The first 64 KiB of a real HPROF hold only names and classes: data/fuzz-seeds/hprof holds
# small whole dumps cut from them (fuzz/shrink_hprof.py) that reach the heap dump decoder.
for f in data/hprof/* data/hprof-android/* data/samples/leakdemo.hprof data/fuzz-seeds/hprof/*; do add hprof "$f"; done
for f in data/hprof-gz/* data/samples/*.hprof.gz; do add hprof_gz "$f"; done
# Real chunked files hold 1 MiB blocks, too big for fast executions: the same layout in
# 2 KiB blocks, and plain gzip, of the small whole dumps.
for f in data/fuzz-seeds/hprof/{sun_jdk6_18_x32,oracle_jdk8_05_x64,leak_service_binder}.small.hprof; do
    chunked_gzip "$f" 2048 "$seeds/hprof_gz/$(basename "$f").2k-blocks.gz"
done
gzip -9 -c data/fuzz-seeds/hprof/sun_jdk6_31_hprofagent_compressedOops.small.hprof > "$seeds/hprof_gz/hprofagent.small.hprof.gz"
for f in data/phd/*.phd; do add phd "$f"; done
for f in data/phd/javacore*; do add javacore "$f"; done

cli=$build/cli/heapgraph
export ASAN_OPTIONS=detect_leaks=0  # the fuzz tree's CLI is instrumented; leaks are the tests' business
for dump in data/phd/heapdump.20100209.165721.4484.phd data/hprof/sun_jdk6_18_x32.hprof \
            data/fuzz-seeds/hprof/oracle_jdk8_05_x64.small.hprof; do
    name=$(basename "$dump")
    "$cli" convert "$dump" --to classic -o "$seeds/classic/$name.openj9.txt"
    "$cli" convert "$dump" --to classic --variant sdk -o "$seeds/classic/$name.sdk.txt"
done
for f in "$seeds"/classic/*.txt; do  # the big ones: also their first 64 KiB
    if [ "$(stat -c %s "$f")" -gt 65536 ]; then head -c 65536 "$f" > "$f.64k"; fi
done
iconv -f ISO-8859-1 -t IBM1047 "$seeds/classic/sun_jdk6_18_x32.hprof.sdk.txt" \
    | head -c 65536 > "$seeds/classic/ebcdic.txt" || rm -f "$seeds/classic/ebcdic.txt"
# Snapshots: the first byte 1 means a whole file, 0 a JSON payload the target frames itself.
for dump in data/hprof/sun_jdk6_18_x32.hprof data/phd/heapdump.20100209.165721.4484.phd; do
    name=$(basename "$dump")
    "$cli" analyze "$dump" --json /dev/null --save "$seeds/snapshot/$name.snap" --quiet
    { printf '\001'; cat "$seeds/snapshot/$name.snap"; } > "$seeds/snapshot/$name.file"
    # The payload is zlib (2-byte header): as raw deflate behind a gzip header, gzip inflates it
    # (and then complains of the missing trailer).
    { printf '\000'; { printf '\037\213\010\000\000\000\000\000\000\003'; tail -c +35 "$seeds/snapshot/$name.snap"; } \
        | gzip -dc 2>/dev/null; } > "$seeds/snapshot/$name.json" || true
    rm "$seeds/snapshot/$name.snap"
done
# The minimised corpora of the long runs (docs/hardening.md), so short runs start deep.
for t in data/fuzz-corpus/*/; do
    [ -d "$t" ] && cp "$t"* "$seeds/$(basename "$t")/" 2>/dev/null || true
done
for t in "$seeds"/*; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds, $(du -sh "$t" | cut -f1)"; done
