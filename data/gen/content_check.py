#!/usr/bin/env python3
"""Independent (non-heapgraph) check of the ContentDemo sample against its expected.json.

usage: content_check.py contentdemo.hprof[.gz] contentdemo.expected.json [contentdemo.threads.txt]

Reads the HPROF itself and checks, for every group in expected.json: the number of objects with
the planted content in the WHOLE dump (not only in the holder), distinct backing arrays, array
lengths, String coders, collection sizes and capacities, bucket occupancy, the planted threads'
stack traces, daemon flags and the frame roots of their big locals, the system properties, and
(if given) that Thread.print shows the same threads and frames. Exit status 1 on any mismatch.
"""
import gzip
import json
import re
import struct
import sys
from collections import Counter, defaultdict

PRIM = {4: ("boolean", 1), 5: ("char", 2), 6: ("float", 4), 7: ("double", 8),
        8: ("byte", 1), 9: ("short", 2), 10: ("int", 4), 11: ("long", 8)}
PRIM_FMT = {4: "b", 5: "H", 6: "f", 7: "d", 8: "b", 9: "h", 10: "i", 11: "q"}


class Dump:
    def __init__(self, path):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            data = f.read()
        self.data = data
        nul = data.index(b"\0")
        idsz = struct.unpack_from(">I", data, nul + 1)[0]
        self.idsz = idsz
        idfmt = ">Q" if idsz == 8 else ">I"
        tsize = {2: idsz, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
        self.tsize = tsize

        def rid(p):
            return struct.unpack_from(idfmt, data, p)[0]
        self.rid = rid

        self.utf8 = {}
        self.class_name = {}       # class id -> name (dotted)
        self.class_by_serial = {}  # class serial -> class id
        self.frames = {}           # frame id -> (method, class serial)
        self.traces = {}           # trace serial -> [frame ids]
        self.classes = {}          # class id -> (super, [(field name, type)], {static name: (type, value)})
        self.instances = {}        # id -> (class id, offset, length)
        self.objarrays = {}        # id -> (array class id, [ids])
        self.primarrays = {}       # id -> (type, length, offset)
        self.roots = []            # (kind, id, thread serial, frame number)
        self.thread_objects = {}   # thread serial -> (thread object id, trace serial)
        names = {}
        pos = nul + 1 + 4 + 8
        while pos < len(data):
            tag, _t, length = struct.unpack_from(">BII", data, pos)
            body, end = pos + 9, pos + 9 + length
            if tag == 0x01:
                self.utf8[rid(body)] = data[body + idsz:end].decode("utf-8", "replace")
            elif tag == 0x02:
                serial = struct.unpack_from(">I", data, body)[0]
                cid = rid(body + 4)
                names[cid] = rid(body + 8 + idsz)
                self.class_by_serial[serial] = cid
            elif tag == 0x04:
                fid = rid(body)
                mname = rid(body + idsz)
                cser = struct.unpack_from(">I", data, body + 4 * idsz)[0]
                self.frames[fid] = (mname, cser)
            elif tag == 0x05:
                tser, _thr, n = struct.unpack_from(">III", data, body)
                self.traces[tser] = [rid(body + 12 + i * idsz) for i in range(n)]
            elif tag in (0x0C, 0x1C):
                self._heap(body, end)
            pos = end
        self.names = {cid: self.utf8.get(nid, "?").replace("/", ".") for cid, nid in names.items()}
        self.by_name = {n: c for c, n in self.names.items()}

    def _heap(self, p, end):
        data, idsz, rid, tsize = self.data, self.idsz, self.rid, self.tsize
        while p < end:
            st = data[p]
            p += 1
            if st in (0xFF, 0x05, 0x07):
                self.roots.append((st, rid(p), None, None)); p += idsz
            elif st == 0x01:
                self.roots.append((st, rid(p), None, None)); p += 2 * idsz
            elif st in (0x02, 0x03):
                ser, fr = struct.unpack_from(">Ii", data, p + idsz)
                self.roots.append((st, rid(p), ser, fr)); p += idsz + 8
            elif st in (0x04, 0x06):
                ser = struct.unpack_from(">I", data, p + idsz)[0]
                self.roots.append((st, rid(p), ser, None)); p += idsz + 4
            elif st == 0x08:
                ser, tr = struct.unpack_from(">II", data, p + idsz)
                self.thread_objects[ser] = (rid(p), tr)
                self.roots.append((st, rid(p), ser, None)); p += idsz + 8
            elif st == 0x20:
                cid = rid(p)
                sup = rid(p + 4 + idsz)
                p += 4 + 7 * idsz + 4
                (ncp,) = struct.unpack_from(">H", data, p); p += 2
                for _ in range(ncp):
                    ty = data[p + 2]; p += 3 + tsize[ty]
                (nst,) = struct.unpack_from(">H", data, p); p += 2
                statics = {}
                for _ in range(nst):
                    nid, ty = rid(p), data[p + idsz]; p += idsz + 1
                    statics[nid] = (ty, rid(p) if ty == 2 else None)
                    p += tsize[ty]
                (nf,) = struct.unpack_from(">H", data, p); p += 2
                fields = []
                for _ in range(nf):
                    fields.append((rid(p), data[p + idsz])); p += idsz + 1
                self.classes[cid] = (sup, fields, statics)
            elif st == 0x21:
                oid, cid = rid(p), rid(p + 4 + idsz)
                (n,) = struct.unpack_from(">I", data, p + 4 + 2 * idsz)
                off = p + 8 + 2 * idsz
                self.instances[oid] = (cid, off, n)
                p = off + n
            elif st == 0x22:
                oid = rid(p)
                (n,) = struct.unpack_from(">I", data, p + idsz + 4)
                acid = rid(p + idsz + 8)
                q = p + 2 * idsz + 8
                self.objarrays[oid] = (acid, [rid(q + i * idsz) for i in range(n)])
                p = q + n * idsz
            elif st == 0x23:
                oid = rid(p)
                n, ty = struct.unpack_from(">IB", data, p + idsz + 4)
                self.primarrays[oid] = (ty, n, p + idsz + 9)
                p += idsz + 9 + n * PRIM[ty][1]
            else:
                raise SystemExit("unknown heap sub-record 0x%02x" % st)

    def fields(self, oid):
        cid, off, _n = self.instances[oid]
        vals = {}
        p = off
        while cid:
            sup, fields, _s = self.classes[cid]
            for nid, ty in fields:
                name = self.utf8[nid]
                v = self.rid(p) if ty == 2 else struct.unpack_from(">" + PRIM_FMT[ty], self.data, p)[0]
                vals.setdefault(name, v)
                p += self.tsize[ty]
            cid = sup
        return vals

    def refs(self, oid):
        if oid in self.objarrays:
            return [r for r in self.objarrays[oid][1] if r]
        if oid not in self.instances:
            return []
        cid, off, _n = self.instances[oid]
        out, p = [], off
        while cid:
            sup, fields, _s = self.classes[cid]
            for _nid, ty in fields:
                if ty == 2:
                    v = self.rid(p)
                    if v:
                        out.append(v)
                p += self.tsize[ty]
            cid = sup
        return out

    def static(self, cls, name):
        for nid, (_ty, v) in self.classes[self.by_name[cls]][2].items():
            if self.utf8[nid] == name:
                return v
        raise KeyError(cls + "." + name)

    def prim_bytes(self, aid):
        ty, n, off = self.primarrays[aid]
        return self.data[off:off + n * PRIM[ty][1]]

    def string(self, sid):
        f = self.fields(sid)
        raw = self.prim_bytes(f["value"])
        # HotSpot writes the byte[] as it is in memory: UTF-16 in the machine's order (little-endian here)
        return raw.decode("latin-1") if f["coder"] == 0 else raw.decode("utf-16-le")

    def class_of(self, oid):
        if oid in self.instances:
            return self.names[self.instances[oid][0]]
        return self.names[self.objarrays[oid][0]]


def main():
    dump = Dump(sys.argv[1])
    exp = json.load(open(sys.argv[2]))
    threads_txt = open(sys.argv[3]).read() if len(sys.argv) > 3 else None
    failures = 0

    def check(cond, msg):
        nonlocal failures
        if not cond:
            failures += 1
        print(("  ok   " if cond else "  FAIL ") + msg)

    print("ContentDemo checks (%d instances, %d object arrays, %d primitive arrays):"
          % (len(dump.instances), len(dump.objarrays), len(dump.primarrays)))

    string_cid = dump.by_name["java.lang.String"]
    by_text = defaultdict(list)
    for oid, (cid, _o, _n) in dump.instances.items():
        if cid == string_cid:
            by_text[dump.string(oid)].append(oid)

    def holder(path):
        cls, name = path.rsplit(".", 1)
        return dump.static(cls, name)

    for g in exp["strings"]:
        ids = by_text.get(g["value"], [])
        fields = [dump.fields(s) for s in ids]
        arrays = {f["value"] for f in fields}
        held = dump.objarrays[holder(g["holder"])][1]
        check(len(ids) == g["count"] and len(set(held)) == g["count"] and set(held) == set(ids),
              "strings %-12s %d in the dump, %d in %s (expected %d)"
              % (g["name"], len(ids), len(set(held)), g["holder"], g["count"]))
        check(len(arrays) == g["distinct_arrays"],
              "strings %-12s %d distinct value arrays (expected %d)" % (g["name"], len(arrays), g["distinct_arrays"]))
        check({f["coder"] for f in fields} == {g["coder"]}
              and {dump.primarrays[a][:2] for a in arrays} == {(8, g["array_length"])},
              "strings %-12s coder %s, byte[%s] (expected %d, byte[%d])"
              % (g["name"], sorted({f["coder"] for f in fields}),
                 sorted({dump.primarrays[a][1] for a in arrays}), g["coder"], g["array_length"]))
        check(g["wasted_bytes"] == (g["count"] - 1) * g["string_shallow"]
              + (g["distinct_arrays"] - 1) * g["array_shallow"], "strings %-12s wasted_bytes follows the rule" % g["name"])

    content_of = {"int": lambda i: i * 7, "byte": lambda i: ((i * 31 + 7) & 0xFF) - (256 if ((i * 31 + 7) & 0xFF) > 127 else 0),
                  "long": lambda i: i * 1000000007}
    tcode = {"int": 10, "byte": 8, "long": 11}
    for g in exp["arrays"]:
        ty, n = tcode[g["element_type"]], g["length"]
        want = struct.pack(">%d%s" % (n, PRIM_FMT[ty]), *[content_of[g["element_type"]](i) for i in range(n)])
        same = [a for a, (t, ln, _o) in dump.primarrays.items() if t == ty and ln == n and dump.prim_bytes(a) == want]
        held = dump.objarrays[holder(g["holder"])][1]
        check(len(same) == g["count"] and set(held) == set(same),
              "arrays  %s[%d] x %d equal arrays in the dump, %d held (expected %d)"
              % (g["element_type"], n, len(same), len(set(held)), g["count"]))

    node_next = None
    for g in exp["collections"]:
        h = holder(g["holder"])
        members = dump.objarrays[h][1] if h in dump.objarrays else [h]
        seen = Counter()
        backing = set()
        buckets = Counter()
        for m in members:
            f = dump.fields(m)
            arr = f.get("elementData", f.get("table"))
            size = f["size"]
            cap = len(dump.objarrays[arr][1]) if arr else 0
            seen[(dump.class_of(m), size, cap)] += 1
            if arr:
                backing.add(arr)
            if "table" in f and arr:
                used, longest, cls = 0, 0, ""
                for b in dump.objarrays[arr][1]:
                    if not b:
                        continue
                    used += 1
                    k, e = 0, b
                    while e:
                        k += 1
                        e = dump.fields(e)["next"]
                    if k > longest:
                        longest, cls = k, dump.class_of(b)
                buckets[(used, longest, cls)] += 1
        check(seen == Counter({(g["class"], g["size"], g["capacity"]): g["count"]}) and len(backing) == g["distinct_backing_arrays"],
              "collection %-18s %s, %d distinct backing arrays (expected %d x %s size %d capacity %d, %d)"
              % (g["name"], dict(seen), len(backing), g["count"], g["class"], g["size"], g["capacity"],
                 g["distinct_backing_arrays"]))
        if "buckets_used" in g:
            check(buckets == Counter({(g["buckets_used"], g["longest_bucket"], g["longest_bucket_node_class"]): g["count"]}),
                  "collection %-18s buckets (used, longest, node class) %s" % (g["name"], dict(buckets)))

    # threads: name -> thread object, its stack trace and its frame roots
    thread_by_name = {}
    for ser, (tid, tr) in dump.thread_objects.items():
        name_id = dump.fields(tid)["name"]
        if name_id:
            thread_by_name[dump.string(name_id)] = (ser, tid, tr)
    referenced = set()
    for oid in list(dump.instances) + list(dump.objarrays):
        referenced.update(dump.refs(oid))
    for t in exp["threads"]:
        ser, tid, tr = thread_by_name.get(t["name"], (None, None, None))
        check(ser is not None, "thread %s has a ROOT THREAD OBJECT" % t["name"])
        if ser is None:
            continue
        f = dump.fields(tid)
        check(bool(f["daemon"]) == t["daemon"], "thread %s daemon=%s" % (t["name"], bool(f["daemon"])))
        frames = [(dump.names[dump.class_by_serial[dump.frames[fid][1]]], dump.utf8[dump.frames[fid][0]])
                  for fid in dump.traces[tr]]
        want = [(x["class"], x["method"]) for x in t["frames"]]
        check(frames == want, "thread %s: stack trace of %d frames, %d descend (expected %d, %d)"
              % (t["name"], len(frames), sum(1 for c, m in frames if m == "descend"), len(want), t["depth"]))
        for loc in t["big_locals"]:
            cands = [a for a, (ty, n, _o) in dump.primarrays.items() if ty == 8 and n == loc["length"]]
            roots = [(r[2], r[3]) for r in dump.roots if r[0] == 0x03 and r[1] in cands]
            check(len(cands) == 1 and roots == [(ser, loc["frame_index"])] and cands[0] not in referenced,
                  "thread %s: byte[%d] (%d in dump) only a local of frame %s (expected frame %d), referrers: %d"
                  % (t["name"], loc["length"], len(cands), [r[1] for r in roots], loc["frame_index"],
                     sum(1 for c in cands if c in referenced)))

    # system properties: System.props -> Properties.map (ConcurrentHashMap) -> table -> nodes
    props = dump.fields(dump.static("java.lang.System", "props"))["map"]
    table = dump.fields(props)["table"]
    entries = {}
    for b in dump.objarrays[table][1]:
        e = b
        while e:
            nf = dump.fields(e)
            if nf["key"] in dump.instances and dump.class_of(nf["key"]) == "java.lang.String":
                entries[dump.string(nf["key"])] = nf["val"]
            e = nf["next"]
    for p in exp["system_properties"]:
        v = entries.get(p["key"])
        check(v is not None and dump.string(v) == p["value"], "system property %s = %r" % (p["key"], dump.string(v) if v else None))
    hostile = next(g for g in exp["strings"] if g["name"] == "hostile")
    check(entries.get("heapgraph.hostile") in dump.objarrays[holder(hostile["holder"])][1],
          "heapgraph.hostile's value is one of ContentDemo.HOSTILE_DUPS")

    if threads_txt is not None:
        blocks = {}
        for block in threads_txt.split("\n\n"):
            m = re.match(r'"([^"]*)" #\d+ (daemon )?', block.lstrip("\n"))
            if m:
                blocks[m.group(1)] = (bool(m.group(2)), re.findall(r"^\s+at ([\w$.]+)\.([\w$<>]+)\(", block, re.M), block)
        sync_ids = {oid for oid, (cid, _o, _n) in dump.instances.items()
                    if dump.names[cid] == "java.util.concurrent.CountDownLatch$Sync"}
        for t in exp["threads"]:
            daemon, at, block = blocks.get(t["name"], (None, [], ""))
            want = [(x["class"], x["method"]) for x in t["frames"]]
            check(daemon == t["daemon"] and at == want,
                  "Thread.print %s: daemon=%s, %d frames (expected %d)" % (t["name"], daemon, len(at), len(want)))
            m = re.search(r"parking to wait for\s+<0x([0-9a-f]+)>", block)
            check(m is not None and int(m.group(1), 16) in sync_ids,
                  "Thread.print %s parks on a CountDownLatch$Sync whose address is its id in the dump" % t["name"])

    print("ContentDemo checks: " + ("OK" if failures == 0 else "%d FAILED" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
