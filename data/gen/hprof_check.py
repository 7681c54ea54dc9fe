#!/usr/bin/env python3
"""Independent (non-heapgraph) HPROF reader used to sanity-check the sample dumps.

usage: hprof_check.py DUMP.hprof [HISTO.txt] [--sizes] [--top N]

* counts instances / arrays per class straight from the dump,
* compares them with a `jcmd GC.class_histogram -all` output (if given),
* checks the LeakDemo expectations (exact counts, reachability of each structure).
Exit status 1 if a LeakDemo expectation fails.
"""
import struct
import sys
from collections import Counter, defaultdict, deque

PRIM = {4: ("[Z", 1), 5: ("[C", 2), 6: ("[F", 4), 7: ("[D", 8),
        8: ("[B", 1), 9: ("[S", 2), 10: ("[I", 4), 11: ("[J", 8)}
TAG_NAMES = {0x01: "UTF8", 0x02: "LOAD_CLASS", 0x04: "FRAME", 0x05: "TRACE",
             0x0C: "HEAP_DUMP", 0x1C: "HEAP_DUMP_SEGMENT", 0x2C: "HEAP_DUMP_END"}
SUB_NAMES = {0xFF: "ROOT_UNKNOWN", 0x01: "ROOT_JNI_GLOBAL", 0x02: "ROOT_JNI_LOCAL",
             0x03: "ROOT_JAVA_FRAME", 0x04: "ROOT_NATIVE_STACK", 0x05: "ROOT_STICKY_CLASS",
             0x06: "ROOT_THREAD_BLOCK", 0x07: "ROOT_MONITOR_USED", 0x08: "ROOT_THREAD_OBJECT",
             0x20: "CLASS_DUMP", 0x21: "INSTANCE_DUMP", 0x22: "OBJ_ARRAY_DUMP",
             0x23: "PRIM_ARRAY_DUMP"}


def parse(path):
    data = open(path, "rb").read()
    nul = data.index(b"\0")
    version = data[:nul].decode()
    idsz = struct.unpack_from(">I", data, nul + 1)[0]
    pos = nul + 1 + 4 + 8
    idfmt = ">Q" if idsz == 8 else ">I"
    tsize = {2: idsz, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}

    def rid(p):
        return struct.unpack_from(idfmt, data, p)[0]

    strings = {}
    class_name = {}          # class obj id -> name
    classes = {}             # class id -> dict(super, fields=[(name_id, type)], statics=[refs])
    instances = {}           # obj id -> (class id, field bytes offset, length)
    objarrays = {}           # obj id -> (array class id, [ids])
    primarrays = {}          # obj id -> (type, length)
    prim_off = {}            # obj id -> offset of the array contents in the file
    roots = []               # (kind, obj id, extra)
    tag_bytes = Counter()
    sub_bytes = Counter()
    thread_serial = {}       # thread serial -> thread obj id

    while pos < len(data):
        tag, _t, length = struct.unpack_from(">BII", data, pos)
        body = pos + 9
        end = body + length
        tag_bytes[TAG_NAMES.get(tag, hex(tag))] += 9 + length
        if tag == 0x01:
            strings[rid(body)] = data[body + idsz:end].decode("utf-8", "replace")
        elif tag == 0x02:
            class_name[rid(body + 4)] = rid(body + 8 + idsz)
        elif tag in (0x0C, 0x1C):
            p = body
            while p < end:
                st = data[p]
                start = p
                p += 1
                if st == 0xFF or st == 0x05 or st == 0x07:
                    roots.append((SUB_NAMES[st], rid(p), None)); p += idsz
                elif st == 0x01:
                    roots.append(("ROOT_JNI_GLOBAL", rid(p), None)); p += 2 * idsz
                elif st == 0x02 or st == 0x03:
                    ser, fr = struct.unpack_from(">II", data, p + idsz)
                    roots.append((SUB_NAMES[st], rid(p), ser)); p += idsz + 8
                elif st == 0x04 or st == 0x06:
                    ser = struct.unpack_from(">I", data, p + idsz)[0]
                    roots.append((SUB_NAMES[st], rid(p), ser)); p += idsz + 4
                elif st == 0x08:
                    ser = struct.unpack_from(">I", data, p + idsz)[0]
                    thread_serial[ser] = rid(p)
                    roots.append(("ROOT_THREAD_OBJECT", rid(p), ser)); p += idsz + 8
                elif st == 0x20:
                    cid = rid(p)
                    sup = rid(p + 4 + idsz)
                    p += 4 + 7 * idsz + 4
                    (ncp,) = struct.unpack_from(">H", data, p); p += 2
                    for _ in range(ncp):
                        ty = data[p + 2]; p += 3 + tsize[ty]
                    (nst,) = struct.unpack_from(">H", data, p); p += 2
                    statics = []
                    for _ in range(nst):
                        ty = data[p + idsz]; p += idsz + 1
                        if ty == 2:
                            v = rid(p)
                            if v:
                                statics.append(v)
                        p += tsize[ty]
                    (nf,) = struct.unpack_from(">H", data, p); p += 2
                    fields = []
                    for _ in range(nf):
                        fields.append((rid(p), data[p + idsz])); p += idsz + 1
                    classes[cid] = {"super": sup, "fields": fields, "statics": statics}
                elif st == 0x21:
                    oid = rid(p)
                    cid = rid(p + 4 + idsz)
                    (n,) = struct.unpack_from(">I", data, p + 4 + 2 * idsz)
                    off = p + 8 + 2 * idsz
                    instances[oid] = (cid, off, n)
                    p = off + n
                elif st == 0x22:
                    oid = rid(p)
                    (n,) = struct.unpack_from(">I", data, p + idsz + 4)
                    acid = rid(p + idsz + 8)
                    q = p + 2 * idsz + 8
                    objarrays[oid] = (acid, [rid(q + i * idsz) for i in range(n)])
                    p = q + n * idsz
                elif st == 0x23:
                    oid = rid(p)
                    n, ty = struct.unpack_from(">IB", data, p + idsz + 4)
                    primarrays[oid] = (ty, n)
                    prim_off[oid] = p + idsz + 9
                    p += idsz + 9 + n * PRIM[ty][1]
                else:
                    raise SystemExit("unknown heap sub-record 0x%02x at %d" % (st, start))
                sub_bytes[SUB_NAMES[st]] += p - start
        pos = end

    # HPROF uses internal names (java/lang/String); hidden classes keep HotSpot's internal
    # '+' separator (Foo$$Lambda$16+0x...), which Class.getName()/jcmd print as '/'.
    names = {cid: strings.get(nid, "?").replace("/", ".").replace("+0x", "/0x")
             for cid, nid in class_name.items()}
    return dict(version=version, idsz=idsz, data=data, strings=strings, names=names,
                classes=classes, instances=instances, objarrays=objarrays,
                primarrays=primarrays, prim_off=prim_off, roots=roots, tag_bytes=tag_bytes, sub_bytes=sub_bytes,
                thread_serial=thread_serial, tsize=tsize, rid=rid)


def refs_of_instance(h, oid):
    cid, off, n = h["instances"][oid]
    out = []
    p = off
    c = cid
    while c:
        info = h["classes"][c]
        for _name, ty in info["fields"]:
            if ty == 2:
                v = h["rid"](p)
                if v:
                    out.append(v)
            p += h["tsize"][ty]
        c = info["super"]
    assert p == off + n, "field layout mismatch"
    return out


def field_values(h, oid):
    cid, off, n = h["instances"][oid]
    vals = {}
    p = off
    c = cid
    fmt = {4: ">b", 5: ">H", 6: ">f", 7: ">d", 8: ">b", 9: ">h", 10: ">i", 11: ">q"}
    while c:
        for name_id, ty in h["classes"][c]["fields"]:
            name = h["strings"][name_id]
            if ty == 2:
                v = h["rid"](p)
            else:
                v = struct.unpack_from(fmt[ty], h["data"], p)[0]
            vals.setdefault(name, v)
            p += h["tsize"][ty]
        c = h["classes"][c]["super"]
    return vals


def histogram(h):
    cnt = Counter()
    byname = h["names"]
    for cid, _o, _n in h["instances"].values():
        cnt[byname.get(cid, hex(cid))] += 1
    for acid, _ in h["objarrays"].values():
        cnt[byname.get(acid, hex(acid))] += 1
    for ty, _n in h["primarrays"].values():
        cnt[PRIM[ty][0]] += 1
    return cnt


def read_histo(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) >= 4 and parts[0].endswith(":") and parts[0][:-1].isdigit():
            out[parts[3]] = (int(parts[1]), int(parts[2]))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    h = parse(args[0])
    print("%s  id size %d  file %d bytes" % (h["version"], h["idsz"], len(h["data"])))
    print("records: " + ", ".join("%s=%d" % kv for kv in h["tag_bytes"].most_common()))
    print("heap sub-records: " + ", ".join("%s=%d" % kv for kv in h["sub_bytes"].most_common()))
    print("objects: %d instances, %d object arrays, %d primitive arrays, %d classes, %d roots"
          % (len(h["instances"]), len(h["objarrays"]), len(h["primarrays"]),
             len(h["classes"]), len(h["roots"])))
    cnt = histogram(h)
    if "--sizes" in sys.argv:
        prim_bytes = Counter()
        for ty, n in h["primarrays"].values():
            prim_bytes[PRIM[ty][0]] += n * PRIM[ty][1]
        print("primitive array payload bytes: " + ", ".join("%s=%d" % kv for kv in prim_bytes.most_common()))
        big = sorted(((n * PRIM[ty][1], PRIM[ty][0], n) for ty, n in h["primarrays"].values()), reverse=True)[:10]
        print("largest primitive arrays: " + ", ".join("%s[%d]" % (t, n) for _b, t, n in big))
    top = 15
    for a in sys.argv:
        if a.startswith("--top="):
            top = int(a[6:])
    print("top classes by count in dump:")
    for name, c in cnt.most_common(top):
        print("  %8d  %s" % (c, name))

    ok = True
    if len(args) > 1:
        hist = read_histo(args[1])
        ncls = len(h["classes"])
        print("histogram vs dump (classes whose counts differ; java.lang.Class is compared with the\n"
              "  CLASS_DUMP count + 9, since the 9 primitive/void mirrors get no CLASS_DUMP):")
        ndiff = 0
        for name in sorted(set(hist) | set(cnt)):
            hc = hist.get(name, (0, 0))[0]
            dc = ncls + 9 if name == "java.lang.Class" else cnt.get(name, 0)
            if hc != dc:
                ndiff += 1
                print("  %-60s histo=%d dump=%d" % (name, hc, dc))
        print("  %d differing classes out of %d" % (ndiff, len(set(hist) | set(cnt))))
        for name in EXPECT:
            if hist.get(name, (0, 0))[0] != EXPECT[name]:
                ok = False
                print("FAIL histogram %s = %d, expected %d" % (name, hist.get(name, (0, 0))[0], EXPECT[name]))

    ok &= check_leakdemo(h, cnt)
    print("LeakDemo checks: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


EXPECT = {"LeakDemo$Session": 2000, "LeakDemo$Node": 500, "LeakDemo$TreeNode": 127,
          "LeakDemo$Holder": 1, "LeakDemo$HolderThread": 1, "LeakDemo$Garbage": 1000,
          "[LLeakDemo$Session;": 1, "[LLeakDemo$Node;": 1, "[LLeakDemo$TreeNode;": 7,
          "[[LLeakDemo$TreeNode;": 1}


def check_leakdemo(h, cnt):
    ok = True

    def check(cond, msg):
        nonlocal ok
        print(("  ok   " if cond else "  FAIL ") + msg)
        ok &= bool(cond)

    print("LeakDemo expectations:")
    for name, n in EXPECT.items():
        check(cnt.get(name, 0) == n, "%s instances = %d (expected %d)" % (name, cnt.get(name, 0), n))
    check(cnt.get("LeakDemo", 0) == 0, "LeakDemo instances = 0")

    by_class = defaultdict(list)
    for oid, (cid, _o, _n) in h["instances"].items():
        by_class[h["names"].get(cid)].append(oid)
    bylen = Counter((PRIM[ty][0], n) for ty, n in h["primarrays"].values())
    print("  byte[1024] in dump: %d, byte[99]: %d, byte[12]: %d, long[512]: %d"
          % (bylen[("[B", 1024)], bylen[("[B", 99)], bylen[("[B", 12)], bylen[("[J", 512)]))

    # session payloads
    payload_ids = set()
    seqs = set()
    for s in by_class["LeakDemo$Session"]:
        f = field_values(h, s)
        payload_ids.add(f["payload"])
        seqs.add(f["seq"])
    check(all(h["primarrays"].get(p) == (8, 1024) for p in payload_ids) and len(payload_ids) == 2000,
          "2000 distinct Session.payload byte[1024]")
    check(seqs == set(range(2000)), "Session.seq covers 0..1999")
    good = 0
    for s in by_class["LeakDemo$Session"]:
        f = field_values(h, s)
        off = h["prim_off"][f["payload"]]
        want = bytes((f["seq"] + j) & 0xFF for j in range(1024))
        sid = f["id"]
        sval = field_values(h, sid).get("value") if sid in h["instances"] else None
        ok_id = sval in h["prim_off"] and h["data"][h["prim_off"][sval]:h["prim_off"][sval] + 12] \
            == ("session-%04d" % f["seq"]).encode()
        good += h["data"][off:off + 1024] == want and ok_id
    check(good == 2000, "Session payload bytes == (byte)(seq+j) and id == session-%04d(seq)")
    check(sorted(field_values(h, n)["value"] for n in by_class["LeakDemo$Node"]) == list(range(500)),
          "Node.value covers 0..499")
    garb_junk = {field_values(h, g)["junk"] for g in by_class["LeakDemo$Garbage"]}
    check(len(garb_junk) == 1000 and all(h["primarrays"].get(j) == (8, 99) for j in garb_junk),
          "1000 distinct Garbage.junk byte[99]")

    # reachability from GC roots (+ all classes, whose statics hold references)
    seen = set()
    dq = deque()

    def push(o):
        if o and o not in seen:
            seen.add(o)
            dq.append(o)

    for _k, o, _e in h["roots"]:
        push(o)
    for c in h["classes"]:
        push(c)
    while dq:
        o = dq.popleft()
        if o in h["instances"]:
            for r in refs_of_instance(h, o):
                push(r)
        elif o in h["objarrays"]:
            for r in h["objarrays"][o][1]:
                push(r)
        elif o in h["classes"]:
            for r in h["classes"][o]["statics"]:
                push(r)
    for name in ("LeakDemo$Session", "LeakDemo$Node", "LeakDemo$TreeNode", "LeakDemo$Holder",
                 "LeakDemo$HolderThread"):
        check(all(o in seen for o in by_class[name]), "all %s reachable" % name)
    check(not any(o in seen for o in by_class["LeakDemo$Garbage"]), "no LeakDemo$Garbage reachable")

    # Holder only via a Java frame root of thread leakdemo-holder
    holders = by_class["LeakDemo$Holder"]
    if holders:
        hid = holders[0]
        frame_roots = [e for k, o, e in h["roots"] if o == hid and k == "ROOT_JAVA_FRAME"]
        thread = by_class["LeakDemo$HolderThread"][0] if by_class["LeakDemo$HolderThread"] else None
        check(frame_roots and all(h["thread_serial"].get(s) == thread for s in frame_roots),
              "Holder is a ROOT_JAVA_FRAME of the LeakDemo$HolderThread thread")
        referrers = [o for o in h["instances"] if hid in refs_of_instance(h, o)]
        referrers += [o for o, (_c, ids) in h["objarrays"].items() if hid in ids]
        check(not referrers, "no object references the Holder (referrers: %d)" % len(referrers))
    unreachable = len(set(h["instances"]) | set(h["objarrays"]) | set(h["primarrays"])) - \
        len(seen - set(h["classes"]))
    print("  unreachable objects in dump (all classes): %d" % unreachable)
    return ok


if __name__ == "__main__":
    sys.exit(main())
