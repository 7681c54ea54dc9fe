// The value reader: field values and array contents, read back from an HPROF dump's records
// after the graph is built (the graph keeps no values). One parallel pass over the heap
// dump (pipeline/values.cpp) collects what the content analyses ask for:
//   - every java.lang.String instance: its value array and, where the JDK has them, its
//     coder (JDK 9+ compact strings) and offset/count (JDK 6 substrings);
//   - every primitive array: its length, element type, where its elements lie in the file
//     and a hash of them, so that equal contents group without keeping any content;
//   - every object array's length (collections' capacities);
//   - the records of objects asked for by address or by class (ValueRequest: the inspector's
//     objects, System.props's map, every Thread), and the thread roots; then the threads'
//     STACK TRACE and STACK FRAME records from the top level.
// With LoadOptions::values the decode collects all of that but the records asked for by
// address, chunk by chunk (LoadValues, ValueCollector), and the pass after the load reads only
// the chunks that can hold those (docs/pipeline.md, "Values from the decode").
// Records are kept by address (sorted); node ids are found by one merge with the dump's
// sorted addresses, never a search per record. PHD and classic text hold no values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "column.h"
#include "formats.h"
#include "pipeline.h"

namespace heapgraph {

struct DumpSource;

struct StringObject {
    ObjectId address = 0, value = 0;  // the String, its char[] or byte[]
    std::int32_t offset = -1, count = -1;  // JDK 6: the slice of `value` it uses; -1: the whole array
    std::int8_t coder = -1;                // JDK 9+: 0 Latin-1, 1 UTF-16; -1: no coder (char[])
};

// A 128-bit hash of contents (XXH3): the duplicate check groups equal contents by it with
// their length and kind, without reading them again (docs/report-schema.md).
struct ContentHash {
    std::uint64_t low = 0, high = 0;
    friend auto operator<=>(const ContentHash&, const ContentHash&) = default;
};

struct ArrayObject {
    static constexpr std::uint64_t kSplit = ~std::uint64_t{0};
    ObjectId address = 0;
    std::uint64_t data_offset = kSplit;  // file offset of the elements; kSplit: not contiguous in the file
    std::uint32_t length = 0;
    std::uint8_t type = 0;     // BasicType
    ContentHash hash = {};     // of the element bytes
};

// The record of an object an analysis asked for by address (an object to inspect, a part of
// System.props) or by class (threads): instance field values as dumped, or an object
// array's first element ids.
struct ObjectRecordCopy {
    static constexpr std::uint32_t kMaxElements = 1u << 16;  // element ids copied at most
    ObjectId address = 0, class_id = 0;  // object arrays: the array class
    bool array = false;
    std::uint32_t length = 0;            // object arrays: elements (all, not only those copied)
    std::vector<std::uint8_t> bytes;     // instance: field values; array: element ids
};

// An object array's length (collections' capacities).
struct ArrayLength {
    ObjectId address = 0;
    std::uint32_t length = 0;
};

// HPROF roots that tie objects to threads and frames: ROOT THREAD OBJECT (frame: its stack
// trace serial) and ROOT JAVA FRAME / ROOT JNI LOCAL (frame: the frame's depth, 0 the top).
struct ThreadRoot {
    ObjectId object = 0;
    std::uint32_t thread_serial = 0;
    std::int32_t frame = 0;
    bool thread = false;  // ROOT THREAD OBJECT
};

// A field as the dump holds it: its name, type and raw bits (an id for a reference).
struct FieldValue {
    std::string_view name;
    std::uint8_t type = 0;  // BasicType
    std::uint64_t bits = 0;
};

struct DumpValues {
    bool available = false;
    std::string unavailable;  // why not: "PHD records hold no field values"
    // The three tables with a row per String or array are columns (graph/column.h): past the
    // memory budget they go to files with the graph's.
    graph::Column<StringObject> strings;  // sorted by address
    graph::Column<ArrayObject> arrays;    // primitive arrays, sorted by address
    std::uint64_t split_arrays = 0;     // arrays whose record a segment boundary cuts: not compared
    // JDK 9+: java.lang.StringUTF16.HI_BYTE_SHIFT, the byte order of UTF-16 byte[] values
    // (0: little-endian, as on x86; 8: big-endian). char[] elements are always big-endian.
    bool utf16_big_endian = false;
    graph::Column<ArrayLength> object_arrays;  // every object array's length, sorted by address
    std::vector<ObjectRecordCopy> records;   // the objects asked for, sorted by address
    // The objects asked to be located whose record is contiguous in the file (one a segment
    // boundary cuts is left out), sorted by address.
    std::vector<RecordSpan> located;
    std::vector<ThreadRoot> thread_roots;    // in file order (their stack traces: source->stack_traces)
    std::shared_ptr<const DumpSource> source;  // keeps the file mapped for element reads
    std::shared_ptr<const ClassLayouts> layouts;  // of source->classes
    std::unordered_map<ObjectId, std::string> class_names;  // by class id
    // Chunks of the heap dump the pass read, of all its chunks (the --timings note).
    std::uint64_t chunks_read = 0, chunks = 0;

    // The element bytes of `a` (empty when split).
    Bytes elements(const ArrayObject& a) const;
    const ArrayObject* array(ObjectId address) const;
    // The same, searched from `hint` outwards (then set to where the search ended): a String's
    // value mostly lies just past it, so Strings taken in address order find theirs in a few
    // steps where a binary search over every array misses the cache at each of its last steps.
    const ArrayObject* array_near(ObjectId address, std::size_t& hint) const;
    const StringObject* string(ObjectId address) const;
    const ObjectRecordCopy* record(ObjectId address) const;
    std::uint32_t id_size() const;
    // What String `s` with value array `a` holds: its encoding and the bytes of `a`'s elements
    // it uses (all, or a JDK 6 slice); nullopt when the slice lies outside the array.
    struct StringSpan {
        JavaChars chars = JavaChars::latin1;
        std::uint64_t from = 0, bytes = 0;
    };
    std::optional<StringSpan> string_span(const StringObject& s, const ArrayObject& a) const;
    // A String's text (or a char[]'s), as UTF-8, at most `max_chars` characters; nullopt when
    // `address` is neither or its array was not read.
    std::optional<std::string> text(ObjectId address, std::size_t max_chars, bool* cut = nullptr) const;
    // An instance copy's fields: its own class's first, then each super class's, as dumped.
    std::vector<FieldValue> fields(const ObjectRecordCopy& r) const;
    // The statics of the class with this class id (its class object's address).
    std::vector<FieldValue> statics(ObjectId class_id) const;
    // The static `name` of the first class dump named `of_class` (file order), or nullopt.
    std::optional<std::uint64_t> static_field(std::string_view of_class, std::string_view name) const;
    // The field `name` of an instance copy (the first, from its own class up), or nullopt.
    std::optional<std::uint64_t> field(const ObjectRecordCopy& r, std::string_view name) const;
    // Element i of an object array copy (i < copied elements).
    ObjectId element(const ObjectRecordCopy& r, std::uint32_t i) const;
    // The name of the class with this class id (the dump's LOAD CLASS name), or "".
    std::string_view class_name(ObjectId class_id) const;
};

// What the value pass reads beside strings and primitive arrays: the records of `addresses`
// (sorted, distinct), and of every instance of `classes` (by name, and their subclasses).
// `locate` (sorted, distinct): instances and object arrays whose record's place in the file
// is wanted (the sources of the reported paths' edges).
struct ValueRequest {
    std::vector<ObjectId> addresses;
    std::vector<std::string> classes;
    std::vector<ObjectId> locate;
};

// The classes whose every instance's record the analyses ask for (the threads').
std::vector<std::string> thread_classes();

// What the value pass reads from one chunk.
struct ValuePart {
    std::vector<StringObject> strings;
    std::vector<ArrayObject> arrays;
    std::vector<ArrayLength> object_arrays;
    std::vector<ObjectRecordCopy> records;
    std::vector<ThreadRoot> thread_roots;
    std::vector<RecordSpan> located;
    std::uint64_t split = 0;
};

// What the value pass knows before any analysis, collected by the decode chunk by chunk
// (LoadOptions::values), so that it does not read the whole dump again: the String, array
// and object-array tables, the thread roots and the records of every instance of
// thread_classes(). The later pass then reads only the chunks whose addresses can hold
// what the analyses name (ValueRequest::addresses, locate). The tables wait in spill
// files (graph/column.h): they are not in memory through the graph stages.
struct LoadValues {
    // A chunk's lowest and highest object address (none: no object).
    struct Addresses {
        ObjectId min = 0, max = 0;
        bool any = false;
    };
    graph::SpilledRows<StringObject> strings;
    graph::SpilledRows<ArrayObject> arrays;
    graph::SpilledRows<ArrayLength> object_arrays;
    std::vector<ObjectRecordCopy> records;
    std::vector<ThreadRoot> thread_roots;
    std::uint64_t split_arrays = 0;
    std::vector<std::string> classes = thread_classes();  // whose records were kept
    std::vector<Addresses> chunks;  // by chunk, as DumpSource::chunks
    bool taken = false;             // read_values has used them (a second call reads the dump)
    // The tables read back from the spill files and sorted by address, the records and the
    // thread roots moved in: what prepare() makes, on whichever thread is free before the
    // value pass needs them (analysis: beside the suspects).
    std::optional<DumpValues> ready;

    void add(ValuePart& part);
    void prepare();
};

// LoadValues::prepare on `dump`'s; false when the decode collected none or they are used.
bool prepare_values(const LoadedDump& dump);

// The decode's reader of a chunk's values (HPROF), for the class dumps known when the chunk
// was cut: a chunk holding an instance whose class is not yet complete is decoded again
// at the end, with the final classes. `class_name(c)` names class dump c in Java form,
// `field_name(id)` a field's name string.
class ValueCollector {
public:
    ValueCollector(std::uint32_t id_size, const std::vector<ClassDump>& classes, const ClassLayouts& layouts,
                   const std::function<std::string(std::uint32_t)>& class_name,
                   const std::function<std::string(ObjectId)>& field_name);
    ~ValueCollector();
    ValuePart read(const HeapChunk& chunk) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Reads the values of `dump`: from what the decode collected (LoadedDump::values) and the
// chunks that can hold the records asked for, else in one pass over its heap dump.
// `progress` draws the pass.
DumpValues read_values(const LoadedDump& dump, const ValueRequest& request = {},
                       const std::function<void(const ProgressEvent&)>& progress = {});

// Hash of element bytes, as ArrayObject::hash.
ContentHash content_hash(Bytes bytes);

}  // namespace heapgraph
