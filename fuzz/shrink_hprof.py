#!/usr/bin/env python3
"""Writes a small, complete HPROF from a real one: a fuzz seed that reaches the heap dump
decoder in a few KB (the first 64 KiB of a real dump hold only names and classes).

    fuzz/shrink_hprof.py IN OUT [OBJECT_BYTES]

Keeps the first instances and arrays of the dump (about OBJECT_BYTES of them, 6000 unless
told), the class dumps of their classes with their super classes, the GC roots that reach
what is kept, and the names those classes and fields use: one HEAP DUMP (SEGMENT) in the
original's tag, id size and version. References to objects left out dangle, as they do in a
cut or damaged dump. The seeds it wrote are in data/fuzz-seeds/ (fuzz/make-corpus.sh).
"""
import struct
import sys

# GC root sub-records: tag -> bytes after the tag as (ids, u4s), the first id the target.
ROOTS = {0xFF: (1, 0), 0x01: (2, 0), 0x02: (1, 2), 0x03: (1, 2), 0x04: (1, 1), 0x05: (1, 0),
         0x06: (1, 1), 0x07: (1, 0), 0x08: (1, 2), 0x89: (1, 0), 0x8A: (1, 0), 0x8B: (1, 0),
         0x8C: (1, 0), 0x8D: (1, 0), 0x8E: (1, 2), 0x90: (1, 0)}
TYPE_SIZE = {4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}  # 2 (object) is the id size


class Reader:
    def __init__(self, data, ids):
        self.d, self.ids = data, ids

    def u(self, at, n):
        return int.from_bytes(self.d[at:at + n], 'big')

    def value_size(self, type_code):
        return self.ids if type_code == 2 else TYPE_SIZE[type_code]

    def sub_record(self, at):
        """(tag, end, object or target id, class or super class id) of the sub-record at `at`."""
        tag, ids, p = self.d[at], self.ids, at + 1
        if tag in ROOTS:
            n_ids, n_u4 = ROOTS[tag]
            return tag, p + n_ids * ids + 4 * n_u4, self.u(p, ids), None
        if tag == 0xFE:  # Android heap dump info: u4 heap type, id heap name
            return tag, p + 4 + ids, None, None
        if tag == 0xC3:  # Android primitive array without data
            return tag, p + ids + 9, self.u(p, ids), None
        if tag == 0x20:
            end, _ = self.class_dump(at)
            return tag, end, self.u(p, ids), self.u(p + ids + 4, ids)
        if tag == 0x21:
            obj, cls = self.u(p, ids), self.u(p + ids + 4, ids)
            return tag, p + 2 * ids + 8 + self.u(p + 2 * ids + 4, 4), obj, cls
        if tag == 0x22:
            obj, n = self.u(p, ids), self.u(p + ids + 4, 4)
            return tag, p + 2 * ids + 8 + n * ids, obj, self.u(p + ids + 8, ids)
        if tag == 0x23:
            obj, n, t = self.u(p, ids), self.u(p + ids + 4, 4), self.d[p + ids + 8]
            return tag, p + ids + 9 + n * self.value_size(t), obj, None
        raise ValueError(f'sub-record tag {tag:#x} at {at:#x}')

    def class_dump(self, at):
        """(end, name string ids of its statics and fields) of the class dump at `at`."""
        ids, p = self.ids, at + 1 + 7 * self.ids + 8
        names = []
        constants, p = self.u(p, 2), p + 2
        for _ in range(constants):
            p += 3 + self.value_size(self.d[p + 2])
        statics, p = self.u(p, 2), p + 2
        for _ in range(statics):
            names.append(self.u(p, ids))
            p += ids + 1 + self.value_size(self.d[p + ids])
        fields, p = self.u(p, 2), p + 2
        for _ in range(fields):
            names.append(self.u(p, ids))
            p += ids + 1
        return p, names


def records(data, at):
    """(tag, start, end) of each top-level record from `at` on."""
    while at + 9 <= len(data):
        length = int.from_bytes(data[at + 5:at + 9], 'big')
        yield data[at], at, at + 9 + length
        at += 9 + length


def shrink(data, object_bytes):
    header_end = data.index(b'\0') + 13
    ids = int.from_bytes(data[header_end - 12:header_end - 8], 'big')
    r = Reader(data, ids)
    top = list(records(data, header_end))
    heap_tags = [t for t, _, _ in top if t in (0x0C, 0x1C)]
    subs = []  # (tag, start, end, id, class) of every heap sub-record, in file order
    for tag, start, end in top:
        if tag == 0x2C or (tag == 0x0C and subs):
            break  # the first dump only: a file may hold several (the hprof agent's hold two)
        if tag in (0x0C, 0x1C):
            at = start + 9
            while at < end:
                tag_s, end_s, obj, cls = r.sub_record(at)
                subs.append((tag_s, at, end_s, obj, cls))
                at = end_s
    classes = {obj: (start, end, cls) for tag, start, end, obj, cls in subs if tag == 0x20}

    kept_objects, kept_ids, kept_classes, size = [], set(), set(), 0
    for tag, start, end, obj, cls in subs:
        if tag in (0x21, 0x22, 0x23, 0xC3) and end - start <= 512 and size < object_bytes:
            kept_objects.append((start, end))
            kept_ids.add(obj)
            size += end - start
            while tag in (0x21, 0x22) and cls in classes and cls not in kept_classes:
                kept_classes.add(cls)  # and its super classes: the decoder needs their fields
                cls = classes[cls][2]
    kept_ids |= kept_classes
    roots = [(s, e) for tag, s, e, obj, _ in subs if tag in ROOTS and obj in kept_ids][:64]
    info = [(s, e) for tag, s, e, _, _ in subs if tag == 0xFE][:1]
    class_dumps = [(s, e) for tag, s, e, obj, _ in subs if tag == 0x20 and obj in kept_classes]

    names = set()
    for start, end in class_dumps:
        names.update(r.class_dump(start)[1])
    load_classes = []
    for tag, start, end in top:
        if tag == 0x02 and r.u(start + 13, ids) in kept_classes:
            load_classes.append((start, end))
            names.add(r.u(start + 17 + ids, ids))
    strings = [(s, e) for t, s, e in top if t == 0x01 and r.u(s + 9, ids) in names]

    heap = b''.join(data[s:e] for s, e in info + class_dumps + roots + kept_objects)
    out = bytearray(data[:header_end])
    for start, end in strings + load_classes:
        out += data[start:end]
    out += bytes([heap_tags[0]]) + bytes(4) + len(heap).to_bytes(4, 'big') + heap
    if 0x2C in [t for t, _, _ in top]:
        out += bytes([0x2C]) + bytes(8)
    return bytes(out)


def main():
    data = open(sys.argv[1], 'rb').read()
    object_bytes = int(sys.argv[3]) if len(sys.argv) > 3 else 6000
    with open(sys.argv[2], 'wb') as out:
        out.write(shrink(data, object_bytes))


if __name__ == '__main__':
    main()
