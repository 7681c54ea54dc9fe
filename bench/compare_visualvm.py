#!/usr/bin/env python3
"""Object-by-object agreement between heapgraph and VisualVM's heap library.

usage: compare_visualvm.py OURS.tsv VISUALVM.tsv [--hprof DUMP] [--examples N]

OURS.tsv      heapgraph analyze DUMP --objects-tsv OURS.tsv
              columns: id kind class shallow_bytes retained_bytes retained_objects idom
              (id 0x-hex; idom 0x-hex, `root`, or empty = not in the dominator tree)
VISUALVM.tsv  PEER_OPTS="-Dpeer.idomOut=VISUALVM.tsv" /work/shared/peers/visualvm/run.sh DUMP OUT.json
              columns: id kind class shallow retained idom reachable gcroot
              (id hex without 0x; kind I/A/P/C; idom 0 = virtual root, or none)
--hprof DUMP  optional: read the dump the tables came from and check every
              reference-based cause against its references and root records; this also
              splits cause 3 by what starts the path (see below). Stdlib only, slow on
              big dumps.

The tables are joined by object id. The agreement shares count the objects, class
objects included, that both tools reach.

Every object that both tools reach and whose immediate dominator (idom) or retained
size differs gets exactly one primary cause: the first rule below that matches.

idom differs:
 1. thread_local_root   VisualVM has the object as a GC root (gcroot=1), so its idom is
                        the virtual root. Ours is not the super root. The only roots that
                        heapgraph does not hang under the super root are the thread-local
                        ones (Java frame, JNI local, native stack, thread block). As in MAT,
                        they hang under their Thread object.
 2. class_edges         A class object. VisualVM's idom is an object, and ours is an
                        ancestor of that object (or the root). heapgraph, like MAT, has an
                        edge from every instance and array to its class and from every
                        class to its super class. VisualVM has at most one edge per class
                        (from the first instance that reaches it) and none from arrays. So
                        we see more predecessors.
 3. visualvm_root       VisualVM's idom is the virtual root and ours is an object; the
                        object is not a GC root. VisualVM intersects the dominator chains
                        of all referrers. A referrer it does not reach has an empty chain,
                        and a thread-local root is its own root, so the result is the
                        virtual root. With --hprof a reference path is found that enters
                        without passing through our idom, and the cause is split by what
                        starts the path:
                          /garbage_referrer   an object that neither tool reaches
                          /referent_referrer  an object we reach only through a
                                              Reference.referent (VisualVM does not follow
                                              referents when it marks reachable objects)
                          /thread_local_path  a thread-local root (rule 1, one level up)
retained size differs, idom the same:
 4. class_object_size   A class object. Ours is its static field bytes (MAT's rule) and
                        VisualVM's is 0. VisualVM also adds sizeof(java.lang.Class) to leaf
                        class objects (its README calls this quirk 4).
 5. shallow_model       The object's own shallow size differs. heapgraph counts the fields
                        that HotSpot injects (JDK 15+, e.g. MemberName.vmindex) and, for
                        JDK 6-14 dumps, MAT's per-class field layout; VisualVM does neither.
 6. descendant/unreached  Our dominator subtree holds objects that VisualVM does not reach.
 7. descendant/idom       The members of the subtree differ because the idom of a
                          descendant differs. That descendant's cause is listed.
 8. descendant/class_size Same members, some of them class objects whose size differs (4).
 9. descendant/shallow    Same members, some with a different shallow size (5).
10. descendant/vv_quirk   Same members and sizes. VisualVM carries quirk 4 up a chain of
                          single-referrer objects.
11. unexplained         No rule matched. This bucket must stay empty.

Reachability differences are reported on their own. An object that we reach and
VisualVM does not is either a class object reached only through class-metadata edges
(instance or array -> class, class -> super) or an object reached only through a
Reference.referent. The rule is by kind; --hprof checks it against the entry edges.
"""
import argparse
import collections
import struct
import sys

KINDS = {"I": "instance", "A": "object_array", "P": "primitive_array", "C": "class"}
PRIM_ARRAY_CODES = {"[Z": 4, "[C": 5, "[F": 6, "[D": 7, "[B": 8, "[S": 9, "[I": 10, "[J": 11}
THREAD_LOCAL_ROOTS = {0x02, 0x03, 0x04, 0x06}   # JNI local, Java frame, native stack, thread block

CAUSES = collections.OrderedDict([
    ("thread_local_root", "thread-local GC root: VisualVM root, ours under its Thread"),
    ("class_edges", "class object: we add instance->class and class->super edges (MAT)"),
    ("visualvm_root", "VisualVM idom = root: a path avoids our idom from ..."),
    ("visualvm_root/garbage_referrer", "  ... an object neither tool reaches"),
    ("visualvm_root/referent_referrer", "  ... an object reached only via a referent"),
    ("visualvm_root/thread_local_path", "  ... a thread-local root"),
    ("class_object_size", "class object: ours static bytes, VisualVM 0 (+Class quirk)"),
    ("shallow_model", "own shallow size differs (size model: injected fields, layout)"),
    ("descendant/unreached", "retains objects VisualVM does not reach"),
    ("descendant/idom", "retains another set: a descendant's idom differs"),
    ("descendant/class_size", "same set; holds class objects (rule 4)"),
    ("descendant/shallow", "same set; holds objects of another shallow size"),
    ("descendant/vv_quirk", "same set and sizes; VisualVM's Class quirk carried up"),
    ("unexplained", "no rule matched"),
])
REACH_CAUSES = collections.OrderedDict([
    ("class_metadata_only", "class object reached only via instance/array->class, class->super"),
    ("referent_only", "reached only through a Reference.referent"),
    ("unexplained", "no rule matched"),
])
PARTS = collections.OrderedDict([
    ("own_size", "the object's own shallow size"),
    ("vv_quirk", "VisualVM retained above its own subtree sum (Class quirk)"),
    ("unreached", "subtree members VisualVM does not reach"),
    ("moved", "subtree members in one tool's subtree only (an idom differs)"),
    ("class_size", "common members that are class objects"),
    ("shallow", "common members with another shallow size"),
])


class Row:
    __slots__ = ("kind", "cls", "sh", "ret", "idom", "root")

    def __init__(self, kind, cls, sh, ret, idom, root=False):
        self.kind, self.cls, self.sh, self.ret, self.idom, self.root = kind, cls, sh, ret, idom, root


def read_ours(path):
    rows = {}
    with open(path) as f:
        col = {name: i for i, name in enumerate(f.readline().rstrip("\n").split("\t"))}
        for line in f:
            p = line.rstrip("\n").split("\t")
            idom = p[col["idom"]]
            idom = None if idom == "" else 0 if idom == "root" else int(idom, 16)
            rows[int(p[col["id"]], 16)] = Row(p[col["kind"]], p[col["class"]],
                                              int(p[col["shallow_bytes"]]),
                                              int(p[col["retained_bytes"]]), idom)
    return rows


def read_visualvm(path):
    rows = {}
    with open(path) as f:
        col = {name: i for i, name in enumerate(f.readline().rstrip("\n").split("\t"))}
        for line in f:
            p = line.rstrip("\n").split("\t")
            reachable = p[col["reachable"]] == "1"
            rows[int(p[col["id"]], 16)] = Row(
                KINDS[p[col["kind"]]], p[col["class"]], int(p[col["shallow"]]),
                int(p[col["retained"]]), int(p[col["idom"]], 16) if reachable else None,
                p[col["gcroot"]] == "1")
    return rows


# ---------------------------------------------------------------------------------------
# --hprof: references (with the referent field marked), class-metadata edges, roots.

def read_hprof(path):
    data = open(path, "rb").read()
    nul = data.index(b"\0")
    idsz = struct.unpack_from(">I", data, nul + 1)[0]
    idfmt = ">Q" if idsz == 8 else ">I"
    tsize = {2: idsz, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}

    def rid(p):
        return struct.unpack_from(idfmt, data, p)[0]

    strings, class_name = {}, {}
    classes, class_refs = {}, {}     # class -> (super, [(field name id, type)]); -> [statics, loader]
    instances, prim_arrays = [], []  # (obj, class, field offset); (obj, element type)
    class_of = {}
    refs = []                        # (src, dst, field name id or None)
    roots = collections.defaultdict(set)
    pos = nul + 13
    while pos < len(data):
        tag, _t, length = struct.unpack_from(">BII", data, pos)
        body, end = pos + 9, pos + 9 + length
        if tag == 0x01:
            strings[rid(body)] = data[body + idsz:end].decode("utf-8", "replace")
        elif tag == 0x02:
            class_name[rid(body + 4)] = rid(body + 8 + idsz)
        elif tag in (0x0C, 0x1C):
            p = body
            while p < end:
                st = data[p]
                p += 1
                if st in (0xFF, 0x05, 0x07):
                    roots[rid(p)].add(st); p += idsz
                elif st == 0x01:
                    roots[rid(p)].add(st); p += 2 * idsz
                elif st in (0x02, 0x03, 0x08):
                    roots[rid(p)].add(st); p += idsz + 8
                elif st in (0x04, 0x06):
                    roots[rid(p)].add(st); p += idsz + 4
                elif st == 0x20:
                    cid, sup, loader = rid(p), rid(p + 4 + idsz), rid(p + 4 + 2 * idsz)
                    p += 4 + 7 * idsz + 4
                    (n,) = struct.unpack_from(">H", data, p); p += 2
                    for _ in range(n):
                        p += 3 + tsize[data[p + 2]]
                    (n,) = struct.unpack_from(">H", data, p); p += 2
                    out = []
                    for _ in range(n):
                        ty = data[p + idsz]; p += idsz + 1
                        if ty == 2 and rid(p):
                            out.append(rid(p))
                        p += tsize[ty]
                    if loader:
                        out.append(loader)
                    class_refs[cid] = out
                    (n,) = struct.unpack_from(">H", data, p); p += 2
                    fields = []
                    for _ in range(n):
                        fields.append((rid(p), data[p + idsz])); p += idsz + 1
                    classes[cid] = (sup, fields)
                elif st == 0x21:
                    oid, cid = rid(p), rid(p + 4 + idsz)
                    (n,) = struct.unpack_from(">I", data, p + 4 + 2 * idsz)
                    off = p + 8 + 2 * idsz
                    instances.append((oid, cid, off))
                    class_of[oid] = cid
                    p = off + n
                elif st == 0x22:
                    oid = rid(p)
                    (n,) = struct.unpack_from(">I", data, p + idsz + 4)
                    class_of[oid] = rid(p + idsz + 8)
                    q = p + 2 * idsz + 8
                    for i in range(n):
                        v = rid(q + i * idsz)
                        if v:
                            refs.append((oid, v, None))
                    p = q + n * idsz
                elif st == 0x23:
                    n, ty = struct.unpack_from(">IB", data, p + idsz + 4)
                    prim_arrays.append((rid(p), ty))
                    p += idsz + 9 + n * tsize[ty]
                else:
                    raise SystemExit("%s: unknown heap sub-record 0x%02x" % (path, st))
        pos = end
    prim_class = {}
    for cid, name_id in class_name.items():
        code = PRIM_ARRAY_CODES.get(strings.get(name_id))
        if code and cid in classes:
            prim_class[code] = cid
    for oid, ty in prim_arrays:
        if ty in prim_class:
            class_of[oid] = prim_class[ty]
    for oid, cid, off in instances:
        p, c = off, cid
        while c in classes:
            sup, fields = classes[c]
            for name, ty in fields:
                if ty == 2 and rid(p):
                    refs.append((oid, rid(p), name))
                p += tsize[ty]
            c = sup
    for cid, out in class_refs.items():
        for v in out:
            refs.append((cid, v, None))
    referent = {k for k, v in strings.items() if v == "referent"}
    inbound = collections.defaultdict(list)     # dst -> [(src, "field" | "referent" | "metadata")]
    for src, dst, name in refs:
        inbound[dst].append((src, "referent" if name in referent else "field"))
    for oid, cid in class_of.items():
        inbound[cid].append((oid, "metadata"))
    for cid, (sup, _f) in classes.items():
        if sup:
            inbound[sup].append((cid, "metadata"))
    return dict(inbound=inbound, roots=roots)


# ---------------------------------------------------------------------------------------

def children_map(rows):
    ch = collections.defaultdict(list)
    for x, r in rows.items():
        if r.idom is not None:
            ch[r.idom].append(x)
    return ch


def subtree(ch, x):
    out, stack = set(), [x]
    while stack:
        y = stack.pop()
        out.add(y)
        stack.extend(ch.get(y, ()))
    return out


def subtree_sums(rows, ch):
    """Σ shallow over each node's dominator subtree."""
    order, stack = [], list(ch.get(0, ()))
    while stack:
        y = stack.pop()
        order.append(y)
        stack.extend(ch.get(y, ()))
    total = {}
    for y in reversed(order):
        total[y] = rows[y].sh + sum(total[c] for c in ch.get(y, ()))
    return total


def is_ancestor(rows, a, x):
    """a is a proper ancestor of x in rows' dominator tree (0 = the root)."""
    y = rows[x].idom
    while y is not None:
        if y == a:
            return True
        if y == 0:
            return False
        y = rows[y].idom
    return False


def classify_idom(O, V, x):
    o, v = O[x], V[x]
    if v.root and o.idom != 0:
        return "thread_local_root"
    if o.kind == "class" and v.idom != 0 and (o.idom == 0 or is_ancestor(O, o.idom, v.idom)):
        return "class_edges"
    if v.idom == 0 and not v.root and o.idom != 0:
        return "visualvm_root"
    return "unexplained"


def check_idom(H, O, V, x, c):
    """--hprof: confirm a cause from the dump's references and roots."""
    if c == "thread_local_root":
        return c if H["roots"].get(x, set()) & THREAD_LOCAL_ROOTS else "unexplained"
    if c == "class_edges":
        ok = any(how == "metadata" and s in O and O[s].idom is not None
                 for s, how in H["inbound"].get(x, ()))
        return c if ok else "unexplained"
    if c == "visualvm_root":
        # Walk referrers back from x, never through our idom d, until an object that
        # VisualVM does not reach or that is a thread-local root: for VisualVM that object
        # starts a path from its root which avoids d.
        d, seen, todo, found = O[x].idom, {x}, [x], set()
        while todo and "garbage_referrer" not in found:
            y = todo.pop()
            for s, how in H["inbound"].get(y, ()):
                if how == "metadata" or s == d or s in seen or s not in V:
                    continue
                seen.add(s)
                if V[s].idom is None:
                    found.add("garbage_referrer" if O[s].idom is None else "referent_referrer")
                elif V[s].root:
                    if H["roots"].get(s, set()) & THREAD_LOCAL_ROOTS and O[s].idom != 0:
                        found.add("thread_local_path")
                else:
                    todo.append(s)
        for k in ("garbage_referrer", "referent_referrer", "thread_local_path"):
            if k in found:
                return c + "/" + k
        return "unexplained"
    return c


def check_reach(H, O, V, x, c):
    """--hprof: find the edges by which VisualVM's reachable set enters the part of our
    reachable set that it does not reach, on the way back from x."""
    entries, seen, todo = set(), {x}, [x]
    while todo:
        y = todo.pop()
        for s, how in H["inbound"].get(y, ()):
            if s not in O or O[s].idom is None:
                continue
            if V[s].idom is not None:
                entries.add(how)
            elif s not in seen:
                seen.add(s)
                todo.append(s)
    if "field" in entries:
        return "unexplained"     # VisualVM follows plain fields: it should have reached x
    if O[x].kind == "class" and "metadata" in entries:
        return "class_metadata_only"
    if "referent" in entries:
        return "referent_only"
    if "metadata" in entries:
        return "class_metadata_only"
    return "unexplained"


def moved_causes(O, V, x, plus, minus, cause):
    """Causes of the nearest idom disagreements above the members that moved in or out."""
    found = set()
    for members, rows in ((plus, O), (minus, V)):
        for y in members:
            z = y
            while z not in (x, 0, None):
                if z in cause and O[z].idom != V[z].idom:
                    found.add(cause[z])
                    break
                z = rows[z].idom
            else:
                found.add("unexplained")
    return tuple(sorted(found))


def pct(n, d):
    return "%6.2f%%" % (100.0 * n / d) if d else "   n/a"


def fmt_idom(i):
    return "root" if i == 0 else "-" if i is None else "%#x" % i


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ours")
    ap.add_argument("visualvm")
    ap.add_argument("--hprof", help="the dump both tables came from (optional checks)")
    ap.add_argument("--examples", type=int, default=3, help="example ids per cause")
    a = ap.parse_args()
    O, V = read_ours(a.ours), read_visualvm(a.visualvm)
    H = read_hprof(a.hprof) if a.hprof else None
    w = sys.stdout.write

    ids = sorted(set(O) & set(V))
    w("rows: ours %d, VisualVM %d, joined %d (only ours %d, only VisualVM %d, kind differs %d)\n"
      % (len(O), len(V), len(ids), len(set(O) - set(V)), len(set(V) - set(O)),
         sum(1 for x in ids if O[x].kind != V[x].kind)))

    # Each table against its own tree: retained = Σ shallow over the dominator subtree?
    och, vch = children_map(O), children_map(V)
    osum, vsum = subtree_sums(O, och), subtree_sums(V, vch)
    quirk = {x: V[x].ret - vsum[x] for x in vsum if V[x].ret != vsum[x]}
    w("ours: retained = Σ shallow over the dominator subtree, except for %d objects\n"
      % sum(1 for x in osum if osum[x] != O[x].ret))
    w("VisualVM: the same, except for %d objects %s\n" % (
        len(quirk), dict(collections.Counter((V[x].kind, q) for x, q in quirk.items()))))

    # Reachability.
    reach = collections.Counter((O[x].idom is not None, V[x].idom is not None) for x in ids)
    w("\nreachable: in both %d, in neither %d, only ours %d, only VisualVM %d\n"
      % (reach[(True, True)], reach[(False, False)], reach[(True, False)], reach[(False, True)]))
    reach_cause = {}
    for x in ids:
        if O[x].idom is not None and V[x].idom is None:
            c = "class_metadata_only" if O[x].kind == "class" else "referent_only"
            reach_cause[x] = check_reach(H, O, V, x, c) if H else c
    for c, text in REACH_CAUSES.items():
        xs = sorted(x for x in reach_cause if reach_cause[x] == c)
        if xs or c == "unexplained":
            w("  only ours, %-20s %6d  %s; e.g. %s\n" % (
                c, len(xs), text, " ".join("%#x" % x for x in xs[:a.examples])))

    # Headline shares.
    both = [x for x in ids if O[x].idom is not None and V[x].idom is not None]
    objs = [x for x in both if O[x].kind != "class"]
    clss = [x for x in both if O[x].kind == "class"]
    idom_ok = {x for x in both if O[x].idom == V[x].idom}
    ret_ok = {x for x in both if O[x].ret == V[x].ret}
    w("\nagreement over the objects reachable in both\n")
    w("  %-34s %8s %8s %8s\n" % ("", "all", "objects", "classes"))
    for label, ok in (("(a) immediate dominator agrees", idom_ok),
                      ("(b) retained size agrees", ret_ok),
                      ("(c) both agree", idom_ok & ret_ok),
                      ("    shallow size agrees", {x for x in both if O[x].sh == V[x].sh})):
        w("  %-34s %8s %8s %8s   %d of %d (objects %d of %d, classes %d of %d)\n" % (
            label, pct(len(ok), len(both)), pct(sum(x in ok for x in objs), len(objs)),
            pct(sum(x in ok for x in clss), len(clss)), len(ok), len(both),
            sum(x in ok for x in objs), len(objs), sum(x in ok for x in clss), len(clss)))

    # Primary causes.
    cause, moved = {}, {}
    for x in both:
        if O[x].idom != V[x].idom:
            c = classify_idom(O, V, x)
            cause[x] = check_idom(H, O, V, x, c) if H else c
    parts = collections.OrderedDict((k, [0, 0]) for k in PARTS)
    unbalanced = 0
    for x in both:
        o, v = O[x], V[x]
        if o.ret == v.ret:
            continue
        so, sv = subtree(och, x), subtree(vch, x)
        plus, minus = so - sv, sv - so
        d = dict.fromkeys(PARTS, 0)
        d["own_size"] = o.sh - v.sh
        d["vv_quirk"] = -quirk.get(x, 0)
        for y in plus:
            d["unreached" if V[y].idom is None else "moved"] += O[y].sh
        for y in minus:
            d["moved"] -= V[y].sh
        for y in so & sv:
            if y != x:
                d["class_size" if O[y].kind == "class" else "shallow"] += O[y].sh - V[y].sh
        unbalanced += sum(d.values()) != o.ret - v.ret
        for k, b in d.items():
            if b:
                parts[k][0] += 1
                parts[k][1] += b
        if x in cause:
            continue                                   # the idom cause is primary
        if o.kind == "class" and (o.sh != v.sh or x in quirk):
            c = "class_object_size"
        elif o.sh != v.sh:
            c = "shallow_model"
        elif d["unreached"]:
            c = "descendant/unreached"
        elif plus or minus:
            c = "descendant/idom"
        elif d["class_size"]:
            c = "descendant/class_size"
        elif d["shallow"]:
            c = "descendant/shallow"
        elif d["vv_quirk"]:
            c = "descendant/vv_quirk"
        else:
            c = "unexplained"
        cause[x] = c
    for x, c in cause.items():
        if c == "descendant/idom":
            so, sv = subtree(och, x), subtree(vch, x)
            moved[x] = moved_causes(O, V, x, so - sv, sv - so, cause)

    w("\ndisagreements: %d objects (idom differs %d, retained size differs %d)\n"
      % (len(cause), len(both) - len(idom_ok), len(both) - len(ret_ok)))
    w("  %-32s %7s %7s %7s  %s\n" % ("primary cause", "objects", "idom", "retain", "meaning"))
    for c, text in CAUSES.items():
        xs = [x for x in cause if cause[x] == c or cause[x].startswith(c + "/")]
        if xs or c == "unexplained":
            w("  %-32s %7d %7d %7d  %s\n" % (
                c, len(xs), sum(O[x].idom != V[x].idom for x in xs),
                sum(O[x].ret != V[x].ret for x in xs), text))
    if moved:
        w("\ndescendant/idom: causes of the idom disagreements that move members in or out\n")
        for k, n in collections.Counter(moved.values()).most_common():
            w("  %-58s %6d\n" % (" + ".join(k), n))
    w("\nretained size differences by part (not exclusive; bytes = Σ ours - VisualVM)\n")
    for k, (n, b) in parts.items():
        w("  %-10s %6d objects %+11d B  %s\n" % (k, n, b, PARTS[k]))
    w("  objects whose parts do not add up to the difference: %d\n" % unbalanced)

    w("\nexamples: id class | ours idom/shallow/retained | VisualVM idom/shallow/retained\n")
    for c in CAUSES:
        for x in sorted(x for x in cause if cause[x] == c)[:a.examples]:
            o, v = O[x], V[x]
            w("  %-32s %#x %s | %s/%d/%d | %s/%d/%d\n" % (
                c, x, o.cls, fmt_idom(o.idom), o.sh, o.ret, fmt_idom(v.idom), v.sh, v.ret))
    bad = sorted(x for x in cause if cause[x] == "unexplained")
    bad += sorted(x for x in reach_cause if reach_cause[x] == "unexplained")
    if bad:
        w("\nUNEXPLAINED: %d objects, e.g. %s\n" % (len(bad), " ".join("%#x" % x for x in bad[:20])))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
