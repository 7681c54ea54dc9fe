// Edge blocks: what the decoder reads comes back out of the varint stream unchanged,
// including references far below and above their object and class ids with no class dump.
#include <doctest/doctest.h>

#include "edge_blocks.h"
#include "test_support.h"

using namespace heapgraph;

TEST_CASE("edge blocks: objects and references survive the varint round trip") {
    test::ByteBuilder b;  // 8-byte ids
    b.u1(0x21).id(0x7f0000100).u4(0).id(0x900).u4(16);       // INSTANCE of class 0x900, 16 bytes of fields
    b.id(0x7f0000010).id(0x7ffff0000);                        //   two references: below, far above
    b.u1(0x22).id(0x7f0000200).u4(0).u4(3).id(0x999);         // OBJECT ARRAY[3] of class 0x999 (no dump)
    b.id(0x7f0000100).id(0).id(0x7f0000300);                  //   an element, a null, an element
    b.u1(0x23).id(0x7f0000300).u4(0).u4(1000000).u1(10);      // PRIMITIVE ARRAY int[1000000], no data here
    b.bytes.resize(b.bytes.size() + 4'000'000, 0);            //   (its 4,000,000 data bytes)
    HeapChunk chunk;
    chunk.bytes = b.bytes;
    chunk.pieces = {{0, 0x5000}};
    ClassTable table;
    table.context.id_size = 8;
    ClassDump dump;  // two object fields
    dump.class_id = 0x900;
    dump.fields = {{0x1, 2}, {0x2, 2}};
    table.context.layouts = ClassLayouts(std::vector<ClassDump>{dump}, 8);
    table.ordinal.emplace(0x900, 1);

    auto block = std::get<EdgeBlock>(decode_to_block(chunk, table));
    CHECK(block.objects == 3);
    CHECK(block.refs == 4);
    CHECK(block.unknown_classes == std::vector<ObjectId>{0x999});
    BlockReader reader(block);
    BlockReader::Entry e;
    REQUIRE(reader.next(e));
    CHECK(e.address == 0x7f0000100);
    CHECK(e.kind == ObjectKind::instance);
    CHECK(e.class_ordinal == 1);
    CHECK(e.file_offset == 0x5000);
    REQUIRE(e.ref_count == 2);
    CHECK(reader.next_ref(e) == 0x7f0000010);
    CHECK(reader.next_ref(e) == 0x7ffff0000);
    REQUIRE(reader.next(e));
    CHECK(e.kind == ObjectKind::object_array);
    CHECK(e.class_ordinal == 0);
    CHECK(e.raw_class_id == 0x999);
    CHECK(e.length == 3);
    REQUIRE(e.ref_count == 2);
    CHECK(reader.next_ref(e) == 0x7f0000100);
    CHECK(reader.next_ref(e) == 0x7f0000300);
    REQUIRE(reader.next(e));
    CHECK(e.kind == ObjectKind::primitive_array);
    CHECK(e.element_type == 10);
    CHECK(e.length == 1000000);
    CHECK(e.ref_count == 0);
    CHECK(!reader.next(e));
}

TEST_CASE("edge blocks: an instance of a class not yet seen defers the chunk") {
    test::ByteBuilder b;
    b.u1(0x21).id(0x100).u4(0).id(0x900).u4(0);  // INSTANCE of class 0x900, no fields
    HeapChunk chunk;
    chunk.bytes = b.bytes;
    chunk.pieces = {{0, 0}};
    ClassTable table;
    table.context.defer_unknown_classes = true;
    auto block = std::get<EdgeBlock>(decode_to_block(chunk, table));
    CHECK(block.deferred_on == 0x900);
    table.context.defer_unknown_classes = false;  // the final table: now it is an error
    CHECK(std::holds_alternative<DecodeError>(decode_to_block(chunk, table)));
}
