#!/usr/bin/env bash
# tests/bench/replicate_test.sh REPLICATE_BIN HEAPGRAPH_BIN DATA_DIR TMPDIR
#
# Checks bench/replicate_hprof.cpp through heapgraph's reports. Each dump below is replicated
# 1x, 2x and 3x and analysed (`analyze --threads 1`, JSON and objects TSV) beside the original.
#
# Report level:
#   * 1x reports the same heap as the input: every section but `dump` is equal (copy 0 is the
#     input; only a HEAP DUMP record's framing changes, and a segmented dump is byte-equal);
#   * 3x has exactly 3 times the instances, object arrays and primitive arrays; the same classes,
#     reachable classes, class bytes and sticky-class roots; per class (reachable and unreachable
#     rows together) 3 times the count and shallow bytes of the non-class objects; 3 times the
#     dangling references; the same size model; no warning code the original lacks; every
#     thread three times, with the same frames;
#   * each copy k >= 1 adds the same: the 3x figures minus the 2x ones equal the 2x ones minus
#     the 1x ones (reachable/unreachable objects and bytes, the super root's retained bytes,
#     edges, roots by kind, per-class reachable counts).
# Object level (the objects TSV), against an independent reading of the input in Python:
#   * copy k holds object o of the input at o + k*S (S as printed), same kind, class and
#     shallow size; classes once, unchanged; nothing else;
#   * copy 0 is reachable exactly where the input is. Copy k >= 1 reaches exactly R: what the
#     input's roots that are not classes reach through fields and array elements without
#     passing through a class (a copy's static fields are copy 0's). So reachable bytes are
#     reachable(input) + 2 x shallow(R) at 3x, NOT 3 x (reachable - class bytes) + class bytes,
#     and the super root retains the same;
#   * a copy-k object is dominated only by copy-k objects or the super root, copies 1 and 2
#     have the same dominator tree (shifted) and retained sizes, and nothing in copy 0 or a
#     class is dominated by a copy k >= 1;
#   * with --root-class-refs, copy k >= 1 reaches exactly what those roots and the objects the
#     class dumps name reach (for leakdemo and the Android dump that makes reachable bytes
#     exactly 3 x (reachable - class bytes) + class bytes; the JDK 6 dump has unreachable
#     classes whose statics the copies root, so there it is more).
# Special cases: leakdemo cut into 1-9 KiB segments at arbitrary bytes (sub-records continuing
# in the next segment) replicates to the same objects as leakdemo; a dangling reference just
# below the object ids stays dangling in every copy (the step widens).
# Bad input: a small dump cut at every byte (exit 0 at record boundaries, else exit 1 naming
# the file and an offset), a dump cut mid-record, and one with a damaged sub-record tag in its
# first heap dump segment fail with exit code 1 and a message naming the file and the offset
# (exact for the damaged tag), leaving no output behind; OUT equal to IN (or a link to it) is
# refused.
set -euo pipefail

if [ $# -ne 4 ]; then
    echo "usage: $0 REPLICATE_BIN HEAPGRAPH_BIN DATA_DIR TMPDIR" >&2
    exit 2
fi
rep=$(realpath "$1") hg=$(realpath "$2") data=$(realpath "$3")
mkdir -p "$4"
work=$(mktemp -d "$(realpath "$4")/replicate_test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name|dump under DATA_DIR|1 when no JAVA FRAME / JNI LOCAL root names a class (locals per thread exact)
dumps=(
    "jdk6-x32|hprof/sun_jdk6_18_x32.hprof|1"            # id 4, JDK 6, one HEAP DUMP record, dangling references
    "leakdemo|samples/leakdemo.hprof|1"                 # id 8, JDK 17, segments; threads with frames and locals
    "android|hprof-android/leak_service_binder.hprof|0" # id 4, Android 1.0.3: HEAP DUMP INFO, roots 0x89-0x8B, 647 segments
)

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

analyze() {  # DUMP JSON [TSV]
    local tsv=()
    [ $# -lt 3 ] || tsv=(--objects-tsv "$3")
    "$hg" analyze "$1" --json "$2" "${tsv[@]}" --threads 1 --quiet || fail "heapgraph analyze $1 exited with $?"
}

# check NAME EXACT_LOCALS STEP DUMP A.json A.tsv X1.json X2.json X3.json X3.tsv R3.json R3.tsv R3_STEP
check() {
    python3 - "$@" <<'EOF'
import json, struct, sys
from collections import Counter, deque

name, exact_locals, step, dump_path = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3], 16), sys.argv[4]
a, x1, x2, x3 = (json.load(open(p)) for p in (sys.argv[5], sys.argv[7], sys.argv[8], sys.argv[9]))
problems = []

def expect(ok, what):
    if not ok:
        problems.append(what)

# ---- report level ---------------------------------------------------------------------------
for key in a:
    if key != "dump":
        expect(a[key] == x1[key], f"1x: section {key} differs from the original's")
for key in ("format_version", "id_size", "dumps_in_file", "compressed_oops", "size_model", "sub_records"):
    expect(a["dump"][key] == x1["dump"][key], f"1x: dump.{key} {a['dump'][key]} != {x1['dump'][key]}")

sa, s3 = a["summary"], x3["summary"]
for key in ("objects", "instances", "object_arrays", "primitive_arrays", "dangling_references"):
    expect(s3[key] == 3 * sa[key], f"3x: {key} {s3[key]} != 3 x {sa[key]}")
for key in ("classes", "reachable_classes", "class_bytes"):
    expect(s3[key] == sa[key], f"3x: {key} {s3[key]} != {sa[key]}")
expect(s3["gc_roots_by_kind"].get("sticky_class") == sa["gc_roots_by_kind"].get("sticky_class"), "3x: sticky class roots copied")
expect(s3["shallow_bytes"] - s3["class_bytes"] == 3 * (sa["shallow_bytes"] - sa["class_bytes"]), "3x: shallow bytes")
for key in ("size_model", "compressed_oops", "id_size", "dumps_in_file"):
    expect(x3["dump"][key] == a["dump"][key], f"3x: dump.{key} {x3['dump'][key]} != {a['dump'][key]}")

def by_class(report, sections):
    count, size = Counter(), Counter()
    for section in sections:
        for row in report[section]:
            count[(row["class"], row["class_id"])] += row["count"]
            size[(row["class"], row["class_id"])] += row["shallow_bytes"]
    return count, size

def non_class(report):  # class objects are counted under java.lang.Class, with its real instances
    count, size = by_class(report, ("histogram", "unreachable_histogram"))
    for key in count:
        if key[0] == "java.lang.Class":
            count[key] -= report["summary"]["classes"]
            size[key] -= report["summary"]["class_bytes"]
    return count, size

(ca, ba), (c3, b3) = non_class(a), non_class(x3)
for key in set(ca) | set(c3):
    expect(c3[key] == 3 * ca[key] and b3[key] == 3 * ba[key],
           f"3x: class {key[0]} ({key[1]}): {c3[key]} objects / {b3[key]} bytes, want 3 x {ca[key]} / {ba[key]}")
codes = lambda r: {w["code"] for w in r["warnings"]}
expect(codes(x3) <= codes(a), f"3x: new warnings {sorted(codes(x3) - codes(a))}")

def threads(report):
    def frame(f):
        return (f["class"], f["method"], f["signature"], f["line"]) + ((f["locals"],) if exact_locals else ())
    return Counter((t["name"], t["daemon"], t["state"], t["stack_known"], tuple(frame(f) for f in t["frames"]))
                   + ((t["locals"],) if exact_locals else ()) for t in report["threads"])
ta, t3 = threads(a), threads(x3)
expect(len(ta) > 0 and all(t3[k] == 3 * ta[k] for k in set(ta) | set(t3)),
       f"3x: threads are not each three times the original's ({sum(ta.values())} -> {sum(t3.values())})")

def figures(report):
    s = report["summary"]
    out = {k: s[k] for k in ("reachable_objects", "reachable_bytes", "unreachable_objects", "unreachable_bytes",
                             "retained_bytes_total", "edges", "gc_roots")}
    out.update({"roots." + k: v for k, v in s["gc_roots_by_kind"].items()})
    for (cls, cid), n in by_class(report, ("histogram",))[0].items():
        out[f"reachable {cls} ({cid})"] = n
    return out
f1, f2, f3 = figures(x1), figures(x2), figures(x3)
for key in set(f1) | set(f2) | set(f3):
    v1, v2, v3 = f1.get(key, 0), f2.get(key, 0), f3.get(key, 0)
    expect(v3 - v2 == v2 - v1, f"{key}: 1x {v1}, 2x {v2}, 3x {v3}: copies 1 and 2 add different amounts")

# ---- the input, read independently: objects, their references, non-class roots -------------
def read_hprof(path):
    data = open(path, "rb").read()
    pos = data.index(b"\0") + 1
    ids = struct.unpack_from(">I", data, pos)[0]
    rid = (lambda p: struct.unpack_from(">Q" if ids == 8 else ">I", body, p)[0])
    size = {2: ids, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
    pos += 12
    parts = []
    while pos < len(data):  # the test dumps hold one heap dump
        tag, length = data[pos], struct.unpack_from(">I", data, pos + 5)[0]
        if tag in (0x0C, 0x1C):
            parts.append(data[pos + 9:pos + 9 + length])
        pos += 9 + length
    body = b"".join(parts)
    fixed = {0xFF: (1, 0), 0x01: (2, 0), 0x02: (1, 8), 0x03: (1, 8), 0x04: (1, 4), 0x05: (1, 0), 0x06: (1, 4),
             0x07: (1, 0), 0x08: (1, 8), 0x89: (1, 0), 0x8A: (1, 0), 0x8B: (1, 0), 0x8C: (1, 0), 0x8D: (1, 0),
             0x8E: (1, 8), 0x90: (1, 0), 0xC3: (1, 9), 0xFE: (1, 4)}
    classes, objects, refs, roots, class_named = {}, set(), {}, [], []
    p = 0
    while p < len(body):
        tag = body[p]
        p += 1
        if tag in fixed:
            if tag == 0xC3:
                objects.add(rid(p))
            elif tag != 0xFE:
                roots.append(rid(p))
            p += fixed[tag][0] * ids + fixed[tag][1]
        elif tag == 0x20:
            cid, sup = rid(p), rid(p + ids + 4)
            class_named += [rid(p + i * ids + 4) for i in (2, 3, 4)]  # loader, signers, protection domain
            p += 7 * ids + 8
            for key_bytes, with_value in ((2, True), (ids, True), (ids, False)):
                count = struct.unpack_from(">H", body, p)[0]
                p += 2
                types = []
                for _ in range(count):
                    t = body[p + key_bytes]
                    types.append(t)
                    if with_value and t == 2:
                        class_named.append(rid(p + key_bytes + 1))  # object constants and statics
                    p += key_bytes + 1 + (size[t] if with_value else 0)
            classes[cid] = (sup, types)
        elif tag == 0x21:
            oid, n = rid(p), struct.unpack_from(">I", body, p + 2 * ids + 4)[0]
            objects.add(oid)
            refs[oid] = (rid(p + ids + 4), p + 2 * ids + 8)
            p += 2 * ids + 8 + n
        elif tag == 0x22:
            oid, n = rid(p), struct.unpack_from(">I", body, p + ids + 4)[0]
            objects.add(oid)
            start = p + 2 * ids + 8
            refs[oid] = [rid(start + i * ids) for i in range(n)]
            p = start + n * ids
        elif tag == 0x23:
            oid, n = rid(p), struct.unpack_from(">I", body, p + ids + 4)[0]
            objects.add(oid)
            p += ids + 9 + n * size[body[p + ids + 8]]
        else:
            raise SystemExit(f"{path}: sub-record tag {tag:#x} at {p - 1}")

    def instance_refs(cid, at):
        out = []
        while cid in classes:
            sup, types = classes[cid]
            for t in types:
                if t == 2:
                    out.append(rid(at))
                at += size[t]
            cid = sup
        return out
    edges = {o: (r if isinstance(r, list) else instance_refs(*r)) for o, r in refs.items()}
    return objects, edges, [r for r in roots if r in objects], class_named

objects, edges, object_roots, class_named = read_hprof(dump_path)

def closure(starts):  # what `starts` reach through fields and elements; classes stop the walk
    seen = {o for o in starts if o in objects}
    todo = deque(seen)
    while todo:
        for target in edges.get(todo.popleft(), ()):
            if target in objects and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen

# ---- object level ---------------------------------------------------------------------------
def read_tsv(path):
    rows = {}
    with open(path) as f:
        next(f)
        for line in f:
            id_, kind, cls, shallow, retained, retained_objects, idom = line.rstrip("\n").split("\t")
            rows[int(id_, 16)] = (kind, cls, int(shallow), int(retained), idom)
    return rows

ra = read_tsv(sys.argv[6])
objs = {i: row for i, row in ra.items() if row[0] != "class"}
expect(set(objs) == objects, f"heapgraph's objects and the Python reader's differ: {len(objs)} / {len(objects)}")
reachable = lambda rows, i: rows[i][4] != ""

def check_objects(label, r3, s3, step, reach, copy0_exact):
    """The 3x objects TSV `r3`, whose copies k >= 1 should reach exactly `reach` (shifted), and
    copy 0 what the input reaches (or more, when not `copy0_exact`)."""
    expected_ids = {i for i, row in ra.items() if row[0] == "class"} | {o + k * step for o in objs for k in range(3)}
    expect(set(r3) == expected_ids, f"{label}: {len(set(r3) - expected_ids)} unexpected and {len(expected_ids - set(r3))} missing ids")
    copy_of = {}
    for o, row in objs.items():
        for k in range(3):
            copy_of[o + k * step] = k
            got = r3.get(o + k * step)
            expect(got is not None and got[:3] == row[:3], f"{label}: {o + k * step:#x} (copy {k} of {o:#x}) is {got}, want {row[:3]}")
    for i, row in ra.items():
        if row[0] == "class":
            expect(r3.get(i, ())[:3] == row[:3], f"{label}: class {i:#x} is {r3.get(i)}")
    if problems:
        return
    for o in objs:
        expect(reachable(r3, o) == reachable(ra, o) or (not copy0_exact and reachable(r3, o)),
               f"{label}: copy 0 of {o:#x}: reachable {reachable(r3, o)}, input {reachable(ra, o)}")
        for k in (1, 2):
            expect(reachable(r3, o + k * step) == (o in reach),
                   f"{label}: {o + k * step:#x} (copy {k} of {o:#x}) reachable {reachable(r3, o + k * step)}, want {o in reach}")
    if problems:
        return
    step_bytes = sum(objs[o][2] for o in reach)
    base_objects = sum(reachable(r3, o) for o in objs)  # copy 0: the input's reachable objects (copy0_exact)
    base_bytes = sum(row[2] for i, row in r3.items() if reachable(r3, i) and copy_of.get(i, 0) == 0)  # and classes
    expect(not copy0_exact or (base_objects, base_bytes) == (sa["reachable_objects"], sa["reachable_bytes"]),
           f"{label}: copy 0 reaches {base_objects} objects, {base_bytes} bytes; the input {sa['reachable_objects']}, {sa['reachable_bytes']}")
    expect(s3["reachable_bytes"] == base_bytes + 2 * step_bytes and s3["retained_bytes_total"] == s3["reachable_bytes"],
           f"{label}: reachable bytes {s3['reachable_bytes']}, want {base_bytes} + 2 x {step_bytes}")
    expect(s3["reachable_objects"] == base_objects + 2 * len(reach), f"{label}: reachable objects")

    def idom_copy(idom):  # the copy an immediate dominator lies in: -1 for the super root or a class
        return -1 if idom == "root" or int(idom, 16) not in copy_of else copy_of[int(idom, 16)]
    for i, row in r3.items():
        if row[4] == "":
            continue
        k, d = copy_of.get(i, -1), idom_copy(row[4])
        expect(d == k if k >= 1 and row[4] != "root" else d <= 0, f"{label}: {i:#x} (copy {k}) is dominated by {row[4]} (copy {d})")
    for o in reach:
        one, two = r3[o + step], r3[o + 2 * step]
        same_idom = one[4] == two[4] == "root" or (one[4] not in ("", "root") and two[4] not in ("", "root")
                                                   and int(two[4], 16) - int(one[4], 16) == step)
        expect(same_idom and one[3] == two[3], f"{label}: copies 1 and 2 of {o:#x} differ: {one} / {two}")
    return step_bytes

# Plain: copy k >= 1 reaches what the input's non-class roots reach without passing a class.
step_bytes = check_objects("3x", read_tsv(sys.argv[10]), s3, step, closure(object_roots), True)
# --root-class-refs: also what the class dumps name (their static fields, loaders, ...). Copy 0
# may then reach more than the input: a copy's instance makes its class reachable, and with it
# the class's static fields in copy 0, even for a class the input does not reach.
rs3, rstep = json.load(open(sys.argv[11]))["summary"], int(sys.argv[13], 16)
rooted_bytes = check_objects("3x --root-class-refs", read_tsv(sys.argv[12]), rs3, rstep, closure(object_roots + class_named), False)
expect(rs3["gc_roots_by_kind"].get("unknown", 0) - sa["gc_roots_by_kind"].get("unknown", 0) >= 2 * len(set(class_named) & objects) > 0,
       "3x --root-class-refs: ROOT UNKNOWN records missing")

if problems:
    print(f"{name}: {len(problems)} problem(s)", *problems[:20], sep="\n  ")
    sys.exit(1)
print(f"{name}: ok (objects {sa['objects']} -> {s3['objects']}; reachable bytes {sa['reachable_bytes']} -> "
      f"{s3['reachable_bytes']} = + 2 x {step_bytes}; with --root-class-refs {rs3['reachable_bytes']} = + 2 x {rooted_bytes})")
EOF
}

for entry in "${dumps[@]}"; do
    IFS='|' read -r name dump exact_locals <<<"$entry"
    [ -f "$data/$dump" ] || fail "$data/$dump missing"
    analyze "$data/$dump" "$work/$name.json" "$work/$name.tsv"
    for n in 1 2 3; do
        "$rep" "$data/$dump" "$work/$name-x$n.hprof" "$n" >"$work/$name-x$n.log" || fail "replicate_hprof $dump x$n exited with $?"
        tsv=()
        [ "$n" != 3 ] || tsv=("$work/$name-x3.tsv")
        analyze "$work/$name-x$n.hprof" "$work/$name-x$n.json" "${tsv[@]}"
    done
    "$rep" --root-class-refs "$data/$dump" "$work/$name-r3.hprof" 3 >"$work/$name-r3.log" ||
        fail "replicate_hprof --root-class-refs $dump x3 exited with $?"
    analyze "$work/$name-r3.hprof" "$work/$name-r3.json" "$work/$name-r3.tsv"
    step=$(sed -n 's/.*object id step \(0x[0-9a-f]*\).*/\1/p' "$work/$name-x3.log")
    rstep=$(sed -n 's/.*object id step \(0x[0-9a-f]*\).*/\1/p' "$work/$name-r3.log")
    [ -n "$step" ] && [ -n "$rstep" ] || fail "replicate_hprof printed no object id step: $(cat "$work/$name"-[xr]3.log)"
    check "$name" "$exact_locals" "$step" "$data/$dump" "$work/$name.json" "$work/$name.tsv" \
        "$work/$name-x1.json" "$work/$name-x2.json" "$work/$name-x3.json" "$work/$name-x3.tsv" \
        "$work/$name-r3.json" "$work/$name-r3.tsv" "$rstep" ||
        fail "$name: the replicas break the relations above"
    [ "$name" = leakdemo ] || rm -f "$work/$name"-x*.hprof
done

# Sub-records that continue in the next segment (Android writers do this): leakdemo's heap dump
# cut into segments of 1-9 KiB at arbitrary bytes. Each copy holds such a sub-record whole, so
# the 3x replica describes the same heap as leakdemo's, object for object.
python3 - "$data/samples/leakdemo.hprof" "$work/resegmented.hprof" <<'EOF'
import random, struct, sys
data = open(sys.argv[1], "rb").read()
pos = data.index(b"\0") + 13
out, heap = [data[:pos]], []
while pos < len(data):
    tag, length = data[pos], struct.unpack_from(">I", data, pos + 5)[0]
    if tag == 0x1C:
        heap.append(data[pos + 9:pos + 9 + length])
    elif tag == 0x2C:
        body, at, rng = b"".join(heap), 0, random.Random(1)
        while at < len(body):
            n = rng.randint(1024, 9216)
            out.append(struct.pack(">BII", 0x1C, 0, len(body[at:at + n])) + body[at:at + n])
            at += n
        out.append(data[pos:pos + 9 + length])
    else:
        out.append(data[pos:pos + 9 + length])
    pos += 9 + length
open(sys.argv[2], "wb").write(b"".join(out))
EOF
"$rep" "$work/resegmented.hprof" "$work/resegmented-x3.hprof" 3 >"$work/resegmented.log" || fail "replicate_hprof resegmented.hprof exited with $?"
grep -q "sub-record(s) continued in the next segment" "$work/resegmented.log" || fail "resegmented.hprof: no split sub-record seen"
analyze "$work/resegmented-x3.hprof" "$work/resegmented-x3.json" "$work/resegmented-x3.tsv"
cmp -s "$work/leakdemo-x3.tsv" "$work/resegmented-x3.tsv" || fail "resegmented.hprof 3x: objects differ from leakdemo 3x"
python3 - "$work/leakdemo-x3.json" "$work/resegmented-x3.json" <<'EOF' || fail "resegmented.hprof 3x: report differs from leakdemo 3x"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
differ = [key for key in a if key != "dump" and a[key] != b[key]]
print(f"resegmented: {'ok' if not differ else 'sections differ: ' + ', '.join(differ)}")
sys.exit(1 if differ else 0)
EOF
rm -f "$work"/leakdemo-x*.hprof "$work"/resegmented*.hprof
# A dangling reference just below the object ids: with S from the objects alone (0x18), copy 1
# would move it onto object 0x1010 of copy 0. The step must widen so that it stays dangling.
python3 - "$work/dangling.hprof" <<'EOF'
import struct, sys
def record(tag, body):
    return struct.pack(">BII", tag, 0, len(body)) + body
def instance(object_id, field):
    return struct.pack(">BIIII", 0x21, object_id, 0, 0x100, 4) + struct.pack(">I", field)
heap = (struct.pack(">BIIIIIIII", 0x20, 0x100, 0, 0, 0, 0, 0, 0, 0)  # CLASS DUMP 0x100, no super
        + struct.pack(">IHHH", 4, 0, 0, 1) + struct.pack(">IB", 2, 2)   # size 4; one object field "next"
        + struct.pack(">BI", 0xFF, 0x1000)                              # ROOT UNKNOWN 0x1000
        + instance(0x1000, 0x0FF8) + instance(0x1010, 0))               # 0x1000.next = 0x0ff8: not dumped
open(sys.argv[1], "wb").write(
    b"JAVA PROFILE 1.0.2\0" + struct.pack(">III", 4, 0, 0)
    + record(0x01, struct.pack(">I", 1) + b"Node") + record(0x01, struct.pack(">I", 2) + b"next")
    + record(0x02, struct.pack(">IIII", 1, 0x100, 0, 1)) + record(0x1C, heap) + record(0x2C, b""))
EOF
"$rep" "$work/dangling.hprof" "$work/dangling-x3.hprof" 3 >/dev/null || fail "replicate_hprof dangling.hprof exited with $?"
analyze "$work/dangling-x3.hprof" "$work/dangling-x3.json"
python3 - "$work/dangling-x3.json" <<'EOF' || fail "dangling.hprof: a shifted dangling reference reached another copy's object"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(f"dangling: objects {s['objects']}, reachable {s['reachable_objects']}, dangling references {s['dangling_references']}")
sys.exit(0 if (s["objects"], s["reachable_objects"], s["dangling_references"]) == (6, 3, 3) else 1)
EOF

# That small dump cut at every byte: a cut between records leaves a valid dump (exit 0); any
# other cut is exit 1 naming the file and an offset.
python3 - "$rep" "$work/dangling.hprof" "$work/cut-here.hprof" <<'EOF' || fail "a cut of dangling.hprof was not reported as it should be"
import struct, subprocess, sys
rep, path, cut = sys.argv[1:4]
data = open(path, "rb").read()
ends, pos = set(), data.index(b"\0") + 13
ends.add(pos)
while pos < len(data):
    pos += 9 + struct.unpack_from(">I", data, pos + 5)[0]
    ends.add(pos)
for length in range(len(data)):
    open(cut, "wb").write(data[:length])
    run = subprocess.run([rep, cut, cut + ".out", "3"], capture_output=True, text=True)
    want = 0 if length in ends else 1
    if run.returncode != want or (want == 1 and not run.stderr.startswith(f"replicate_hprof: {cut} @0x")):
        sys.exit(f"cut at {length}: exit code {run.returncode} (want {want}): {run.stderr.strip()}")
print(f"cut at every byte of dangling.hprof ok ({len(data)} cuts)")
EOF

# A segmented dump with its HEAP DUMP END is its own 1x replica, byte for byte.
"$rep" "$data/samples/leakdemo.hprof" "$work/same.hprof" 1 >/dev/null
cmp -s "$data/samples/leakdemo.hprof" "$work/same.hprof" || fail "leakdemo 1x is not byte-equal to the input"

# expect_error IN OUT PATTERN: exit code 1, a message matching PATTERN, and no output left.
expect_error() {
    local rc=0 message
    message=$("$rep" "$1" "$2" 3 2>&1 >/dev/null) || rc=$?
    [ "$rc" -eq 1 ] || fail "replicate_hprof $1: exit code $rc, want 1 ($message)"
    grep -qE -- "$3" <<<"$message" || fail "replicate_hprof $1: message '$message' does not match '$3'"
    [ ! -e "$2" ] && ! compgen -G "$2.tmp.*" >/dev/null || fail "replicate_hprof $1 left output behind"
    echo "bad input ok: $message"
}

leakdemo=$data/samples/leakdemo.hprof
size=$(stat -c %s "$leakdemo")
head -c $((size / 2)) "$leakdemo" >"$work/cut.hprof"
expect_error "$work/cut.hprof" "$work/cut-x3.hprof" "cut\.hprof @0x[0-9a-f]+: HEAP_DUMP_SEGMENT .*runs past the end of the file"

# The first heap dump segment's first sub-record tag, overwritten with 0x42 (no such tag).
first_sub=$(python3 - "$leakdemo" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
pos = data.index(b"\0") + 13
while data[pos] != 0x1C:
    pos += 9 + struct.unpack_from(">I", data, pos + 5)[0]
print(pos + 9)
EOF
)
cp "$leakdemo" "$work/damaged.hprof"
printf '\x42' | dd of="$work/damaged.hprof" bs=1 seek="$first_sub" conv=notrunc status=none
expect_error "$work/damaged.hprof" "$work/damaged-x3.hprof" "$(printf 'damaged\\.hprof @0x%08x: sub-record tag 0x42 ' "$first_sub")"

cp "$leakdemo" "$work/self.hprof"
ln -s self.hprof "$work/link.hprof"
for out in "$work/self.hprof" "$work/link.hprof"; do
    rc=0
    message=$("$rep" "$work/self.hprof" "$out" 3 2>&1 >/dev/null) || rc=$?
    [ "$rc" -eq 1 ] && grep -q "is the input file" <<<"$message" || fail "OUT = IN ($out): exit code $rc, '$message'"
    cmp -s "$leakdemo" "$work/self.hprof" || fail "OUT = IN ($out): the input changed"
    ! compgen -G "$out.tmp.*" >/dev/null || fail "OUT = IN ($out): a temporary file was left"
done
echo "bad input ok: $message"
echo "replicate_test: all checks passed"
