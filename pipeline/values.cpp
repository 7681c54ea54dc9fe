// One parallel pass over the heap dump's sub-records for the values the content analyses
// read (pipeline/values.h), through the loaders' ordered flow. The chunker walks record
// headers in order (it joins records a segment boundary splits); the parts are joined in
// chunk order, then sorted by address, so the result is the same for any thread count.
#include "values.h"

// Inline: most arrays are short, and a call into the library per array costs more than the hash.
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <string_view>

#include "byte_reader.h"
#include "edge_names.h"
#include "mapped_file.h"
#include "ordered_flow.h"
#include "search.h"

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

// The name a field's or static's string id stands for ("" when the dump has none).
std::string_view field_name(const DumpSource& source, ObjectId name_id) {
    auto text = source.field_names.find(name_id);
    return text == source.field_names.end() ? std::string_view() : std::string_view(text->second);
}

// Class dump c's Java name; a field name string's text. The value pass asks the graph and
// the dump's field names, the decode the dump's strings (LOAD CLASS names) as it goes.
using ClassNameOf = std::function<std::string(std::uint32_t)>;
using FieldNameOf = std::function<std::string(ObjectId)>;

// Calls visit(declaration, offset) for each field of an instance of class dump `c`, in the
// order of an instance dump's field bytes: its own fields first, then each super class's.
// Stops when visit returns false.
template <typename Visit>
void for_each_field(const std::vector<ClassDump>& classes, std::uint32_t id_size, const ClassLayouts& layouts,
                    std::uint32_t c, Visit&& visit) {
    std::uint64_t at = 0;
    for (std::uint32_t level = c, depth = 0; level != ClassLayout::kNone && level < classes.size() && depth < 256;
         level = layouts[level].super, ++depth)
        for (const FieldDecl& f : classes[level].fields) {
            if (!visit(f, at)) return;
            at += basic_type_size(f.type, id_size);
        }
}

template <typename Visit>
void for_each_field(const DumpSource& source, const ClassLayouts& layouts, std::uint32_t c, Visit&& visit) {
    for_each_field(source.classes, source.id_size, layouts, c, std::forward<Visit>(visit));
}

// The classes of a dump as far as the value pass needs them.
struct ClassesSeen {
    const std::vector<ClassDump>& classes;
    std::uint32_t id_size;
    const ClassLayouts& layouts;
    const ClassNameOf& class_name;
    const FieldNameOf& field_name;
};

// Field `name` of an instance of class dump `c`.
std::optional<FieldSlot> find_field(const ClassesSeen& seen, std::uint32_t c, std::string_view name) {
    std::optional<FieldSlot> found;
    for_each_field(seen.classes, seen.id_size, seen.layouts, c, [&](const FieldDecl& f, std::uint64_t at) {
        if (seen.field_name(f.name_id) == name) found = FieldSlot{at, f.type};
        return !found;
    });
    return found;
}

std::vector<StringClass> string_classes(const ClassesSeen& seen) {
    std::vector<StringClass> out;
    for (std::uint32_t c = 0; c < seen.classes.size(); ++c) {
        if (!seen.layouts[c].complete || seen.class_name(c) != "java.lang.String") continue;
        auto value = find_field(seen, c, "value");
        if (!value || value->type != static_cast<std::uint8_t>(BasicType::object)) continue;
        auto int_field = [&](std::string_view name) {
            auto f = find_field(seen, c, name);
            return f && f->type == static_cast<std::uint8_t>(BasicType::int_) ? f : std::nullopt;
        };
        auto coder = find_field(seen, c, "coder");
        if (coder && coder->type != static_cast<std::uint8_t>(BasicType::byte)) coder.reset();
        out.push_back({seen.classes[c].class_id, seen.layouts[c].data_bytes, *value, coder, int_field("offset"),
                       int_field("count")});
    }
    return out;
}

// The class ids of the classes named in `names` and of their subclasses (by class dump order,
// whose super chains the layouts link).
std::vector<ObjectId> requested_classes(const ClassesSeen& seen, const std::vector<std::string>& names) {
    std::vector<ObjectId> out;
    if (names.empty()) return out;
    std::vector<std::int8_t> named(seen.classes.size(), -1);  // -1: not yet asked
    auto is_named = [&](std::uint32_t c) {
        if (named[c] < 0) named[c] = std::find(names.begin(), names.end(), seen.class_name(c)) != names.end();
        return named[c] == 1;
    };
    for (std::uint32_t c = 0; c < seen.classes.size(); ++c) {
        std::uint32_t level = c;
        for (std::uint32_t depth = 0; level != ClassLayout::kNone && level < seen.classes.size() && depth < 256;
             level = seen.layouts[level].super, ++depth) {
            if (!is_named(level)) continue;
            out.push_back(seen.classes[c].class_id);
            break;
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Sorted addresses, with a bit filter in front: most records are not asked for, and one
// bit test turns them away without a search.
class AddressSet {
public:
    explicit AddressSet(std::vector<ObjectId> sorted) : sorted_(std::move(sorted)), bits_(sorted_.empty() ? 0 : kBits / 64) {
        for (ObjectId a : sorted_) bits_[slot(a) / 64] |= std::uint64_t{1} << (slot(a) % 64);
    }
    bool contains(ObjectId a) const {
        if (sorted_.empty() || !(bits_[slot(a) / 64] >> (slot(a) % 64) & 1)) return false;
        return std::binary_search(sorted_.begin(), sorted_.end(), a);
    }

private:
    static constexpr std::uint64_t kBits = 1u << 20;
    static std::uint64_t slot(ObjectId a) { return (a * 0x9E3779B97F4A7C15ull) >> 44; }
    std::vector<ObjectId> sorted_;
    std::vector<std::uint64_t> bits_;
};

// What a ChunkReader reads: everything (the one pass over a dump the decode did not collect
// values from, and the decode's, asked for no address), or the records asked for by address
// only (the pass after the decode's: the tables and the requested classes' records are the
// decode's already).
enum class Reading { all, addresses };

class ChunkReader {
public:
    ChunkReader(std::uint32_t id_size, const std::vector<StringClass>& strings, const AddressSet& wanted,
                const std::vector<ObjectId>& wanted_classes, const AddressSet& locate, Reading reading = Reading::all)
        : id_(id_size), strings_(strings), wanted_(wanted), wanted_classes_(wanted_classes), locate_(locate),
          tables_(reading != Reading::addresses) {}

    ValuePart read(const HeapChunk& chunk) const {
        ValuePart part;
        for_each_sub_record(chunk.bytes, id_, [&](std::uint64_t pos, std::uint64_t size) {
            switch (chunk.bytes[pos]) {
                case HprofSubTag::instance_dump: read_instance(chunk, pos, size, part); break;
                case HprofSubTag::primitive_array_dump:
                    if (tables_) read_array(chunk, pos, size, part);
                    break;
                case HprofSubTag::object_array_dump: read_object_array(chunk, pos, size, part); break;
                case HprofSubTag::root_thread_object:
                    if (tables_) read_thread_root(chunk.bytes, pos, true, part);
                    break;
                case HprofSubTag::root_java_frame:
                case HprofSubTag::root_jni_local:
                    if (tables_) read_thread_root(chunk.bytes, pos, false, part);
                    break;
                default: break;
            }
            return true;
        });
        return part;
    }

private:
    void read_instance(const HeapChunk& chunk, std::uint64_t pos, std::uint64_t size, ValuePart& part) const {
        const Bytes bytes = chunk.bytes;
        auto instance = read_instance_header(bytes, pos, id_);
        if (!instance) return;
        locate(chunk, pos, size, instance->id, part);
        // By address only, the classes' records are there already: each record is kept once.
        const bool of_class = std::binary_search(wanted_classes_.begin(), wanted_classes_.end(), instance->class_id);
        if (tables_ ? of_class || wanted_.contains(instance->id) : !of_class && wanted_.contains(instance->id)) {
            const std::uint8_t* fields = bytes.data() + instance->fields_offset;
            part.records.push_back({instance->id, instance->class_id, false, 0,
                                    std::vector<std::uint8_t>(fields, fields + instance->field_bytes)});
        }
        if (!tables_) return;
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
    void read_array(const HeapChunk& chunk, std::uint64_t pos, std::uint64_t size, ValuePart& part) const {
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

    // OBJECT ARRAY DUMP: tag, id, stack serial (u4), length (u4), array class id, elements.
    void read_object_array(const HeapChunk& chunk, std::uint64_t pos, std::uint64_t size, ValuePart& part) const {
        const Bytes bytes = chunk.bytes;
        ByteReader in(bytes, pos + 1);
        const ObjectId address = in.u(id_);
        locate(chunk, pos, size, address, part);
        in.skip(4);
        const std::uint32_t length = in.u4();
        if (tables_) part.object_arrays.push_back({address, length});
        if (!wanted_.contains(address)) return;
        const ObjectId class_id = in.u(id_);
        const std::uint64_t copied = std::uint64_t{std::min(length, ObjectRecordCopy::kMaxElements)} * id_;
        const std::uint8_t* elements = bytes.data() + in.pos();
        part.records.push_back({address, class_id, true, length, std::vector<std::uint8_t>(elements, elements + copied)});
    }

    // An instance or object array asked to be located: where its whole record lies, when no
    // segment boundary cuts it (its last byte is as far from its first in the file as here).
    void locate(const HeapChunk& chunk, std::uint64_t pos, std::uint64_t size, ObjectId address, ValuePart& part) const {
        if (!locate_.contains(address)) return;
        const std::uint64_t first = chunk.file_offset(pos);
        if (chunk.file_offset(pos + size - 1) - first == size - 1) part.located.push_back({address, first, size});
    }

    // ROOT THREAD OBJECT: id, thread serial, stack trace serial; ROOT JAVA FRAME and ROOT JNI
    // LOCAL: id, thread serial, frame number.
    void read_thread_root(Bytes bytes, std::uint64_t pos, bool thread, ValuePart& part) const {
        ByteReader in(bytes, pos + 1);
        ThreadRoot root;
        root.object = in.u(id_);
        root.thread_serial = in.u4();
        root.frame = static_cast<std::int32_t>(in.u4());
        root.thread = thread;
        part.thread_roots.push_back(root);
    }

    std::uint32_t id_;
    const std::vector<StringClass>& strings_;
    const AddressSet& wanted_;
    const std::vector<ObjectId>& wanted_classes_;
    const AddressSet& locate_;
    bool tables_;
};

template <typename Records>
void sort_by_address(Records& records) {
    using Record = std::remove_cvref_t<decltype(*records.begin())>;
    tbb::parallel_sort(records.begin(), records.end(),
                       [](const Record& a, const Record& b) { return a.address < b.address; });
}

}  // namespace

ContentHash content_hash(Bytes bytes) {
    const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
    return {h.low64, h.high64};
}

Bytes DumpValues::elements(const ArrayObject& a) const {
    if (!source || a.data_offset == ArrayObject::kSplit) return {};
    const std::uint64_t bytes = std::uint64_t{a.length} * basic_type_size(a.type, source->id_size);
    return bytes_at(source->file, a.data_offset, bytes);
}

namespace {

template <typename Records>
auto find_address(const Records& records, ObjectId address) -> decltype(&*records.begin()) {
    auto it = std::lower_bound(records.begin(), records.end(), address,
                               [](const auto& r, ObjectId a) { return r.address < a; });
    return it != records.end() && it->address == address ? &*it : nullptr;
}

}  // namespace

const ArrayObject* DumpValues::array(ObjectId address) const { return find_address(arrays, address); }

const ArrayObject* DumpValues::array_near(ObjectId address, std::size_t& hint) const {
    const std::span<const ArrayObject> sorted(arrays.data(), arrays.size());
    const std::size_t at = graph::lower_bound_near(sorted, address, hint,
                                                   [](const ArrayObject& a, ObjectId x) { return a.address < x; });
    return at < sorted.size() && sorted[at].address == address ? &sorted[at] : nullptr;
}
const StringObject* DumpValues::string(ObjectId address) const { return find_address(strings, address); }
const ObjectRecordCopy* DumpValues::record(ObjectId address) const { return find_address(records, address); }
std::uint32_t DumpValues::id_size() const { return source ? source->id_size : 8; }

std::string_view DumpValues::class_name(ObjectId class_id) const {
    auto it = class_names.find(class_id);
    return it == class_names.end() ? std::string_view() : std::string_view(it->second);
}

std::optional<DumpValues::StringSpan> DumpValues::string_span(const StringObject& s, const ArrayObject& a) const {
    const std::uint64_t width = basic_type_size(a.type, 4), whole = std::uint64_t{a.length} * width;
    StringSpan out{JavaChars::latin1, 0, whole};
    if (a.type == static_cast<std::uint8_t>(BasicType::char_)) out.chars = JavaChars::utf16_big_endian;
    else if (s.coder == 1) out.chars = utf16_big_endian ? JavaChars::utf16_big_endian : JavaChars::utf16_little_endian;
    if (s.offset >= 0 && s.count >= 0) {  // JDK 6: the String uses part of its char[]
        out.from = std::uint64_t(s.offset) * width, out.bytes = std::uint64_t(s.count) * width;
        if (out.from > whole || out.bytes > whole - out.from) return std::nullopt;
    }
    return out;
}

std::optional<std::string> DumpValues::text(ObjectId address, std::size_t max_chars, bool* cut) const {
    JavaChars chars = JavaChars::utf16_big_endian;
    Bytes bytes;
    if (const StringObject* s = string(address)) {
        const ArrayObject* a = array(s->value);
        auto span = a ? string_span(*s, *a) : std::nullopt;
        if (!span) return std::nullopt;
        bytes = elements(*a);
        bytes = span->from + span->bytes <= bytes.size() ? bytes.subspan(span->from, span->bytes) : Bytes{};
        chars = span->chars;
    } else if (const ArrayObject* a = array(address); a && a->type == static_cast<std::uint8_t>(BasicType::char_)) {
        bytes = elements(*a);
    } else {
        return std::nullopt;
    }
    return utf8_from_java_chars(bytes, chars, max_chars, cut);
}

std::vector<FieldValue> DumpValues::fields(const ObjectRecordCopy& r) const {
    std::vector<FieldValue> out;
    if (r.array || !source || !layouts) return out;
    const std::uint32_t c = layouts->index_of(r.class_id);
    if (c == ClassLayout::kNone || !(*layouts)[c].complete) return out;
    for_each_field(*source, *layouts, c, [&](const FieldDecl& f, std::uint64_t at) {
        const std::uint32_t width = basic_type_size(f.type, source->id_size);
        if (at + width > r.bytes.size()) return false;
        out.push_back({field_name(*source, f.name_id), f.type, ByteReader(Bytes(r.bytes), at).u(width)});
        return true;
    });
    return out;
}

std::vector<FieldValue> DumpValues::statics(ObjectId class_id) const {
    std::vector<FieldValue> out;
    if (!source || !layouts) return out;
    const std::uint32_t c = layouts->index_of(class_id);
    if (c == ClassLayout::kNone || c >= source->classes.size()) return out;
    for (const StaticField& f : source->classes[c].statics) out.push_back({field_name(*source, f.name_id), f.type, f.value});
    return out;
}

std::optional<std::uint64_t> DumpValues::static_field(std::string_view of_class, std::string_view name) const {
    if (!source) return std::nullopt;
    for (const ClassDump& c : source->classes) {  // file order: the first class of that name
        if (class_name(c.class_id) != of_class) continue;
        for (const StaticField& f : c.statics)
            if (field_name(*source, f.name_id) == name) return f.value;
    }
    return std::nullopt;
}

std::optional<std::uint64_t> DumpValues::field(const ObjectRecordCopy& r, std::string_view name) const {
    for (const FieldValue& f : fields(r))
        if (f.name == name) return f.bits;
    return std::nullopt;
}

ObjectId DumpValues::element(const ObjectRecordCopy& r, std::uint32_t i) const {
    const std::uint32_t id = id_size();
    if (std::uint64_t{i + 1} * id > r.bytes.size()) return 0;
    return ByteReader(Bytes(r.bytes), std::uint64_t{i} * id).u(id);
}

std::vector<std::string> thread_classes() { return {"java.lang.Thread", "java.lang.Thread$FieldHolder"}; }

namespace {

// A chunk's part added to what the decode collects (LoadValues) or the pass reads (DumpValues).
template <typename Tables>
void add_part(Tables& to, ValuePart& part) {
    to.strings.append(part.strings);
    to.arrays.append(part.arrays);
    to.object_arrays.append(part.object_arrays);
    for (ObjectRecordCopy& r : part.records) to.records.push_back(std::move(r));
    to.thread_roots.insert(to.thread_roots.end(), part.thread_roots.begin(), part.thread_roots.end());
    if constexpr (requires { to.located; })
        to.located.insert(to.located.end(), part.located.begin(), part.located.end());
    to.split_arrays += part.split;
}

}  // namespace

void LoadValues::add(ValuePart& part) { add_part(*this, part); }

struct ValueCollector::State {
    std::vector<StringClass> strings;
    std::vector<ObjectId> classes;
    AddressSet none{{}};
    ChunkReader reader;
    State(std::uint32_t id_size, const ClassesSeen& seen)
        : strings(string_classes(seen)), classes(requested_classes(seen, thread_classes())),
          reader(id_size, strings, none, classes, none) {}
};

ValueCollector::ValueCollector(std::uint32_t id_size, const std::vector<ClassDump>& classes, const ClassLayouts& layouts,
                               const std::function<std::string(std::uint32_t)>& class_name,
                               const std::function<std::string(ObjectId)>& field_name)
    : state_(std::make_unique<State>(id_size, ClassesSeen{classes, id_size, layouts, class_name, field_name})) {}

ValueCollector::~ValueCollector() = default;

ValuePart ValueCollector::read(const HeapChunk& chunk) const { return state_->reader.read(chunk); }

namespace {

// The chunks whose addresses can hold one of `sorted` (each chunk's lowest and highest
// object address); every chunk when the decode's figures do not match the chunks.
std::vector<ChunkCut> chunks_holding(const DumpSource& source, const std::vector<LoadValues::Addresses>& chunks,
                                     const std::vector<ObjectId>& sorted) {
    if (chunks.size() != source.chunks.size()) return source.chunks;
    std::vector<ChunkCut> out;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        if (!chunks[i].any) continue;
        auto at = std::lower_bound(sorted.begin(), sorted.end(), chunks[i].min);
        if (at != sorted.end() && *at <= chunks[i].max) out.push_back(source.chunks[i]);
    }
    return out;
}

// The addresses the pass after the decode's looks for, sorted and distinct.
std::vector<ObjectId> asked_addresses(const ValueRequest& request) {
    std::vector<ObjectId> out = request.addresses;
    out.insert(out.end(), request.locate.begin(), request.locate.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Reads `chunker`'s chunks with `reader` side by side, their parts added in chunk order.
void read_chunks(const DumpSource& source, HeapChunker& chunker, const ChunkReader& reader, std::uint64_t total,
                 DumpValues& values, const std::function<void(const ProgressEvent&)>& progress) {
    std::uint64_t done = 0;
    run_ordered_flow<HeapChunk, ValuePart>(
        [&]() -> std::optional<HeapChunk> {
            auto next = chunker.next();
            auto* chunk = std::get_if<std::optional<HeapChunk>>(&next);
            return chunk ? std::move(*chunk) : std::nullopt;  // an error: a dump cut (--allow-truncated)
        },
        [&](const HeapChunk& chunk) {
            ValuePart part = reader.read(chunk);
            if (source.release_pages && chunk.owned.empty()) release_pages(chunk.bytes);
            return part;
        },
        [&](const HeapChunk& chunk, ValuePart& part) {
            add_part(values, part);
            ++values.chunks_read;
            done += chunk.bytes.size();
            if (progress) progress({"values", std::min(done, total), total, "B"});
        },
        2 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()));
    if (source.mapping) source.mapping->check_intact();  // the file shrank since it was loaded?
}

// What the decode collected, prepared and taken into `values`; the rest of `load` goes.
void take_load_values(LoadValues& load, DumpValues& values) {
    load.prepare();
    DumpValues& ready = *load.ready;
    values.strings = std::move(ready.strings);
    values.arrays = std::move(ready.arrays);
    values.object_arrays = std::move(ready.object_arrays);
    values.records = std::move(ready.records);
    values.thread_roots = std::move(ready.thread_roots);
    values.split_arrays = ready.split_arrays;
    load = LoadValues();
    load.taken = true;
}

}  // namespace

void LoadValues::prepare() {
    if (ready || taken) return;
    DumpValues& v = ready.emplace();
    strings.append_to(v.strings);
    arrays.append_to(v.arrays);
    object_arrays.append_to(v.object_arrays);
    strings = {}, arrays = {}, object_arrays = {};  // the spill files go
    v.records = std::move(records);
    v.thread_roots = std::move(thread_roots);
    v.split_arrays = split_arrays;
    sort_by_address(v.strings);
    sort_by_address(v.arrays);
    sort_by_address(v.object_arrays);
}

bool prepare_values(const LoadedDump& dump) {
    if (!dump.values || dump.values->taken) return false;
    dump.values->prepare();
    return true;
}

DumpValues read_values(const LoadedDump& dump, const ValueRequest& request,
                       const std::function<void(const ProgressEvent&)>& progress) {
    DumpValues values;
    if (!dump.source) {
        values.unavailable = dump.info.format + " records hold no field values or array contents";
        return values;
    }
    const DumpSource& source = *dump.source;
    values.available = true;
    values.source = dump.source;
    auto layouts = std::make_shared<const ClassLayouts>(source.classes, source.id_size);
    values.layouts = layouts;
    for (std::uint32_t c = 0; c < source.classes.size() && c < dump.graph.classes.size(); ++c)
        values.class_names.emplace(source.classes[c].class_id, dump.graph.classes[c].name);
    const ClassNameOf class_name = [&](std::uint32_t c) {
        return c < dump.graph.classes.size() ? dump.graph.classes[c].name : std::string();
    };
    const FieldNameOf field_name_of = [&](ObjectId id) { return std::string(field_name(source, id)); };
    const ClassesSeen seen{source.classes, source.id_size, *layouts, class_name, field_name_of};
    const std::vector<StringClass> strings = string_classes(seen);
    // java.lang.StringUTF16.HI_BYTE_SHIFT: 8 on a big-endian JVM.
    values.utf16_big_endian = values.static_field("java.lang.StringUTF16", "HI_BYTE_SHIFT") == 8u;
    const AddressSet wanted(request.addresses);
    const std::vector<ObjectId> wanted_classes = requested_classes(seen, request.classes);
    const AddressSet locate(request.locate);
    // The loaders' ordered flow (pipeline/ordered_flow.h): chunks cut in order, read side by
    // side, their parts joined in chunk order.
    LoadValues* load = dump.values.get();
    const bool from_load = load && !load->taken && load->classes == request.classes;
    if (from_load) {
        const std::vector<LoadValues::Addresses> chunks = std::move(load->chunks);
        take_load_values(*load, values);  // sorted already
        std::vector<ChunkCut> plan = chunks_holding(source, chunks, asked_addresses(request));
        std::uint64_t total = 0;
        for (const ChunkCut& cut : plan) total += cut.length;
        values.chunks = source.chunks.size();
        HeapChunker chunker(source.file, source.segments, source.id_size, std::move(plan));
        read_chunks(source, chunker, ChunkReader(source.id_size, strings, wanted, wanted_classes, locate, Reading::addresses),
                    total, values, progress);
    } else {
        HeapChunker chunker = chunker_for(source, 16u << 20);
        read_chunks(source, chunker, ChunkReader(source.id_size, strings, wanted, wanted_classes, locate),
                    chunker.total_bytes(), values, progress);
        values.chunks = values.chunks_read;
    }
    if (!from_load) {
        sort_by_address(values.strings);
        sort_by_address(values.arrays);
        sort_by_address(values.object_arrays);
    }
    sort_by_address(values.records);
    sort_by_address(values.located);
    return values;
}

}  // namespace heapgraph
