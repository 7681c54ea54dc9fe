// Byte-array fixtures for the heap dump sub-records (formats/hprof_heap.cpp) and the shallow
// size model (formats/size_model.cpp). Every chunk maps position 0 to file offset 0x1000, so
// an error at chunk position p must report offset 0x1000 + p.
#include "formats.h"
#include "decode_expect.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <random>

#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

using namespace heapgraph;
using heapgraph::test::ByteBuilder;

using heapgraph::test::expect_error;
using heapgraph::test::expect_ok;
using heapgraph::test::wide;

namespace {

constexpr std::uint64_t kBase = 0x1000;  // file offset of every fixture chunk's first byte

// An id that fills all `id` bytes, so a decoder reading too few bytes is caught.

HeapChunk chunk_over(const std::vector<std::uint8_t>& bytes) {
    HeapChunk chunk;
    chunk.bytes = bytes;
    chunk.pieces = {{0, kBase}};
    return chunk;
}

HprofContext no_layouts(std::uint32_t id) {
    HprofContext context;
    context.id_size = id;
    return context;
}

HeapRecords decode(const ByteBuilder& b, const HprofContext& context) {
    return expect_ok<HeapRecords>(decode_heap_chunk(chunk_over(b.bytes), context));
}

DecodeError decode_error(const ByteBuilder& b, const HprofContext& context) {
    return expect_error(decode_heap_chunk(chunk_over(b.bytes), context));
}

// ---- class fixtures shared by the instance tests -------------------------------------------

// A CLASS DUMP without constant pool or statics that declares `fields`.
void simple_class(ByteBuilder& b, ObjectId class_id, ObjectId super_id,
                  const std::vector<FieldDecl>& fields) {
    b.u1(0x20);                // CLASS DUMP
    b.id(class_id);            //   class object id
    b.u4(0);                   //   stack trace serial
    b.id(super_id);            //   super class id (0: none)
    b.id(0);                   //   class loader id
    b.id(0);                   //   signers id
    b.id(0);                   //   protection domain id
    b.id(0);                   //   reserved
    b.id(0);                   //   reserved
    b.u4(0);                   //   instance size
    b.u2(0);                   //   constant pool entries
    b.u2(0);                   //   static fields
    b.u2(fields.size());       //   instance fields
    for (const FieldDecl& field : fields) {
        b.id(field.name_id);   //     field name string id
        b.u1(field.type);      //     field type
    }
}

// Base { Object next; int count; } and Node extends Base { boolean flag; Object left, right; }.
ObjectId base_class(std::uint32_t id) { return wide(id, 0x2100); }
ObjectId node_class(std::uint32_t id) { return wide(id, 0x2200); }

ByteBuilder node_classes(std::uint32_t id) {
    ByteBuilder b;
    b.id_size = id;
    simple_class(b, base_class(id), 0, {{wide(id, 0x711), 2},    // Base.next: object
                                        {wide(id, 0x712), 10}});  // Base.count: int
    simple_class(b, node_class(id), base_class(id),
                 {{wide(id, 0x721), 4},    // Node.flag: boolean
                  {wide(id, 0x722), 2},    // Node.left: object
                  {wide(id, 0x723), 2}});  // Node.right: object
    return b;
}

// Pass 1 over a chunk of class dumps, then a layout for every class found.
HprofContext context_from_classes(const ByteBuilder& classes) {
    HprofContext context;
    context.id_size = classes.id_size;
    auto dumps = expect_ok<std::vector<ClassDump>>(read_class_dumps(chunk_over(classes.bytes), classes.id_size));
    context.layouts = ClassLayouts(dumps, classes.id_size);
    return context;
}

}  // namespace

// ---- roots ----------------------------------------------------------------------------------

struct ExpectedRoot {
    std::uint64_t low_id;
    RootKind kind;
    std::uint32_t thread_serial;
};

void check_roots(const HeapRecords& records, const std::vector<ExpectedRoot>& expected, std::uint32_t id) {
    REQUIRE(records.roots.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        CHECK(records.roots[i].id == wide(id, expected[i].low_id));
        CHECK(records.roots[i].kind == expected[i].kind);
        CHECK(records.roots[i].thread_serial == expected[i].thread_serial);
    }
}

TEST_CASE("fixture: every standard GC root reads its kind, object id and thread serial") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0xFF);              // ROOT UNKNOWN
    b.id(wide(id, 0x100));   //   object id
    b.u1(0x01);              // ROOT JNI GLOBAL
    b.id(wide(id, 0x101));   //   object id
    b.id(wide(id, 0x9001));  //   JNI global ref id
    b.u1(0x02);              // ROOT JNI LOCAL
    b.id(wide(id, 0x102));   //   object id
    b.u4(11);                //   thread serial
    b.u4(0);                 //   frame number
    b.u1(0x03);              // ROOT JAVA FRAME
    b.id(wide(id, 0x103));   //   object id
    b.u4(12);                //   thread serial
    b.u4(0xFFFFFFFF);        //   frame number -1: empty
    b.u1(0x04);              // ROOT NATIVE STACK
    b.id(wide(id, 0x104));   //   object id
    b.u4(13);                //   thread serial
    b.u1(0x05);              // ROOT STICKY CLASS
    b.id(wide(id, 0x105));   //   object id
    b.u1(0x06);              // ROOT THREAD BLOCK
    b.id(wide(id, 0x106));   //   object id
    b.u4(14);                //   thread serial
    b.u1(0x07);              // ROOT MONITOR USED
    b.id(wide(id, 0x107));   //   object id
    b.u1(0x08);              // ROOT THREAD OBJECT
    b.id(wide(id, 0x108));   //   thread object id
    b.u4(15);                //   thread serial
    b.u4(16);                //   stack trace serial
    auto records = decode(b, no_layouts(id));

    const std::vector<ExpectedRoot> expected = {
        {0x100, RootKind::unknown, 0},       {0x101, RootKind::jni_global, 0},
        {0x102, RootKind::jni_local, 11},    {0x103, RootKind::java_frame, 12},
        {0x104, RootKind::native_stack, 13}, {0x105, RootKind::sticky_class, 0},
        {0x106, RootKind::thread_block, 14}, {0x107, RootKind::monitor_used, 0},
        {0x108, RootKind::thread_object, 15}};
    check_roots(records, expected, id);
    for (std::uint8_t tag : {0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08})
        CHECK(records.counts[tag] == 1);
    CHECK(records.objects.empty());
}

TEST_CASE("fixture: every Android GC root reads its kind, object id and thread serial") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x89);             // ROOT INTERNED STRING
    b.id(wide(id, 0x189));  //   object id
    b.u1(0x8A);             // ROOT FINALIZING
    b.id(wide(id, 0x18A));  //   object id
    b.u1(0x8B);             // ROOT DEBUGGER
    b.id(wide(id, 0x18B));  //   object id
    b.u1(0x8C);             // ROOT REFERENCE CLEANUP
    b.id(wide(id, 0x18C));  //   object id
    b.u1(0x8D);             // ROOT VM INTERNAL
    b.id(wide(id, 0x18D));  //   object id
    b.u1(0x8E);             // ROOT JNI MONITOR
    b.id(wide(id, 0x18E));  //   object id
    b.u4(21);               //   thread serial
    b.u4(3);                //   stack depth
    b.u1(0x90);             // ROOT UNREACHABLE
    b.id(wide(id, 0x190));  //   object id
    auto records = decode(b, no_layouts(id));

    const std::vector<ExpectedRoot> expected = {
        {0x189, RootKind::interned_string, 0}, {0x18A, RootKind::finalizing, 0},
        {0x18B, RootKind::debugger, 0},        {0x18C, RootKind::reference_cleanup, 0},
        {0x18D, RootKind::vm_internal, 0},     {0x18E, RootKind::jni_monitor, 21},
        {0x190, RootKind::unreachable, 0}};
    check_roots(records, expected, id);
    for (std::uint8_t tag : {0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90}) CHECK(records.counts[tag] == 1);
}

// ---- class dumps ----------------------------------------------------------------------------

TEST_CASE("fixture: CLASS DUMP reads ids, statics of every kind and instance fields") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x05);                     // ROOT STICKY CLASS, at chunk position 0
    b.id(wide(id, 0x2000));         //   object id
    b.u1(0x20);                     // CLASS DUMP, at chunk position 1 + id
    b.id(wide(id, 0x2000));         //   class object id
    b.u4(1);                        //   stack trace serial
    b.id(wide(id, 0x1F00));         //   super class id
    b.id(wide(id, 0x3000));         //   class loader id
    b.id(wide(id, 0x3001));         //   signers id
    b.id(wide(id, 0x3002));         //   protection domain id
    b.id(0);                        //   reserved
    b.id(0);                        //   reserved
    b.u4(24);                       //   instance size
    b.u2(2);                        //   constant pool: 2 entries
    b.u2(1);                        //     index
    b.u1(10);                       //     type int
    b.u4(0xCAFE);                   //     value
    b.u2(2);                        //     index
    b.u1(2);                        //     type object
    b.id(wide(id, 0x4000));         //     value
    b.u2(6);                        //   statics: 6
    b.id(wide(id, 0x601));          //     name id
    b.u1(2);                        //     type object
    b.id(wide(id, 0x5000));         //     value
    b.id(wide(id, 0x602));          //     name id
    b.u1(10);                       //     type int
    b.u4(0xFFFFFFFE);               //     value -2
    b.id(wide(id, 0x603));          //     name id
    b.u1(11);                       //     type long
    b.u8(0x0102030405060708ULL);    //     value
    b.id(wide(id, 0x604));          //     name id
    b.u1(4);                        //     type boolean
    b.u1(1);                        //     value true
    b.id(wide(id, 0x605));          //     name id
    b.u1(5);                        //     type char
    b.u2(0x0041);                   //     value 'A'
    b.id(wide(id, 0x606));          //     name id
    b.u1(7);                        //     type double
    b.u8(0x3FF0000000000000ULL);    //     value 1.0
    b.u2(2);                        //   instance fields: 2
    b.id(wide(id, 0x701));          //     name id
    b.u1(2);                        //     type object
    b.id(wide(id, 0x702));          //     name id
    b.u1(9);                        //     type short

    auto classes = expect_ok<std::vector<ClassDump>>(read_class_dumps(chunk_over(b.bytes), id));
    REQUIRE(classes.size() == 1);
    const ClassDump& dump = classes[0];
    CHECK(dump.class_id == wide(id, 0x2000));
    CHECK(dump.super_id == wide(id, 0x1F00));
    CHECK(dump.loader_id == wide(id, 0x3000));
    CHECK(dump.signers_id == wide(id, 0x3001));
    CHECK(dump.protection_domain_id == wide(id, 0x3002));
    CHECK(dump.instance_size == 24);
    CHECK(dump.file_offset == kBase + 1 + id);
    const std::vector<std::pair<std::uint8_t, std::uint64_t>> statics = {
        {2, wide(id, 0x5000)}, {10, 0xFFFFFFFE}, {11, 0x0102030405060708ULL},
        {4, 1}, {5, 0x41}, {7, 0x3FF0000000000000ULL}};
    REQUIRE(dump.statics.size() == statics.size());
    for (std::size_t i = 0; i < statics.size(); ++i) {
        CAPTURE(i);
        CHECK(dump.statics[i].name_id == wide(id, 0x601 + i));
        CHECK(dump.statics[i].type == statics[i].first);
        CHECK(dump.statics[i].value == statics[i].second);
    }
    REQUIRE(dump.fields.size() == 2);
    CHECK(dump.fields[0].name_id == wide(id, 0x701));
    CHECK(dump.fields[0].type == 2);
    CHECK(dump.fields[1].name_id == wide(id, 0x702));
    CHECK(dump.fields[1].type == 9);

    // Pass 2 counts the class dump but makes no object of it.
    auto records = decode(b, no_layouts(id));
    CHECK(records.counts[0x20] == 1);
    CHECK(records.counts[0x05] == 1);
    CHECK(records.objects.empty());
    CHECK(std::get<std::uint64_t>(sub_record_size(b.bytes, 1 + id, id)) == b.size() - 1 - id);
}

TEST_CASE("fixture: a class layout holds its own fields and links to its super class's, with reference offsets") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    HprofContext context = context_from_classes(node_classes(id));
    const std::uint32_t index = context.layouts.index_of(node_class(id));
    REQUIRE(index != ClassLayout::kNone);
    const ClassLayout& node = context.layouts[index];
    CHECK(node.complete);
    CHECK(node.data_bytes == 1 + 3 * id + 4);  // flag, left, right, next, count
    CHECK(node.references == 3);
    CHECK(node.own.primitive_bytes == 1);  // Node: boolean
    CHECK(node.own.references == 2);
    CHECK(node.ref_offsets == std::vector<std::uint32_t>{1, 1 + id});
    REQUIRE(node.super == context.layouts.index_of(base_class(id)));
    const ClassLayout& base = context.layouts[node.super];
    CHECK(base.own.primitive_bytes == 4);  // Base: int
    CHECK(base.own.references == 1);
    CHECK(base.data_bytes == id + 4);
    CHECK(node.refs_above == node.super);
    CHECK(base.super == ClassLayout::kNone);
    // An instance's references in dump order: Node's own, then Base's, after Node's bytes.
    std::vector<std::uint64_t> offsets;
    std::vector<ObjectId> names;
    context.layouts.for_each_reference(index, [&](std::uint64_t offset, std::uint32_t level, std::uint32_t k) {
        offsets.push_back(offset);
        names.push_back(context.layouts[level].ref_names[k]);
    });
    CHECK(offsets == std::vector<std::uint64_t>{1, 1 + id, 1 + 2 * id});
    CHECK(names == std::vector<ObjectId>{wide(id, 0x722), wide(id, 0x723), wide(id, 0x711)});

    // A class whose super class dump is missing has an incomplete layout, and so has its subclass.
    ClassDump orphan, child;
    orphan.class_id = 0x10;
    orphan.super_id = 0x99;  // never dumped
    orphan.fields = {{0x1, 10}};
    child.class_id = 0x20;
    child.super_id = 0x10;
    std::vector<ClassDump> dumps = {child, orphan};
    ClassLayouts orphans(dumps, id);
    CHECK_FALSE(orphans[0].complete);
    CHECK_FALSE(orphans[1].complete);
    CHECK(orphans[0].data_bytes == 4);  // what is known: the orphan's int

    // Classes whose super classes loop are incomplete too.
    dumps[1].super_id = 0x20;
    ClassLayouts loop(dumps, id);
    CHECK_FALSE(loop[0].complete);
    CHECK_FALSE(loop[1].complete);
    dumps.resize(1);
    dumps[0].super_id = 0x20;  // its own super class
    CHECK_FALSE(ClassLayouts(dumps, id)[0].complete);
}

// ---- objects --------------------------------------------------------------------------------

TEST_CASE("fixture: INSTANCE DUMP yields exactly the non-null object fields of the class and its super") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    HprofContext context = context_from_classes(node_classes(id));
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x21);              // INSTANCE DUMP
    b.id(wide(id, 0x8000));  //   object id
    b.u4(0);                 //   stack trace serial
    b.id(node_class(id));    //   class id: Node
    b.u4(1 + 3 * id + 4);    //   bytes of field values
    b.u1(1);                 //   Node.flag = true
    b.id(wide(id, 0x8001));  //   Node.left
    b.id(0);                 //   Node.right = null
    b.id(wide(id, 0x8002));  //   Base.next
    b.u4(42);                //   Base.count
    b.u1(0x21);              // INSTANCE DUMP
    b.id(wide(id, 0x8003));  //   object id
    b.u4(0);                 //   stack trace serial
    b.id(base_class(id));    //   class id: Base
    b.u4(id + 4);            //   bytes of field values
    b.id(wide(id, 0x8000));  //   Base.next
    b.u4(7);                 //   Base.count
    auto records = decode(b, context);

    CHECK(records.refs == std::vector<ObjectId>{wide(id, 0x8001), wide(id, 0x8002), wide(id, 0x8000)});
    REQUIRE(records.objects.size() == 2);
    const ObjectRecord& node = records.objects[0];
    CHECK(node.id == wide(id, 0x8000));
    CHECK(node.class_id == node_class(id));
    CHECK(node.kind == ObjectKind::instance);
    CHECK(node.first_ref == 0);
    CHECK(node.ref_count == 2);
    const ObjectRecord& base = records.objects[1];
    CHECK(base.id == wide(id, 0x8003));
    CHECK(base.class_id == base_class(id));
    CHECK(base.first_ref == 2);
    CHECK(base.ref_count == 1);
    CHECK(records.counts[0x21] == 2);
}

TEST_CASE("fixture: OBJECT ARRAY DUMP keeps its non-null elements in order and skips nulls") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x22);              // OBJECT ARRAY DUMP
    b.id(wide(id, 0x8100));  //   array object id
    b.u4(0);                 //   stack trace serial
    b.u4(4);                 //   number of elements
    b.id(wide(id, 0x2300));  //   array class id
    b.id(wide(id, 0x8001));  //   [0]
    b.id(0);                 //   [1] null
    b.id(wide(id, 0x8002));  //   [2]
    b.id(0);                 //   [3] null
    auto records = decode(b, no_layouts(id));
    REQUIRE(records.objects.size() == 1);
    const ObjectRecord& array = records.objects[0];
    CHECK(array.kind == ObjectKind::object_array);
    CHECK(array.id == wide(id, 0x8100));
    CHECK(array.class_id == wide(id, 0x2300));
    CHECK(array.length == 4);
    CHECK(array.first_ref == 0);
    CHECK(array.ref_count == 2);
    CHECK(records.refs == std::vector<ObjectId>{wide(id, 0x8001), wide(id, 0x8002)});
    CHECK(records.counts[0x22] == 1);
}

TEST_CASE("fixture: PRIMITIVE ARRAY DUMP reads id, length and element type and has no references") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x23);              // PRIMITIVE ARRAY DUMP
    b.id(wide(id, 0x8200));  //   array object id
    b.u4(0);                 //   stack trace serial
    b.u4(3);                 //   number of elements
    b.u1(10);                //   element type int
    b.u4(1);                 //   [0]
    b.u4(2);                 //   [1]
    b.u4(3);                 //   [2]
    b.u1(0x23);              // PRIMITIVE ARRAY DUMP
    b.id(wide(id, 0x8201));  //   array object id
    b.u4(0);                 //   stack trace serial
    b.u4(2);                 //   number of elements
    b.u1(11);                //   element type long
    b.u8(1);                 //   [0]
    b.u8(2);                 //   [1]
    auto records = decode(b, no_layouts(id));
    REQUIRE(records.objects.size() == 2);
    CHECK(records.objects[0].kind == ObjectKind::primitive_array);
    CHECK(records.objects[0].id == wide(id, 0x8200));
    CHECK(records.objects[0].class_id == 0);
    CHECK(records.objects[0].length == 3);
    CHECK(records.objects[0].element_type == 10);
    CHECK(records.objects[0].ref_count == 0);
    CHECK(records.objects[1].id == wide(id, 0x8201));
    CHECK(records.objects[1].length == 2);
    CHECK(records.objects[1].element_type == 11);
    CHECK(records.refs.empty());
    CHECK(records.counts[0x23] == 2);
}

TEST_CASE("fixture: PRIMITIVE ARRAY NODATA reads its length without element bytes") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0xC3);              // PRIMITIVE ARRAY NODATA
    b.id(wide(id, 0x8300));  //   array object id
    b.u4(0);                 //   stack trace serial
    b.u4(1000);              //   number of elements
    b.u1(5);                 //   element type char; no data follows
    b.u1(0x05);              // ROOT STICKY CLASS, right after
    b.id(wide(id, 0x2000));  //   object id
    auto records = decode(b, no_layouts(id));
    REQUIRE(records.objects.size() == 1);
    CHECK(records.objects[0].kind == ObjectKind::primitive_array);
    CHECK(records.objects[0].id == wide(id, 0x8300));
    CHECK(records.objects[0].length == 1000);
    CHECK(records.objects[0].element_type == 5);
    REQUIRE(records.roots.size() == 1);
    CHECK(records.roots[0].id == wide(id, 0x2000));
    CHECK(records.counts[0xC3] == 1);
}

TEST_CASE("fixture: HEAP DUMP INFO is counted and makes neither object nor root") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0xFE);             // HEAP DUMP INFO
    b.u4(0x50);             //   heap type ('P': app heap)
    b.id(wide(id, 0x531));  //   heap name string id
    b.u1(0x07);             // ROOT MONITOR USED, right after
    b.id(wide(id, 0x107));  //   object id
    auto records = decode(b, no_layouts(id));
    CHECK(records.counts[0xFE] == 1);
    CHECK(records.counts[0x07] == 1);
    CHECK(records.objects.empty());
    REQUIRE(records.roots.size() == 1);
    CHECK(records.roots[0].id == wide(id, 0x107));
}

// ---- sub_record_size ----------------------------------------------------------------------

TEST_CASE("fixture: sub_record_size of every fixed-size sub-record, and 0 when cut short") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    struct Case {
        std::uint8_t tag;
        std::uint32_t ids, extra;  // the layout after the tag: ids, then extra bytes
    };
    for (Case c : {Case{0xFF, 1, 0},   // ROOT UNKNOWN: object id
                   Case{0x01, 2, 0},   // ROOT JNI GLOBAL: object id, global ref id
                   Case{0x02, 1, 8},   // ROOT JNI LOCAL: object id, thread serial, frame
                   Case{0x03, 1, 8},   // ROOT JAVA FRAME: object id, thread serial, frame
                   Case{0x04, 1, 4},   // ROOT NATIVE STACK: object id, thread serial
                   Case{0x05, 1, 0},   // ROOT STICKY CLASS: object id
                   Case{0x06, 1, 4},   // ROOT THREAD BLOCK: object id, thread serial
                   Case{0x07, 1, 0},   // ROOT MONITOR USED: object id
                   Case{0x08, 1, 8},   // ROOT THREAD OBJECT: id, thread serial, trace serial
                   Case{0x89, 1, 0},   // ROOT INTERNED STRING: object id
                   Case{0x8A, 1, 0},   // ROOT FINALIZING: object id
                   Case{0x8B, 1, 0},   // ROOT DEBUGGER: object id
                   Case{0x8C, 1, 0},   // ROOT REFERENCE CLEANUP: object id
                   Case{0x8D, 1, 0},   // ROOT VM INTERNAL: object id
                   Case{0x8E, 1, 8},   // ROOT JNI MONITOR: object id, thread serial, depth
                   Case{0x90, 1, 0},   // ROOT UNREACHABLE: object id
                   Case{0xFE, 1, 4},   // HEAP DUMP INFO: heap type u4, name id
                   Case{0xC3, 1, 9}}) {  // PRIMITIVE ARRAY NODATA: id, serial, length, type
        CAPTURE(hprof_sub_tag_name(c.tag));
        std::vector<std::uint8_t> bytes(1 + c.ids * id + c.extra, 0);
        bytes[0] = c.tag;  // tag, then zeros
        bytes.back() = 4;  // (a valid element type for 0xC3)
        CHECK(std::get<std::uint64_t>(sub_record_size(bytes, 0, id)) == bytes.size());
        bytes.pop_back();  // one byte short
        CHECK(std::get<std::uint64_t>(sub_record_size(bytes, 0, id)) == 0);
    }
}

TEST_CASE("fixture: sub_record_size of class, instance and array dumps, and 0 at every cut") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    std::vector<ByteBuilder> records(4);
    for (auto& b : records) b.id_size = id;
    simple_class(records[0], wide(id, 0x2000), 0, {{wide(id, 0x701), 2}, {wide(id, 0x702), 10}});
    records[1].u1(0x21);              // INSTANCE DUMP
    records[1].id(wide(id, 0x8000));  //   object id
    records[1].u4(0);                 //   stack trace serial
    records[1].id(wide(id, 0x2000));  //   class id
    records[1].u4(3);                 //   bytes of field values
    records[1].u1(1).u1(2).u1(3);     //   3 bytes of values
    records[2].u1(0x22);              // OBJECT ARRAY DUMP
    records[2].id(wide(id, 0x8100));  //   array object id
    records[2].u4(0);                 //   stack trace serial
    records[2].u4(2);                 //   number of elements
    records[2].id(wide(id, 0x2300));  //   array class id
    records[2].id(wide(id, 0x8001));  //   [0]
    records[2].id(0);                 //   [1] null
    records[3].u1(0x23);              // PRIMITIVE ARRAY DUMP
    records[3].id(wide(id, 0x8200));  //   array object id
    records[3].u4(0);                 //   stack trace serial
    records[3].u4(3);                 //   number of elements
    records[3].u1(9);                 //   element type short
    records[3].u2(1).u2(2).u2(3);     //   3 shorts
    const std::uint64_t expected[] = {1 + 7 * id + 8 + 2 + 2 + 2 + 2 * (id + 1),  // class dump
                                      1 + 2 * id + 8 + 3,                        // instance
                                      1 + 2 * id + 8 + 2 * id,                   // object array
                                      1 + id + 9 + 6};                           // primitive array
    for (std::size_t r = 0; r < records.size(); ++r) {
        CAPTURE(r);
        const std::vector<std::uint8_t>& bytes = records[r].bytes;
        REQUIRE(bytes.size() == expected[r]);
        CHECK(std::get<std::uint64_t>(sub_record_size(bytes, 0, id)) == expected[r]);
        for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
            CAPTURE(cut);
            auto size = sub_record_size(Bytes(bytes).first(cut), 0, id);
            REQUIRE(std::holds_alternative<std::uint64_t>(size));
            CHECK(std::get<std::uint64_t>(size) == 0);
        }
    }
}

TEST_CASE("fixture: sub_record_size of an unknown tag is an error at its chunk position") {
    ByteBuilder b;
    b.id_size = 4;
    b.u1(0x05);  // ROOT STICKY CLASS
    b.u4(0x10);  //   object id
    b.u1(0x42);  // unknown sub-record tag, at position 5
    auto error = expect_error(sub_record_size(b.bytes, 5, 4));
    CHECK(error.offset == 5);
    CHECK(error.record == "sub-record tag 0x42");
}

// ---- errors -------------------------------------------------------------------------------

TEST_CASE("fixture: unknown sub-record tag between good roots is an error at its file offset") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x05);              // ROOT STICKY CLASS, at 0
    b.id(wide(id, 0x2000));  //   object id
    b.u1(0x42);              // unknown tag, at 1 + id
    b.id(wide(id, 0x2001));  //   (unreadable)
    b.u1(0x05);              // ROOT STICKY CLASS
    b.id(wide(id, 0x2002));  //   object id
    auto error = decode_error(b, no_layouts(id));
    CHECK(error.offset == kBase + 1 + id);
    CHECK(error.record == "sub-record tag 0x42");
    auto pass1 = expect_error(read_class_dumps(chunk_over(b.bytes), id));
    CHECK(pass1.offset == kBase + 1 + id);
}

TEST_CASE("fixture: instance of a class with no layout is an error at the instance") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x07);              // ROOT MONITOR USED, at 0
    b.id(wide(id, 0x8000));  //   object id
    b.u1(0x21);              // INSTANCE DUMP, at 1 + id
    b.id(wide(id, 0x8000));  //   object id
    b.u4(0);                 //   stack trace serial
    b.id(wide(id, 0x2999));  //   class id: no CLASS DUMP
    b.u4(4);                 //   bytes of field values
    b.u4(1);                 //   an int
    auto error = decode_error(b, context_from_classes(node_classes(id)));
    CHECK(error.offset == kBase + 1 + id);
    CHECK(error.record == "INSTANCE_DUMP");
    CHECK(error.message.find(hex_offset(wide(id, 0x2999))) != std::string::npos);
}

TEST_CASE("fixture: instance whose length contradicts its class layout is an error at the instance") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x21);              // INSTANCE DUMP, at 0
    b.id(wide(id, 0x8003));  //   object id
    b.u4(0);                 //   stack trace serial
    b.id(base_class(id));    //   class id: Base, whose fields need id + 4 bytes
    b.u4(id + 8);            //   bytes of field values: 4 too many
    b.id(wide(id, 0x8000));  //   Base.next
    b.u4(7);                 //   Base.count
    b.u4(0);                 //   4 stray bytes
    auto error = decode_error(b, context_from_classes(node_classes(id)));
    CHECK(error.offset == kBase);
    CHECK(error.record == "INSTANCE_DUMP");
    CHECK(error.message.find(std::to_string(id + 4)) != std::string::npos);
}

TEST_CASE("fixture: instance of a class whose super class dump is missing is an error at the instance") {
    ByteBuilder classes;
    classes.id_size = 4;
    simple_class(classes, 0x2400, 0x2999, {{0x741, 10}});  // super class 0x2999 never dumped
    ByteBuilder b;
    b.id_size = 4;
    b.u1(0x21);    // INSTANCE DUMP, at 0
    b.u4(0x8400);  //   object id
    b.u4(0);       //   stack trace serial
    b.u4(0x2400);  //   class id
    b.u4(4);       //   bytes of field values: matches the known level
    b.u4(1);       //   the int field
    auto error = decode_error(b, context_from_classes(classes));
    CHECK(error.offset == kBase);
    CHECK(error.record == "INSTANCE_DUMP");
}

TEST_CASE("fixture: PRIMITIVE ARRAY DUMP with an invalid element type is an error at the type byte") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    for (std::uint8_t type : {0, 2, 3, 12}) {  // 2 is object: not a primitive
        CAPTURE(int(type));
        ByteBuilder b;
        b.id_size = id;
        b.u1(0x05);              // ROOT STICKY CLASS, at 0
        b.id(wide(id, 0x2000));  //   object id
        b.u1(0x23);              // PRIMITIVE ARRAY DUMP, at 1 + id
        b.id(wide(id, 0x8200));  //   array object id
        b.u4(0);                 //   stack trace serial
        b.u4(1);                 //   number of elements
        b.u1(type);              //   invalid element type, at 1 + id + 1 + id + 8
        b.u4(0);                 //   some element bytes
        auto error = decode_error(b, no_layouts(id));
        CHECK(error.offset == kBase + 1 + id + 1 + id + 8);
        CHECK(error.record == "PRIMITIVE_ARRAY_DUMP");
        CHECK(error.message.find(std::to_string(type)) != std::string::npos);
    }
}

TEST_CASE("fixture: PRIMITIVE ARRAY NODATA with an invalid element type is an error at the record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x05);              // ROOT STICKY CLASS, at 0
    b.id(wide(id, 0x2000));  //   object id
    b.u1(0xC3);              // PRIMITIVE ARRAY NODATA, at 1 + id
    b.id(wide(id, 0x8300));  //   array object id
    b.u4(0);                 //   stack trace serial
    b.u4(10);                //   number of elements
    b.u1(2);                 //   element type object: invalid here
    auto error = decode_error(b, no_layouts(id));
    CHECK(error.offset == kBase + 1 + id);
    CHECK(error.record == "PRIMITIVE_ARRAY_NODATA");
}

// The fixed head of a CLASS DUMP with no super class, loader or signers, up to (not
// including) the instance size: tag, class id 0x2000, serial, six ids.
void class_dump_head(ByteBuilder& b) {
    b.u1(0x20);    // CLASS DUMP
    b.id(0x2000);  //   class object id
    b.u4(0);       //   stack trace serial
    b.id(0);       //   super class id
    b.id(0);       //   class loader id
    b.id(0);       //   signers id
    b.id(0);       //   protection domain id
    b.id(0);       //   reserved
    b.id(0);       //   reserved
}

TEST_CASE("fixture: CLASS DUMP with an invalid static type is an error at the type byte") {
    ByteBuilder b;
    b.id_size = 8;
    class_dump_head(b);  // CLASS DUMP of 0x2000 at 0: 1 + 7 ids + u4 serial bytes
    b.u4(0);         //   instance size
    b.u2(0);         //   constant pool entries
    b.u2(1);         //   statics: 1
    b.id(0x601);     //     name id
    b.u1(13);        //     type 13: invalid, at 1 + 7*8 + 8 + 2 + 2 + 8 = 77
    b.u4(0);         //     (value)
    b.u2(0);         //   instance fields
    auto error = expect_error(read_class_dumps(chunk_over(b.bytes), 8));
    CHECK(error.offset == kBase + 77);
    CHECK(error.record == "CLASS_DUMP");
}

TEST_CASE("fixture: CLASS DUMP with an invalid instance field type is an error at the type byte") {
    ByteBuilder b;
    b.id_size = 4;
    class_dump_head(b);  // CLASS DUMP of 0x2000 at 0: 1 + 7 ids + u4 serial bytes
    b.u4(4);         //   instance size
    b.u2(0);         //   constant pool entries
    b.u2(0);         //   statics
    b.u2(1);         //   instance fields: 1
    b.id(0x602);     //     name id
    b.u1(3);         //     type 3: no such type, at 1 + 7*4 + 8 + 2 + 2 + 2 + 4 = 47
    auto error = expect_error(read_class_dumps(chunk_over(b.bytes), 4));
    CHECK(error.offset == kBase + 47);
    CHECK(error.record == "CLASS_DUMP");
    CHECK(error.message == "instance field has invalid type 3");
}

TEST_CASE("fixture: sub-record running past the end of the chunk is an error at the sub-record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x05);              // ROOT STICKY CLASS, at 0
    b.id(wide(id, 0x2000));  //   object id
    b.u1(0x22);              // OBJECT ARRAY DUMP, at 1 + id
    b.id(wide(id, 0x8100));  //   array object id
    b.u4(0);                 //   stack trace serial
    b.u4(10);                //   number of elements: 10, only 2 follow
    b.id(wide(id, 0x2300));  //   array class id
    b.id(wide(id, 0x8001));  //   [0]
    b.id(wide(id, 0x8002));  //   [1]
    auto error = decode_error(b, no_layouts(id));
    CHECK(error.offset == kBase + 1 + id);
    CHECK(error.record == "OBJECT_ARRAY_DUMP");
    CHECK(error.message.find(hex_offset(kBase + b.size())) != std::string::npos);

    b.bytes.resize(1 + id + 3);  // now a cut object array header
    CHECK(decode_error(b, no_layouts(id)).offset == kBase + 1 + id);
    b.bytes.resize(id);          // now a cut root
    CHECK(decode_error(b, no_layouts(id)).offset == kBase);
}

TEST_CASE("fixture: a bad instance between good records is reported at its own offset") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    HprofContext context = context_from_classes(node_classes(id));
    ByteBuilder b;
    b.id_size = id;
    b.u1(0x05);              // ROOT STICKY CLASS, at 0
    b.id(base_class(id));    //   object id
    b.u1(0x21);              // INSTANCE DUMP, at 1 + id: good
    b.id(wide(id, 0x8003));  //   object id
    b.u4(0);                 //   stack trace serial
    b.id(base_class(id));    //   class id: Base
    b.u4(id + 4);            //   bytes of field values
    b.id(0);                 //   Base.next = null
    b.u4(7);                 //   Base.count
    const std::uint64_t bad = b.size();  // 1 + id + 1 + 2 * id + 8 + id + 4
    b.u1(0x21);              // INSTANCE DUMP: bad
    b.id(wide(id, 0x8004));  //   object id
    b.u4(0);                 //   stack trace serial
    b.id(base_class(id));    //   class id: Base
    b.u4(4);                 //   bytes of field values: Base needs id + 4
    b.u4(7);                 //   Base.count only
    b.u1(0x23);              // PRIMITIVE ARRAY DUMP: good
    b.id(wide(id, 0x8200));  //   array object id
    b.u4(0);                 //   stack trace serial
    b.u4(1);                 //   number of elements
    b.u1(8);                 //   element type byte
    b.u1(0x7F);              //   [0]
    REQUIRE(bad == 1 + id + 1 + 2 * id + 8 + id + 4);
    auto error = decode_error(b, context);
    CHECK(error.offset == kBase + bad);
    CHECK(error.record == "INSTANCE_DUMP");
    CHECK(error.message.find(hex_offset(wide(id, 0x8004))) != std::string::npos);
    // Pass 1 walks past the same record: its size is framed correctly.
    CHECK(expect_ok<std::vector<ClassDump>>(read_class_dumps(chunk_over(b.bytes), id)).empty());
}

TEST_CASE("fixture: chunk assembled from two file ranges maps error offsets into the second range") {
    ByteBuilder b;
    b.id_size = 4;
    b.u1(0x05);    // ROOT STICKY CLASS, chunk 0, file 0x1000
    b.u4(0x2000);  //   object id
    b.u1(0x05);    // ROOT STICKY CLASS, chunk 5, file 0x1005; its last 2 bytes are at 0x5000
    b.u4(0x2001);  //   object id
    b.u1(0x42);    // unknown tag, chunk 10, file 0x5000 + 10 - 8 = 0x5002
    HeapChunk chunk;
    chunk.bytes = b.bytes;
    chunk.pieces = {{0, 0x1000}, {8, 0x5000}};
    CHECK(chunk.file_offset(7) == 0x1007);
    CHECK(chunk.file_offset(8) == 0x5000);
    auto error = expect_error(decode_heap_chunk(chunk, no_layouts(4)));
    CHECK(error.offset == 0x5002);
    CHECK(error.record == "sub-record tag 0x42");
}

// ---- size model ---------------------------------------------------------------------------

TEST_CASE("fixture: make_size_model sets reference, klass, header and array header sizes") {
    SizeModel m32 = make_size_model(4, true, true, false);  // 32-bit: compression ignored
    CHECK(m32.reference_bytes == 4);
    CHECK(m32.klass_bytes == 4);
    CHECK_FALSE(m32.compressed_oops);
    CHECK(m32.object_header_bytes == 8);  // mark 4 + klass 4
    CHECK(m32.array_header_bytes == 12);  // 8 + length 4, aligned to 4
    CHECK(describe(m32) == "32-bit");

    SizeModel coops = make_size_model(8, true, false, false);  // oops imply class pointers
    CHECK(coops.reference_bytes == 4);
    CHECK(coops.compressed_klass);
    CHECK(coops.object_header_bytes == 12);  // mark 8 + klass 4
    CHECK(coops.array_header_bytes == 16);   // 12 + length 4
    CHECK(describe(coops) == "64-bit, compressed oops, compressed class pointers, per-class field layout (JDK 6-14)");

    SizeModel wide_refs = make_size_model(8, false, false, true);
    CHECK(wide_refs.reference_bytes == 8);
    CHECK(wide_refs.object_header_bytes == 16);  // mark 8 + klass 8
    CHECK(wide_refs.array_header_bytes == 24);   // 16 + length 4 = 20, aligned to 8

    SizeModel klass_only = make_size_model(8, false, true, false);
    CHECK(klass_only.reference_bytes == 8);
    CHECK(klass_only.object_header_bytes == 12);  // mark 8 + klass 4
    CHECK(klass_only.array_header_bytes == 16);   // 12 + 4 = 16, already aligned to 8
    CHECK(make_size_model(8, true, true, false, 16).alignment == 16);
}

TEST_CASE("fixture: instance_shallow_bytes of a two-level class under each VM layout") {
    // Node { boolean flag; Object left, right; } extends Base { Object next; int count; }
    std::vector<ClassLayout::Level> node = {{1, 2}, {4, 1}};  // Node first, Base last
    // Per-class: header, then each level from Base down, each level's end rounded up to the
    // reference size; the total rounded up to the 8-byte alignment.
    //   32-bit:  8 + Base(4 + 4) = 16; + Node(1 + 2*4) = 25 -> 28; -> 32
    CHECK(instance_shallow_bytes(node, make_size_model(4, false, false, false)) == 32);
    //   compressed oops: 12 + (4 + 4) = 20; + (1 + 8) = 29 -> 32; -> 32
    CHECK(instance_shallow_bytes(node, make_size_model(8, true, true, false)) == 32);
    //   uncompressed: 16 + (4 + 8) = 28 -> 32; + (1 + 16) = 49 -> 56; -> 56
    CHECK(instance_shallow_bytes(node, make_size_model(8, false, false, false)) == 56);
    // Packed (JDK 15+): header + all field bytes, aligned once.
    //   uncompressed: 16 + 12 + 17 = 45 -> 48
    CHECK(instance_shallow_bytes(node, make_size_model(8, false, false, true)) == 48);
    //   compressed oops: 12 + 8 + 9 = 29 -> 32
    CHECK(instance_shallow_bytes(node, make_size_model(8, true, true, true)) == 32);
}

TEST_CASE("fixture: instance_shallow_bytes of three one-boolean levels differs between packed and per-class") {
    std::vector<ClassLayout::Level> flags = {{1, 0}, {1, 0}, {1, 0}};
    // Per-class, compressed oops: 12 + 1 = 13 -> 16; + 1 = 17 -> 20; + 1 = 21 -> 24; -> 24
    CHECK(instance_shallow_bytes(flags, make_size_model(8, true, true, false)) == 24);
    // Packed, compressed oops: 12 + 3 = 15 -> 16
    CHECK(instance_shallow_bytes(flags, make_size_model(8, true, true, true)) == 16);
    // 32-bit per-class: 8 + 1 -> 12; + 1 -> 16; + 1 = 17 -> 20; -> 24.  Packed: 8 + 3 -> 16
    CHECK(instance_shallow_bytes(flags, make_size_model(4, false, false, false)) == 24);
    CHECK(instance_shallow_bytes(flags, make_size_model(4, false, false, true)) == 16);
}

TEST_CASE("fixture: instance_shallow_bytes adds injected fields and honours 16-byte alignment") {
    std::vector<ClassLayout::Level> object = {{0, 0}};  // java.lang.Object: no fields
    SizeModel coops = make_size_model(8, true, true, true);
    CHECK(instance_shallow_bytes(object, coops) == 16);  // 12 -> 16
    ClassLayout::Level loader = hotspot_injected_fields("java.lang.ClassLoader");
    CHECK(loader.primitive_bytes == 8);                           // loader_data
    CHECK(instance_shallow_bytes(object, coops, loader) == 24);  // 12 + 8 = 20 -> 24
    CHECK(hotspot_injected_fields("java.lang.String").primitive_bytes == 0);

    std::vector<ClassLayout::Level> two_ints = {{8, 0}};
    SizeModel align16 = make_size_model(8, true, true, true, 16);
    CHECK(instance_shallow_bytes(two_ints, align16) == 32);  // 12 + 8 = 20 -> 32
}

TEST_CASE("fixture: array_shallow_bytes is the array header plus elements, aligned") {
    SizeModel m32 = make_size_model(4, false, false, false);
    CHECK(array_shallow_bytes(3, 4, m32) == 24);  // int[3]:  12 + 12 = 24
    CHECK(array_shallow_bytes(0, 1, m32) == 16);  // byte[0]: 12 -> 16
    CHECK(array_shallow_bytes(1, 8, m32) == 24);  // long[1]: 12 + 8 = 20 -> 24
    SizeModel coops = make_size_model(8, true, true, false);
    CHECK(array_shallow_bytes(3, 4, coops) == 32);  // int[3]:    16 + 12 = 28 -> 32
    CHECK(array_shallow_bytes(5, 4, coops) == 40);  // Object[5]: 16 + 5*4 = 36 -> 40
    CHECK(array_shallow_bytes(0, 1, coops) == 16);  // byte[0]:   16
    SizeModel wide_refs = make_size_model(8, false, false, false);
    CHECK(array_shallow_bytes(3, 4, wide_refs) == 40);  // int[3]:    24 + 12 = 36 -> 40
    CHECK(array_shallow_bytes(5, 8, wide_refs) == 64);  // Object[5]: 24 + 40 = 64
    CHECK(array_shallow_bytes(1, 8, wide_refs) == 32);  // long[1]:   24 + 8 = 32
}

TEST_CASE("fixture: class_shallow_bytes sums the statics with the model's reference size") {
    ClassDump dump;
    dump.statics = {{0x601, 2, 0x5000}, {0x602, 2, 0}, {0x603, 10, 7}};  // Object, Object, int
    // 32-bit: 4 + 4 + 4 = 12 -> 16
    CHECK(class_shallow_bytes(dump, make_size_model(4, false, false, false)) == 16);
    // compressed oops: 4 + 4 + 4 = 12 -> 16
    CHECK(class_shallow_bytes(dump, make_size_model(8, true, true, false)) == 16);
    // uncompressed: 8 + 8 + 4 = 20 -> 24
    CHECK(class_shallow_bytes(dump, make_size_model(8, false, false, false)) == 24);
    dump.statics.push_back({0x604, 11, 1});  // + long: 20 + 8 = 28 -> 32
    CHECK(class_shallow_bytes(dump, make_size_model(8, false, false, false)) == 32);
    CHECK(class_shallow_bytes(ClassDump{}, make_size_model(8, true, true, false)) == 0);
}

TEST_CASE("hprof heap: the inline object record size agrees with the size by tag wherever it answers") {
    // Random bytes with the three object tags planted often, both id sizes, every position:
    // the fast path answers only where the full one gives the same whole size.
    std::mt19937 rng(7);
    for (std::uint32_t id : {4u, 8u}) {
        std::vector<std::uint8_t> bytes(20000);
        for (auto& b : bytes) {
            std::uint32_t r = rng();
            b = r % 5 == 0 ? static_cast<std::uint8_t>(0x21 + (r >> 8) % 3) : static_cast<std::uint8_t>(r >> 16);
            if (r % 5 != 0 && r % 4 != 0) b = r % 3 == 0 ? 1 : 0;  // small lengths, so records end inside the buffer
        }
        std::size_t answered = 0;
        for (std::uint64_t pos = 0; pos < bytes.size(); ++pos) {
            const std::uint64_t fast = object_record_size(bytes, pos, id);
            auto full = sub_record_size_by_tag(bytes, pos, id);
            const auto* size = std::get_if<std::uint64_t>(&full);
            if (fast == 0) {
                // Only the object tags with a whole record and a good type are answered inline.
                const std::uint8_t tag = bytes[pos];
                if (size && *size && (tag == 0x21 || tag == 0x22)) FAIL("unanswered whole record at ", pos);
                continue;
            }
            ++answered;
            REQUIRE(size != nullptr);
            CHECK(*size == fast);
        }
        CHECK(answered > 100);
    }
}
