// One parallel pass over the heap dump's sub-records for the values the content analyses
// read (pipeline/values.h), through the loaders' ordered flow. The chunker walks record
// headers in order (it joins records a segment boundary splits); the parts are joined in
// chunk order, then sorted by address, so the result is the same for any thread count.
#include "values.h"

#include <libdeflate.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <string_view>

#include "byte_reader.h"
#include "edge_names.h"
#include "mapped_file.h"
#include "ordered_flow.h"

namespace heapgraph {

namespace {

struct FieldSlot {
    std::uint64_t offset = 0;  // within an instance's field bytes
    std::uint8_t type = 0;     // BasicType
};

// A String class of the dump and where its fields lie.
struct StringClass {
    ObjectId class_id = 0;
    std::uint64_t field_bytes = 0;
    FieldSlot value;
    std::optional<FieldSlot> coder, offset, count;
};

// Field `name` of an instance of class dump `c`: own fields first, then the super class's
// (the order of an instance dump's field bytes).
std::optional<FieldSlot> find_field(const DumpSource& source, const ClassLayouts& layouts, std::uint32_t c,
                                    std::string_view name) {
    const std::uint64_t total = layouts[c].data_bytes;
    for (std::uint32_t level = c; level != ClassLayout::kNone && level < source.classes.size();
         level = layouts[level].super) {
        std::uint64_t at = total - layouts[level].data_bytes;
        for (const FieldDecl& f : source.classes[level].fields) {
            auto text = source.field_names.find(f.name_id);
            if (text != source.field_names.end() && text->second == name) return FieldSlot{at, f.type};
            at += basic_type_size(f.type, source.id_size);
        }
    }
    return std::nullopt;
}

std::vector<StringClass> string_classes(const LoadedDump& dump, const ClassLayouts& layouts) {
    const DumpSource& source = *dump.source;
    std::vector<StringClass> out;
    for (std::uint32_t c = 0; c < source.classes.size() && c < dump.graph.classes.size(); ++c) {
        if (dump.graph.classes[c].name != "java.lang.String" || !layouts[c].complete) continue;
        auto value = find_field(source, layouts, c, "value");
        if (!value || value->type != static_cast<std::uint8_t>(BasicType::object)) continue;
        auto int_field = [&](std::string_view name) {
            auto f = find_field(source, layouts, c, name);
            return f && f->type == static_cast<std::uint8_t>(BasicType::int_) ? f : std::nullopt;
        };
        auto coder = find_field(source, layouts, c, "coder");
        if (coder && coder->type != static_cast<std::uint8_t>(BasicType::byte)) coder.reset();
        out.push_back({source.classes[c].class_id, layouts[c].data_bytes, *value, coder, int_field("offset"),
                       int_field("count")});
    }
    return out;
}

// java.lang.StringUTF16.HI_BYTE_SHIFT: 8 on a big-endian JVM.
bool utf16_big_endian(const LoadedDump& dump) {
    const DumpSource& source = *dump.source;
    for (std::uint32_t c = 0; c < source.classes.size() && c < dump.graph.classes.size(); ++c) {
        if (dump.graph.classes[c].name != "java.lang.StringUTF16") continue;
        for (const StaticField& f : source.classes[c].statics) {
            auto text = source.field_names.find(f.name_id);
            if (text != source.field_names.end() && text->second == "HI_BYTE_SHIFT") return f.value == 8;
        }
    }
    return false;
}

struct Part {
    std::vector<StringObject> strings;
    std::vector<ArrayObject> arrays;
    std::uint64_t split = 0;
};

class ChunkReader {
public:
    ChunkReader(const DumpSource& source, const std::vector<StringClass>& strings)
        : source_(source), id_(source.id_size), strings_(strings) {}

    Part read(const HeapChunk& chunk) const {
        Part part;
        for_each_sub_record(chunk.bytes, id_, [&](std::uint64_t pos, std::uint64_t size) {
            if (chunk.bytes[pos] == HprofSubTag::instance_dump) read_instance(chunk.bytes, pos, part);
            else if (chunk.bytes[pos] == HprofSubTag::primitive_array_dump) read_array(chunk, pos, size, part);
            return true;
        });
        return part;
    }

private:
    void read_instance(Bytes bytes, std::uint64_t pos, Part& part) const {
        auto instance = read_instance_header(bytes, pos, id_);
        if (!instance) return;
        for (const StringClass& c : strings_) {
            if (c.class_id != instance->class_id) continue;
            if (instance->field_bytes < c.field_bytes) return;
            auto field = [&](const FieldSlot& f, std::uint32_t width) {
                return ByteReader(bytes, instance->fields_offset + f.offset).u(width);
            };
            StringObject s{instance->id, field(c.value, id_)};
            if (c.coder) s.coder = static_cast<std::int8_t>(field(*c.coder, 1));
            if (c.offset) s.offset = static_cast<std::int32_t>(field(*c.offset, 4));
            if (c.count) s.count = static_cast<std::int32_t>(field(*c.count, 4));
            part.strings.push_back(s);
            return;
        }
    }

    // PRIMITIVE ARRAY DUMP: tag, id, stack serial (u4), length (u4), element type (u1), elements.
    void read_array(const HeapChunk& chunk, std::uint64_t pos, std::uint64_t size, Part& part) const {
        ByteReader in(chunk.bytes, pos + 1);
        ArrayObject a;
        a.address = in.u(id_);
        in.skip(4);
        a.length = in.u4();
        a.type = in.u1();
        const std::uint64_t data = in.pos(), data_bytes = size - (data - pos);
        a.hash = content_hash(chunk.bytes.subspan(data, data_bytes));
        const std::uint64_t first = chunk.file_offset(data);
        // A jump in file offsets inside the record: a segment boundary (and its header) cuts it.
        if (data_bytes == 0 || chunk.file_offset(data + data_bytes - 1) - first == data_bytes - 1) a.data_offset = first;
        else ++part.split;
        part.arrays.push_back(a);
    }

    const DumpSource& source_;
    std::uint32_t id_;
    const std::vector<StringClass>& strings_;
};

template <typename Record>
void sort_by_address(std::vector<Record>& records) {
    tbb::parallel_sort(records.begin(), records.end(),
                       [](const Record& a, const Record& b) { return a.address < b.address; });
}

}  // namespace

std::uint64_t content_hash(Bytes bytes) {
    const std::uint32_t crc = libdeflate_crc32(0, bytes.data(), bytes.size());
    const std::uint32_t adler = libdeflate_adler32(1, bytes.data(), bytes.size());
    return std::uint64_t{crc} << 32 | adler;
}

Bytes DumpValues::elements(const ArrayObject& a) const {
    if (!source || a.data_offset == ArrayObject::kSplit) return {};
    const std::uint64_t bytes = std::uint64_t{a.length} * basic_type_size(a.type, source->id_size);
    if (a.data_offset > source->file.size() || bytes > source->file.size() - a.data_offset) return {};
    return source->file.subspan(a.data_offset, bytes);
}

DumpValues read_values(const LoadedDump& dump, const std::function<void(const ProgressEvent&)>& progress) {
    DumpValues values;
    if (!dump.source) {
        values.unavailable = dump.info.format + " records hold no field values or array contents";
        return values;
    }
    const DumpSource& source = *dump.source;
    values.available = true;
    values.source = dump.source;
    const ClassLayouts layouts(source.classes, source.id_size);
    const std::vector<StringClass> strings = string_classes(dump, layouts);
    values.utf16_big_endian = utf16_big_endian(dump);
    const ChunkReader reader(source, strings);

    // The loaders' ordered flow (pipeline/ordered_flow.h): chunks cut in order, read side by
    // side, their parts joined in chunk order.
    HeapChunker chunker(source.file, source.segments, source.id_size, 16u << 20);
    std::uint64_t done = 0;
    run_ordered_flow<HeapChunk, Part>(
        [&]() -> std::optional<HeapChunk> {
            auto next = chunker.next();
            auto* chunk = std::get_if<std::optional<HeapChunk>>(&next);
            return chunk ? std::move(*chunk) : std::nullopt;  // an error: a dump cut (--allow-truncated)
        },
        [&](const HeapChunk& chunk) {
            Part part = reader.read(chunk);
            if (source.release_pages && chunk.owned.empty()) release_pages(chunk.bytes);
            return part;
        },
        [&](const HeapChunk& chunk, const Part& part) {
            values.strings.insert(values.strings.end(), part.strings.begin(), part.strings.end());
            values.arrays.insert(values.arrays.end(), part.arrays.begin(), part.arrays.end());
            values.split_arrays += part.split;
            done += chunk.bytes.size();
            if (progress) progress({"values", done, chunker.total_bytes(), "B"});
        },
        2 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()));
    if (source.mapping) source.mapping->check_intact();  // the file shrank since it was loaded?
    sort_by_address(values.strings);
    sort_by_address(values.arrays);
    return values;
}

}  // namespace heapgraph
