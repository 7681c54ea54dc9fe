#!/usr/bin/env bash
# Generate the ContentDemo sample for heapgraph's content analyses (duplicate strings and
# arrays, collection fill, threads and their locals, system properties).
#
# usage: data/gen/content.sh
#
# writes, in data/samples/:
#   contentdemo.hprof.gz        `jcmd PID GC.heap_dump` (live: a full GC first), gzip -9 -n
#   contentdemo.threads.txt     `jcmd PID Thread.print` of the same JVM right after the dump,
#                               nothing having moved in between (the program is blocked
#                               reading stdin; the workers are parked), so the addresses it
#                               prints are the dump's object ids
#   contentdemo.expected.json   what ContentDemo planted, written by the program itself, with
#                               the JVM's own shallow sizes (Instrumentation.getObjectSize)
# See data/gen/ContentDemo.java for what is planted. Needs a JDK 17 (javac, jar, java, jcmd);
# if python3 is available the result is checked with data/gen/content_check.py.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
samples=$repo/data/samples

# The flags of gen.sh (see there), with a larger heap: about 12 MB are planted, and with
# eden 32 MB no GC runs before the dump's own full GC.
#   --add-opens        reflection on String.value/coder, ArrayList.elementData, HashMap.table
#   -javaagent         ContentDemo$Agent keeps the Instrumentation, for getObjectSize
FLAGS=(-Xshare:off -XX:+UseSerialGC -XX:-UseTLAB -Xms64m -Xmx64m -Xmn40m
       -XX:+StartAttachListener
       --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
       -javaagent:content.jar -cp content.jar)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/contentdemo.XXXXXX")
jpid=
cleanup() {
    if [[ -n $jpid ]] && kill -0 "$jpid" 2>/dev/null; then kill "$jpid" 2>/dev/null || true; fi
    exec 3>&- 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

javac -XDstringConcat=inline -d "$tmp/classes" "$here/ContentDemo.java"
printf 'Premain-Class: ContentDemo$Agent\n' >"$tmp/manifest.txt"
jar --create --file "$tmp/content.jar" --manifest "$tmp/manifest.txt" -C "$tmp/classes" .

# Run from $tmp with relative paths, so the command line recorded in the dump
# (sun.java.command, the agent's path) does not name the temporary directory.
mkfifo "$tmp/ctl"
(cd "$tmp" && exec java "${FLAGS[@]}" -Xlog:gc:file=gc.log ContentDemo expected.json \
    <ctl >stdout 2>stderr) &
jpid=$!                          # the subshell execs java: this is the JVM's pid
exec 3>"$tmp/ctl"                # unblocks the JVM's open of its stdin

ready=
for ((i = 0; i < 600; i++)); do
    if grep -qx READY "$tmp/stdout"; then ready=1; break; fi
    if ! kill -0 "$jpid" 2>/dev/null; then
        echo "content.sh: ContentDemo exited early" >&2; cat "$tmp/stdout" "$tmp/stderr" >&2; exit 1
    fi
    sleep 0.1
done
[[ -n $ready ]] || { echo "content.sh: timed out waiting for ContentDemo" >&2; exit 1; }

# The dump (live: one full GC), then the threads of the same, unmoved heap.
jcmd "$jpid" GC.heap_dump "$tmp/contentdemo.hprof" >"$tmp/dump.out"
jcmd "$jpid" Thread.print >"$tmp/threads.raw"
echo go >&3
exec 3>&-
wait "$jpid"
jpid=

if [[ $(grep -c 'Pause' "$tmp/gc.log") != 1 ]] || ! grep -q 'Pause Full (Heap Dump Initiated GC)' "$tmp/gc.log"; then
    echo "content.sh: expected exactly one GC, the dump's own:" >&2; cat "$tmp/gc.log" >&2; exit 1
fi

mkdir -p "$samples"
gzip -9 -n -c "$tmp/contentdemo.hprof" >"$samples/contentdemo.hprof.gz"
sed '1{/^[0-9]*:$/d}' "$tmp/threads.raw" >"$samples/contentdemo.threads.txt"   # drop "<pid>:"
cp "$tmp/expected.json" "$samples/contentdemo.expected.json"
chmod 644 "$samples"/contentdemo.*

if command -v python3 >/dev/null; then
    python3 "$here/content_check.py" "$samples/contentdemo.hprof.gz" \
        "$samples/contentdemo.expected.json" "$samples/contentdemo.threads.txt"
fi
for f in contentdemo.hprof.gz contentdemo.threads.txt contentdemo.expected.json; do
    echo "wrote data/samples/$f ($(stat -c %s "$samples/$f") bytes)"
done
