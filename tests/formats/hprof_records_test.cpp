// Byte-array fixtures for the HPROF file header and the top-level records
// (formats/hprof_records.cpp), plus java_class_name (size_model.cpp) and detect_format
// (detect.cpp). Every fixture is built with ids of 4 and of 8 bytes where the layout has ids.
#include "formats.h"
#include "decode_expect.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

using namespace heapgraph;
using heapgraph::test::ByteBuilder;
using heapgraph::test::bytes_of;
using heapgraph::test::expect_error;
using heapgraph::test::expect_ok;
using heapgraph::test::wide;

namespace {

// Every fixture file starts with this 31-byte header, so the first record sits at 0x1f.
constexpr std::uint64_t kFirstRecord = 31;

ByteBuilder hprof_file(std::uint32_t id) {
    ByteBuilder b;
    b.id_size = id;
    b.text("JAVA PROFILE 1.0.2");  // format name (18 bytes)
    b.u1(0);                       // NUL ending the name
    b.u4(id);                      // identifier size
    b.u8(0x0000018C4A2B3C4DULL);   // timestamp, ms since 1970
    return b;
}

// Frames the record at `offset` and decodes its body.
std::variant<TopRecord, DecodeError> decode_at(const ByteBuilder& b, std::uint64_t offset) {
    RecordFrame frame = expect_ok<RecordFrame>(read_record_frame(b.bytes, offset));
    return decode_top_record(frame, Bytes(b.bytes).subspan(frame.body_offset, frame.body_length),
                             b.id_size);
}

// Decodes the first record and returns it as T.
template <typename T>
T decode_first(const ByteBuilder& b) {
    auto result = decode_at(b, kFirstRecord);
    const TopRecord& record = expect_ok<TopRecord>(result);
    REQUIRE(std::holds_alternative<T>(record));
    return std::get<T>(record);
}

}  // namespace

// ---- header ---------------------------------------------------------------------------------

TEST_CASE("fixture: header of versions 1.0.1, 1.0.2 and 1.0.3 with 4- and 8-byte ids reads every field") {
    for (std::string version : {"JAVA PROFILE 1.0.1", "JAVA PROFILE 1.0.2", "JAVA PROFILE 1.0.3"}) {
        for (std::uint32_t id : {4u, 8u}) {
            CAPTURE(version);
            CAPTURE(id);
            ByteBuilder b;
            b.text(version);              // format name (18 bytes)
            b.u1(0);                      // NUL
            b.u4(id);                     // identifier size
            b.u4(0x0000018C);             // timestamp high word
            b.u4(0x4A2B3C4D);             // timestamp low word
            b.u1(0x2C);                   // first record's tag (not read by the header)
            auto header = expect_ok<HprofHeader>(read_hprof_header(b.bytes));
            CHECK(header.version == version);
            CHECK(header.id_size == id);
            CHECK(header.timestamp_ms == 0x0000018C4A2B3C4DULL);
            CHECK(header.records_offset == 31);
        }
    }
}

TEST_CASE("fixture: header naming an unsupported version is an error at offset 0") {
    ByteBuilder b;
    b.text("JAVA PROFILE 1.0.9");  // unknown version
    b.u1(0);                       // NUL
    b.u4(8);                       // identifier size
    b.u8(0);                       // timestamp
    auto error = expect_error(read_hprof_header(b.bytes));
    CHECK(error.offset == 0);
    CHECK(error.record == "header");
    CHECK(error.message.find("1.0.9") != std::string::npos);
}

TEST_CASE("fixture: header without a NUL in its first 64 bytes is an error at offset 0") {
    ByteBuilder b;
    b.text(std::string(70, 'J'));  // 70 bytes of name, no NUL
    auto error = expect_error(read_hprof_header(b.bytes));
    CHECK(error.offset == 0);
    CHECK(error.record == "header");
}

TEST_CASE("fixture: header cut short inside the format name is an error at the end of the file") {
    ByteBuilder b;
    b.text("JAVA PROF");  // 9 bytes of the name, then the file ends
    auto error = expect_error(read_hprof_header(b.bytes));
    CHECK(error.offset == 9);
    CHECK(error.record == "header");
}

TEST_CASE("fixture: header with identifier size 5 is an error at the size field, offset 19") {
    ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2");  // format name
    b.u1(0);                       // NUL
    b.u4(5);                       // identifier size 5: neither 4 nor 8
    b.u8(0);                       // timestamp
    auto error = expect_error(read_hprof_header(b.bytes));
    CHECK(error.offset == 19);
    CHECK(error.record == "header");
    CHECK(error.message.find("5") != std::string::npos);
}

TEST_CASE("fixture: header cut short after the identifier size is an error at offset 19") {
    ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2");  // format name
    b.u1(0);                       // NUL
    b.u4(8);                       // identifier size
    b.u4(0);                       // timestamp high word; the low word is missing
    auto error = expect_error(read_hprof_header(b.bytes));
    CHECK(error.offset == 19);
    CHECK(error.record == "header");
}

// ---- record frames --------------------------------------------------------------------------

TEST_CASE("fixture: record frame of a known tag gives the body offset and length") {
    ByteBuilder b = hprof_file(8);
    b.u1(0x0B);  // tag END THREAD
    b.u4(77);    // time, µs since the header's timestamp
    b.u4(4);     // length
    b.u4(9);     // thread serial
    auto frame = expect_ok<RecordFrame>(read_record_frame(b.bytes, kFirstRecord));
    CHECK(frame.tag == 0x0B);
    CHECK(frame.body_offset == kFirstRecord + 9);
    CHECK(frame.body_length == 4);
}

TEST_CASE("fixture: record frame with an unknown tag after a good record is an error at its offset") {
    ByteBuilder b = hprof_file(4);
    b.u1(0x0B);  // tag END THREAD, at 0x1f
    b.u4(0);     // time
    b.u4(4);     // length
    b.u4(9);     // thread serial
    b.u1(0x42);  // unknown tag, at 0x1f + 13 = 0x2c
    b.u4(0);     // time
    b.u4(0);     // length
    CHECK(std::holds_alternative<RecordFrame>(read_record_frame(b.bytes, kFirstRecord)));
    auto error = expect_error(read_record_frame(b.bytes, kFirstRecord + 13));
    CHECK(error.offset == 0x2c);
    CHECK(error.record == "record tag 0x42");
}

TEST_CASE("fixture: record frame whose body runs past the end of the file is an error at the record") {
    ByteBuilder b = hprof_file(4);
    b.u1(0x01);   // tag STRING
    b.u4(0);      // time
    b.u4(100);    // length 100, but only 6 bytes follow
    b.u4(0x501);  // string id
    b.text("ab");  // text
    auto error = expect_error(read_record_frame(b.bytes, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "STRING");
    CHECK(error.message.find(hex_offset(b.size())) != std::string::npos);
}

TEST_CASE("fixture: record frame with fewer than 9 header bytes left is an error at the record") {
    ByteBuilder b = hprof_file(4);
    b.u1(0x01);  // tag STRING
    b.u4(0);     // time; the length is missing
    auto error = expect_error(read_record_frame(b.bytes, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "record header");
}

// ---- top-level records, each with 4- and 8-byte ids --------------------------------------

TEST_CASE("fixture: STRING reads its id and the UTF-8 text after it") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x01);              // tag STRING
    b.u4(0);                 // time
    b.u4(id + 5);            // length: id + 5 bytes of text
    b.id(wide(id, 0x501));   // string id
    b.text("hello");         // text, not NUL-terminated
    auto record = decode_first<StringRecord>(b);
    CHECK(record.id == wide(id, 0x501));
    CHECK(record.text == "hello");
}

TEST_CASE("fixture: STRING with an empty text reads just its id") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x01);             // tag STRING
    b.u4(0);                // time
    b.u4(id);               // length: the id only
    b.id(wide(id, 0x502));  // string id
    auto record = decode_first<StringRecord>(b);
    CHECK(record.id == wide(id, 0x502));
    CHECK(record.text.empty());
}

TEST_CASE("fixture: STRING shorter than an id is an error at the record") {
    ByteBuilder b = hprof_file(8);
    b.u1(0x01);  // tag STRING
    b.u4(0);     // time
    b.u4(3);     // length 3: less than the 8-byte id
    b.u1(0x01);  // id byte 1
    b.u1(0x02);  // id byte 2
    b.u1(0x03);  // id byte 3
    auto error = expect_error(decode_at(b, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "STRING");
}

TEST_CASE("fixture: LOAD CLASS reads serial, class id, trace serial and name id") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x02);              // tag LOAD CLASS
    b.u4(0);                 // time
    b.u4(8 + 2 * id);        // length: 2 u4 + 2 ids
    b.u4(7);                 // class serial
    b.id(wide(id, 0x1000));  // class object id
    b.u4(3);                 // stack trace serial
    b.id(wide(id, 0x501));   // class name string id
    auto record = decode_first<LoadClassRecord>(b);
    CHECK(record.serial == 7);
    CHECK(record.class_id == wide(id, 0x1000));
    CHECK(record.stack_trace_serial == 3);
    CHECK(record.name_id == wide(id, 0x501));
}

TEST_CASE("fixture: UNLOAD CLASS is checked and kept as an other record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x03);  // tag UNLOAD CLASS
    b.u4(0);     // time
    b.u4(4);     // length
    b.u4(7);     // class serial
    CHECK(decode_first<OtherRecord>(b).tag == 0x03);
}

TEST_CASE("fixture: STACK FRAME reads four ids, the class serial and a negative line") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x04);             // tag STACK FRAME
    b.u4(0);                // time
    b.u4(4 * id + 8);       // length: 4 ids + 2 u4
    b.id(wide(id, 0x900));  // stack frame id
    b.id(wide(id, 0x511));  // method name string id
    b.id(wide(id, 0x512));  // method signature string id
    b.id(wide(id, 0x513));  // source file name string id
    b.u4(7);                // class serial
    b.u4(0xFFFFFFFF);       // line -1: unknown location
    auto record = decode_first<StackFrameRecord>(b);
    CHECK(record.frame_id == wide(id, 0x900));
    CHECK(record.method_name_id == wide(id, 0x511));
    CHECK(record.signature_id == wide(id, 0x512));
    CHECK(record.source_file_id == wide(id, 0x513));
    CHECK(record.class_serial == 7);
    CHECK(record.line == -1);
}

TEST_CASE("fixture: STACK TRACE reads serials and every frame id") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x05);             // tag STACK TRACE
    b.u4(0);                // time
    b.u4(12 + 2 * id);      // length: 3 u4 + 2 frame ids
    b.u4(5);                // stack trace serial
    b.u4(2);                // thread serial
    b.u4(2);                // number of frames
    b.id(wide(id, 0x900));  // frame 0 id
    b.id(wide(id, 0x901));  // frame 1 id
    auto record = decode_first<StackTraceRecord>(b);
    CHECK(record.serial == 5);
    CHECK(record.thread_serial == 2);
    CHECK(record.frame_ids == std::vector<ObjectId>{wide(id, 0x900), wide(id, 0x901)});
}

TEST_CASE("fixture: ALLOC SITES with one site is checked and kept as an other record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x06);        // tag ALLOC SITES
    b.u4(0);           // time
    b.u4(34 + 25);     // length: 34-byte head + one 25-byte site
    b.u2(0x0003);      // flags: incremental, sorted by allocation
    b.u4(0x3C23D70A);  // cutoff ratio (float 0.01)
    b.u4(4096);        // total live bytes
    b.u4(64);          // total live instances
    b.u8(8192);        // total bytes allocated
    b.u8(128);         // total instances allocated
    b.u4(1);           // number of sites
    b.u1(0);           //   array indicator: not an array
    b.u4(7);           //   class serial
    b.u4(3);           //   stack trace serial
    b.u4(4096);        //   live bytes
    b.u4(64);          //   live instances
    b.u4(8192);        //   bytes allocated
    b.u4(128);         //   instances allocated
    CHECK(decode_first<OtherRecord>(b).tag == 0x06);
}

TEST_CASE("fixture: HEAP SUMMARY is checked and kept as an other record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x07);  // tag HEAP SUMMARY
    b.u4(0);     // time
    b.u4(24);    // length: 2 u4 + 2 u8
    b.u4(4096);  // total live bytes
    b.u4(64);    // total live instances
    b.u8(8192);  // total bytes allocated
    b.u8(128);   // total instances allocated
    CHECK(decode_first<OtherRecord>(b).tag == 0x07);
}

TEST_CASE("fixture: START THREAD reads serials, thread id and the three name ids") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x0A);              // tag START THREAD
    b.u4(0);                 // time
    b.u4(8 + 4 * id);        // length: 2 u4 + 4 ids
    b.u4(2);                 // thread serial
    b.id(wide(id, 0x7000));  // thread object id
    b.u4(5);                 // stack trace serial
    b.id(wide(id, 0x521));   // thread name string id
    b.id(wide(id, 0x522));   // thread group name id
    b.id(wide(id, 0x523));   // parent group name id
    auto record = decode_first<StartThreadRecord>(b);
    CHECK(record.thread_serial == 2);
    CHECK(record.thread_id == wide(id, 0x7000));
    CHECK(record.stack_trace_serial == 5);
    CHECK(record.name_id == wide(id, 0x521));
    CHECK(record.group_name_id == wide(id, 0x522));
    CHECK(record.parent_group_name_id == wide(id, 0x523));
}

TEST_CASE("fixture: END THREAD is checked and kept as an other record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x0B);  // tag END THREAD
    b.u4(0);     // time
    b.u4(4);     // length
    b.u4(2);     // thread serial
    CHECK(decode_first<OtherRecord>(b).tag == 0x0B);
}

TEST_CASE("fixture: CPU SAMPLES with two traces is checked and kept as an other record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x0D);    // tag CPU SAMPLES
    b.u4(0);       // time
    b.u4(8 + 16);  // length: 2 u4 + 2 traces of 2 u4
    b.u4(30);      // total number of samples
    b.u4(2);       // number of traces
    b.u4(20);      //   samples
    b.u4(5);       //   stack trace serial
    b.u4(10);      //   samples
    b.u4(6);       //   stack trace serial
    CHECK(decode_first<OtherRecord>(b).tag == 0x0D);
}

TEST_CASE("fixture: CONTROL SETTINGS is checked and kept as an other record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x0E);  // tag CONTROL SETTINGS
    b.u4(0);     // time
    b.u4(6);     // length: u4 + u2
    b.u4(0x3);   // flags: alloc traces on, cpu sampling on
    b.u2(16);    // stack trace depth
    CHECK(decode_first<OtherRecord>(b).tag == 0x0E);
}

TEST_CASE("fixture: HEAP DUMP END with an empty body is kept as an other record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x2C);  // tag HEAP DUMP END
    b.u4(0);     // time
    b.u4(0);     // length: no body
    CHECK(decode_first<OtherRecord>(b).tag == 0x2C);
}

// ---- length contradictions ---------------------------------------------------------------

TEST_CASE("fixture: LOAD CLASS with length 20 under 8-byte ids is an error at the record") {
    ByteBuilder b = hprof_file(8);
    b.u1(0x02);      // tag LOAD CLASS
    b.u4(0);         // time
    b.u4(20);        // length 20: 8-byte ids need 24
    b.u4(7);         // class serial
    b.id(0x1000);    // class object id
    b.u4(3);         // stack trace serial
    b.u4(0x501);     // class name string id, cut to 4 bytes
    auto error = expect_error(decode_at(b, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "LOAD_CLASS");
    CHECK(error.message.find("24") != std::string::npos);
}

TEST_CASE("fixture: STACK TRACE whose frame count disagrees with its length is an error at the record") {
    std::uint32_t id = 0;
    SUBCASE("4-byte ids") { id = 4; }
    SUBCASE("8-byte ids") { id = 8; }
    ByteBuilder b = hprof_file(id);
    b.u1(0x05);             // tag STACK TRACE
    b.u4(0);                // time
    b.u4(12 + 2 * id);      // length: room for 2 frames
    b.u4(5);                // stack trace serial
    b.u4(2);                // thread serial
    b.u4(3);                // number of frames: 3, contradicting the length
    b.id(wide(id, 0x900));  // frame 0 id
    b.id(wide(id, 0x901));  // frame 1 id
    auto error = expect_error(decode_at(b, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "STACK_TRACE");
    CHECK(error.message.find(std::to_string(12 + 3 * id)) != std::string::npos);
}

TEST_CASE("fixture: STACK TRACE shorter than its three counts is an error at the record") {
    ByteBuilder b = hprof_file(4);
    b.u1(0x05);  // tag STACK TRACE
    b.u4(0);     // time
    b.u4(8);     // length 8: the frame count is missing
    b.u4(5);     // stack trace serial
    b.u4(2);     // thread serial
    auto error = expect_error(decode_at(b, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "STACK_TRACE");
}

TEST_CASE("fixture: ALLOC SITES whose site count disagrees with its length is an error at the record") {
    ByteBuilder b = hprof_file(8);
    b.u1(0x06);    // tag ALLOC SITES
    b.u4(0);       // time
    b.u4(34);      // length: the head only
    b.u2(0);       // flags
    b.u4(0);       // cutoff ratio
    b.u4(0);       // total live bytes
    b.u4(0);       // total live instances
    b.u8(0);       // total bytes allocated
    b.u8(0);       // total instances allocated
    b.u4(2);       // number of sites: 2, but no site follows
    auto error = expect_error(decode_at(b, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "ALLOC_SITES");
    CHECK(error.message.find(std::to_string(34 + 2 * 25)) != std::string::npos);
}

TEST_CASE("fixture: CPU SAMPLES whose trace count disagrees with its length is an error at the record") {
    ByteBuilder b = hprof_file(4);
    b.u1(0x0D);  // tag CPU SAMPLES
    b.u4(0);     // time
    b.u4(16);    // length: head + 1 trace
    b.u4(20);    // total number of samples
    b.u4(3);     // number of traces: 3, but one follows
    b.u4(20);    //   samples
    b.u4(5);     //   stack trace serial
    auto error = expect_error(decode_at(b, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "CPU_SAMPLES");
}

TEST_CASE("fixture: fixed-size records with a wrong length are errors at the record") {
    // Each row: tag and a body one byte longer than the record's fixed layout.
    struct Case {
        std::uint8_t tag;
        std::uint32_t length;
        const char* name;
    };
    for (Case c : {Case{0x03, 5, "UNLOAD_CLASS"}, Case{0x04, 4 * 8 + 9, "STACK_FRAME"},
                   Case{0x07, 25, "HEAP_SUMMARY"}, Case{0x0A, 8 + 4 * 8 + 1, "START_THREAD"},
                   Case{0x0B, 5, "END_THREAD"}, Case{0x0E, 7, "CONTROL_SETTINGS"},
                   Case{0x2C, 1, "HEAP_DUMP_END"}}) {
        CAPTURE(c.name);
        ByteBuilder b = hprof_file(8);
        b.u1(c.tag);                          // tag
        b.u4(0);                              // time
        b.u4(c.length);                       // length, one byte too many
        b.text(std::string(c.length, '\0'));  // body of zeros
        auto error = expect_error(decode_at(b, kFirstRecord));
        CHECK(error.offset == kFirstRecord);
        CHECK(error.record == c.name);
    }
}

TEST_CASE("fixture: HEAP DUMP SEGMENT handed to decode_top_record is an error at the record") {
    ByteBuilder b = hprof_file(4);
    b.u1(0x1C);  // tag HEAP DUMP SEGMENT
    b.u4(0);     // time
    b.u4(5);     // length
    b.u1(0x05);  // sub-record ROOT STICKY CLASS
    b.u4(0x10);  //   object id
    auto error = expect_error(decode_at(b, kFirstRecord));
    CHECK(error.offset == kFirstRecord);
    CHECK(error.record == "HEAP_DUMP_SEGMENT");
}

TEST_CASE("fixture: a bad LOAD CLASS between good records is reported at its own offset") {
    ByteBuilder b = hprof_file(8);
    b.u1(0x01);         // tag STRING, at 0x1f
    b.u4(0);            // time
    b.u4(8 + 3);        // length: id + "Foo"
    b.id(0x501);        // string id
    b.text("Foo");      // text
    b.u1(0x02);         // tag LOAD CLASS, at 0x1f + 9 + 11 = 0x33
    b.u4(0);            // time
    b.u4(20);           // length 20, 8-byte ids need 24
    b.u4(7);            // class serial
    b.id(0x1000);       // class object id
    b.u4(3);            // stack trace serial
    b.u4(0x501);        // class name id, cut to 4 bytes
    b.u1(0x0B);         // tag END THREAD, at 0x33 + 9 + 20 = 0x50
    b.u4(0);            // time
    b.u4(4);            // length
    b.u4(2);            // thread serial

    std::vector<std::uint64_t> decoded;
    std::vector<DecodeError> errors;
    for (std::uint64_t offset = kFirstRecord; offset < b.size();) {
        RecordFrame frame = expect_ok<RecordFrame>(read_record_frame(b.bytes, offset));
        auto result = decode_top_record(
            frame, Bytes(b.bytes).subspan(frame.body_offset, frame.body_length), 8);
        if (auto* error = std::get_if<DecodeError>(&result)) errors.push_back(*error);
        else decoded.push_back(offset);
        offset = frame.body_offset + frame.body_length;
    }
    CHECK(decoded == std::vector<std::uint64_t>{0x1f, 0x50});
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].offset == 0x33);
    CHECK(errors[0].record == "LOAD_CLASS");
}

// ---- class names and format detection --------------------------------------------------

TEST_CASE("fixture: java_class_name turns dump spellings into Java names") {
    CHECK(java_class_name("java/lang/String") == "java.lang.String");
    CHECK(java_class_name("java.lang.String") == "java.lang.String");
    CHECK(java_class_name("[Ljava/lang/String;") == "java.lang.String[]");
    CHECK(java_class_name("[[Ljava/lang/Object;") == "java.lang.Object[][]");
    CHECK(java_class_name("[[I") == "int[][]");
    CHECK(java_class_name("[Z") == "boolean[]");
    CHECK(java_class_name("[J") == "long[]");
    CHECK(java_class_name("java.lang.Object[]") == "java.lang.Object[]");
    CHECK(java_class_name("int[]") == "int[]");
    CHECK(java_class_name("[Q") == "[Q");  // not a signature: kept as written
}

TEST_CASE("fixture: detect_format recognises each dump by its first bytes") {
    CHECK(detect_format(bytes_of(std::string("JAVA PROFILE 1.0.2\0", 19))) == DumpFormat::hprof);
    CHECK(detect_format(std::vector<std::uint8_t>{0x1f, 0x8b, 0x08, 0x00}) == DumpFormat::gzip);

    ByteBuilder phd;
    phd.u2(18);                          // u2 length of the name: 0x00 0x12
    phd.text("portable heap dump");      // name
    phd.u4(6);                           // version
    CHECK(detect_format(phd.bytes) == DumpFormat::phd);

    CHECK(detect_format(bytes_of("// Version: J9TRACE\n")) == DumpFormat::classic);
    CHECK(detect_format(bytes_of("\xEF\xBB\xBF// Version: J9\n")) == DumpFormat::classic);
    std::vector<std::uint8_t> ebcdic = {
        0x61, 0x61,  // "//"
        0x40,        // " "
        0xE5,        // "V"
        0x85, 0x99, 0xA2, 0x89, 0x96, 0x95,  // "ersion"
        0x7A,        // ":"
        0x40};       // " "
    CHECK(detect_format(ebcdic) == DumpFormat::classic);

    CHECK(detect_format(bytes_of("PK\x03\x04")) == DumpFormat::unknown);
    CHECK(detect_format(bytes_of(std::string("\0\x12portable", 10))) == DumpFormat::unknown);
    CHECK(detect_format(bytes_of("JAVA PROF")) == DumpFormat::hprof);  // cut short: the reader reports it
    CHECK(detect_format(bytes_of("JAVA PROFILER 1.0\n")) == DumpFormat::unknown);
    CHECK(format_name(DumpFormat::phd) == "phd");
}

TEST_CASE("modified UTF-8: surrogate pairs join, C0 80 is U+0000, bad bytes become U+FFFD, the result is UTF-8") {
    const std::string bad = "\xEF\xBF\xBD";  // U+FFFD
    CHECK(utf8_from_modified("java/lang/String") == "java/lang/String");
    CHECK(utf8_from_modified("\xC3\xA9\xE2\x82\xAC") == "\xC3\xA9\xE2\x82\xAC");          // é €: 2 and 3 bytes
    CHECK(utf8_from_modified("a\xED\xA0\xBD\xED\xB8\x80z") == "a\xF0\x9F\x98\x80z");      // U+1F600 as a pair
    CHECK(utf8_from_modified("\xED\xAF\xBF\xED\xBF\xBF") == "\xF4\x8F\xBF\xBF");          // U+10FFFF, the last
    CHECK(utf8_from_modified("a\xC0\x80" "b") == std::string("a\0b", 3));                  // U+0000
    CHECK(utf8_from_modified("\xED\xA0\xBD") == bad);                                       // high half, at the end
    CHECK(utf8_from_modified("\xED\xA0\xBDx") == bad + "x");                                // high half, then no low
    CHECK(utf8_from_modified("\xED\xB8\x80\xED\xA0\xBD") == bad + bad);                    // low before high
    CHECK(utf8_from_modified("\xFF\xFE") == bad + bad);                                     // never in UTF-8
    CHECK(utf8_from_modified("\x80z") == bad + "z");                                        // a stray continuation
    CHECK(utf8_from_modified("\xE4\xB8z") == bad + "z");                                    // a cut sequence: one U+FFFD
    CHECK(utf8_from_modified("\xE4\xB8") == bad);                                           // ... at the end
    CHECK(utf8_from_modified("\xC1\xBF\xE0\x80\x80") == bad + bad);                        // overlong forms
    CHECK(utf8_from_modified("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");                  // standard 4-byte form
    CHECK(utf8_from_modified("\xF4\x90\x80\x80") == bad);                                   // beyond U+10FFFF
    CHECK(utf8_from_modified("").empty());
}
