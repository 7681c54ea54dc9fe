// HPROF heap dump sub-records (spec: hprof-binary-format.txt, HEAP DUMP; Android 1.0.3
// adds 0x89-0x90 roots, 0xC3 PRIMITIVE ARRAY NODATA and 0xFE HEAP DUMP INFO).
//
// Two passes, as the layouts demand: read_class_dumps() collects class dumps (pass 1); then
// decode_heap_chunk() reads objects, references and roots through the layouts (pass 2).
// sub_record_size() lets the pipeline cut heap dumps into chunks of whole sub-records.
#include "byte_reader.h"
#include "formats.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace heapgraph {

namespace {

// Fixed sizes of the root and Android sub-records, in ids plus extra bytes.
struct FixedLayout {
    std::uint8_t ids = 0;
    std::uint8_t extra = 0;
    RootKind root{};
    bool is_root = false;
};

bool fixed_layout(std::uint8_t tag, FixedLayout& out) {
    switch (tag) {
        case HprofSubTag::root_unknown: out = {1, 0, RootKind::unknown, true}; return true;
        case HprofSubTag::root_jni_global: out = {2, 0, RootKind::jni_global, true}; return true;
        case HprofSubTag::root_jni_local: out = {1, 8, RootKind::jni_local, true}; return true;
        case HprofSubTag::root_java_frame: out = {1, 8, RootKind::java_frame, true}; return true;
        case HprofSubTag::root_native_stack: out = {1, 4, RootKind::native_stack, true}; return true;
        case HprofSubTag::root_sticky_class: out = {1, 0, RootKind::sticky_class, true}; return true;
        case HprofSubTag::root_thread_block: out = {1, 4, RootKind::thread_block, true}; return true;
        case HprofSubTag::root_monitor_used: out = {1, 0, RootKind::monitor_used, true}; return true;
        case HprofSubTag::root_thread_object: out = {1, 8, RootKind::thread_object, true}; return true;
        case HprofSubTag::root_interned_string: out = {1, 0, RootKind::interned_string, true}; return true;
        case HprofSubTag::root_finalizing: out = {1, 0, RootKind::finalizing, true}; return true;
        case HprofSubTag::root_debugger: out = {1, 0, RootKind::debugger, true}; return true;
        case HprofSubTag::root_reference_cleanup: out = {1, 0, RootKind::reference_cleanup, true}; return true;
        case HprofSubTag::root_vm_internal: out = {1, 0, RootKind::vm_internal, true}; return true;
        case HprofSubTag::root_jni_monitor: out = {1, 8, RootKind::jni_monitor, true}; return true;
        case HprofSubTag::root_unreachable: out = {1, 0, RootKind::unreachable, true}; return true;
        case HprofSubTag::heap_dump_info: out = {1, 4, RootKind::unknown, false}; return true;   // heap dump info
        case HprofSubTag::primitive_array_nodata: out = {1, 9, RootKind::unknown, false}; return true;   // prim array nodata
        default: return false;
    }
}

DecodeError sub_error(const HeapChunk* chunk, std::uint64_t pos, std::uint8_t tag,
                      std::string message) {
    std::uint64_t offset = chunk ? chunk->file_offset(pos) : pos;
    return DecodeError{offset, hprof_sub_tag_name(tag), std::move(message)};
}

using SizeResult = std::variant<std::uint64_t, DecodeError>;

// Skips `count` entries of a key (`key_bytes`), a type byte and, when `with_value`, a value
// of that type. nullopt when the bytes end first; an error for a type that does not exist.
std::optional<SizeResult> skip_typed_entries(ByteReader& in, std::uint32_t count,
                                             std::uint32_t key_bytes, bool with_value,
                                             std::uint32_t id, const char* what) {
    for (std::uint32_t i = 0; i < count; ++i) {
        if (!in.has(key_bytes + 1)) return std::nullopt;
        in.skip(key_bytes);
        std::uint8_t type = in.u1();
        std::uint32_t size = basic_type_size(type, id);
        if (size == 0)
            return SizeResult{sub_error(nullptr, in.pos() - 1, HprofSubTag::class_dump,
                                        std::string(what) + " has invalid type " + std::to_string(type))};
        if (with_value) in.skip(size);
    }
    return SizeResult{std::uint64_t{1}};
}

// Walks a class dump's variable parts: constant pool, statics, instance fields.
// Returns 0 when the bytes end first.
SizeResult class_dump_size(Bytes bytes, std::uint64_t pos, std::uint32_t id) {
    ByteReader in(bytes, pos + 1);
    in.skip(7 * id + 8);
    struct Part {
        std::uint32_t key_bytes;
        bool with_value;
        const char* what;
    };
    for (Part part : {Part{2, true, "constant pool entry"}, Part{id, true, "static field"},
                      Part{id, false, "instance field"}}) {
        if (!in.has(2)) return std::uint64_t{0};
        auto skipped = skip_typed_entries(in, in.u2(), part.key_bytes, part.with_value, id, part.what);
        if (!skipped) return std::uint64_t{0};
        if (std::holds_alternative<DecodeError>(*skipped)) return *skipped;
    }
    std::uint64_t size = in.pos() - pos;
    return pos + size <= bytes.size() ? size : std::uint64_t{0};
}

// Size of an array or instance sub-record from its header, or 0 when the header is cut.
SizeResult counted_size(Bytes bytes, std::uint64_t pos, std::uint8_t tag, std::uint32_t id) {
    ByteReader in(bytes, pos + 1);
    if (tag == HprofSubTag::instance_dump) {
        if (!in.has(2 * id + 8)) return std::uint64_t{0};
        in.skip(2 * id + 4);
        return 1 + 2 * id + 8 + std::uint64_t{in.u4()};
    }
    if (!in.has(id + 8 + (tag == HprofSubTag::object_array_dump ? id : 1))) return std::uint64_t{0};
    in.skip(id + 4);
    std::uint64_t length = in.u4();
    if (tag == HprofSubTag::object_array_dump) return 1 + 2 * id + 8 + length * id;
    std::uint8_t type = in.u1();
    std::uint32_t size = basic_type_size(type, id);
    if (size == 0 || type == 2)
        return sub_error(nullptr, in.pos() - 1, tag, "has invalid element type " + std::to_string(type));
    return 1 + id + 9 + length * size;
}

}  // namespace

std::string hprof_sub_tag_name(std::uint8_t tag) {
    switch (tag) {
        case HprofSubTag::root_unknown: return "ROOT_UNKNOWN";
        case HprofSubTag::root_jni_global: return "ROOT_JNI_GLOBAL";
        case HprofSubTag::root_jni_local: return "ROOT_JNI_LOCAL";
        case HprofSubTag::root_java_frame: return "ROOT_JAVA_FRAME";
        case HprofSubTag::root_native_stack: return "ROOT_NATIVE_STACK";
        case HprofSubTag::root_sticky_class: return "ROOT_STICKY_CLASS";
        case HprofSubTag::root_thread_block: return "ROOT_THREAD_BLOCK";
        case HprofSubTag::root_monitor_used: return "ROOT_MONITOR_USED";
        case HprofSubTag::root_thread_object: return "ROOT_THREAD_OBJECT";
        case HprofSubTag::class_dump: return "CLASS_DUMP";
        case HprofSubTag::instance_dump: return "INSTANCE_DUMP";
        case HprofSubTag::object_array_dump: return "OBJECT_ARRAY_DUMP";
        case HprofSubTag::primitive_array_dump: return "PRIMITIVE_ARRAY_DUMP";
        case HprofSubTag::root_interned_string: return "ROOT_INTERNED_STRING";
        case HprofSubTag::root_finalizing: return "ROOT_FINALIZING";
        case HprofSubTag::root_debugger: return "ROOT_DEBUGGER";
        case HprofSubTag::root_reference_cleanup: return "ROOT_REFERENCE_CLEANUP";
        case HprofSubTag::root_vm_internal: return "ROOT_VM_INTERNAL";
        case HprofSubTag::root_jni_monitor: return "ROOT_JNI_MONITOR";
        case HprofSubTag::root_unreachable: return "ROOT_UNREACHABLE";
        case HprofSubTag::primitive_array_nodata: return "PRIMITIVE_ARRAY_NODATA";
        case HprofSubTag::heap_dump_info: return "HEAP_DUMP_INFO";
    }
    return unknown_tag_name("sub-record tag", tag);
}

std::uint64_t HeapChunk::file_offset(std::uint64_t chunk_pos) const {
    auto after = std::upper_bound(pieces.begin(), pieces.end(), chunk_pos,
                                  [](std::uint64_t p, const Piece& piece) { return p < piece.chunk_pos; });
    if (after == pieces.begin()) return chunk_pos;
    --after;
    return after->file_offset + (chunk_pos - after->chunk_pos);
}

std::variant<std::uint64_t, DecodeError> sub_record_size_by_tag(Bytes bytes, std::uint64_t pos,
                                                                std::uint32_t id_size) {
    std::uint8_t tag = bytes[pos];
    FixedLayout fixed;
    if (fixed_layout(tag, fixed)) {
        std::uint64_t size = 1 + fixed.ids * id_size + fixed.extra;
        return pos + size <= bytes.size() ? size : 0;
    }
    SizeResult size;
    switch (tag) {
        case HprofSubTag::class_dump: size = class_dump_size(bytes, pos, id_size); break;
        case HprofSubTag::instance_dump: case HprofSubTag::object_array_dump: case HprofSubTag::primitive_array_dump: size = counted_size(bytes, pos, tag, id_size); break;
        default: return DecodeError{pos, hprof_sub_tag_name(tag), "is not a known heap dump sub-record"};
    }
    // Positions in errors are chunk-relative here; walk_chunk() maps them to file offsets.
    if (auto* value = std::get_if<std::uint64_t>(&size); value && pos + *value > bytes.size())
        return std::uint64_t{0};
    return size;
}

// ---- pass 1: class dumps -------------------------------------------------------------------

namespace {

ClassDump read_class_dump(ByteReader& in, std::uint32_t id) {
    ClassDump dump;
    dump.class_id = in.u(id);
    in.skip(4);  // stack trace serial
    dump.super_id = in.u(id);
    dump.loader_id = in.u(id);
    dump.signers_id = in.u(id);
    dump.protection_domain_id = in.u(id);
    in.skip(2 * id);  // reserved
    dump.instance_size = in.u4();
    std::uint32_t pool = in.u2();
    for (std::uint32_t i = 0; i < pool; ++i) {
        in.skip(2);
        in.skip(basic_type_size(in.u1(), id));
    }
    std::uint32_t statics = in.u2();
    dump.statics.resize(statics);
    for (auto& field : dump.statics) {
        field.name_id = in.u(id);
        field.type = in.u1();
        field.value = in.u(basic_type_size(field.type, id));
    }
    std::uint32_t fields = in.u2();
    dump.fields.resize(fields);
    for (auto& field : dump.fields) {
        field.name_id = in.u(id);
        field.type = in.u1();
    }
    return dump;
}

// Walks every sub-record of a chunk, handing each (tag, position, size) to `visit`.
template <typename Visit>
std::variant<std::monostate, DecodeError> walk_chunk(const HeapChunk& chunk, std::uint32_t id,
                                                     Visit&& visit) {
    std::uint64_t pos = 0;
    while (pos < chunk.bytes.size()) {
        auto size = sub_record_size(chunk.bytes, pos, id);
        if (auto* error = std::get_if<DecodeError>(&size)) {
            error->offset = chunk.file_offset(error->offset);
            return std::move(*error);
        }
        std::uint64_t value = std::get<std::uint64_t>(size);
        if (value == 0)
            return sub_error(&chunk, pos, chunk.bytes[pos],
                             "runs past the end of the heap dump at " +
                                 hex_offset(chunk.file_offset(chunk.bytes.size())));
        if (auto error = visit(chunk.bytes[pos], pos, value)) return std::move(*error);
        pos += value;
    }
    return std::monostate{};
}

}  // namespace

std::optional<InstanceHeader> read_instance_header(Bytes bytes, std::uint64_t pos, std::uint32_t id_size) {
    ByteReader in(bytes, pos);
    if (!in.has(1 + 2 * id_size + 8) || in.u1() != HprofSubTag::instance_dump) return std::nullopt;
    InstanceHeader header;
    header.id = in.u(id_size);
    in.skip(4);  // stack trace serial
    header.class_id = in.u(id_size);
    header.field_bytes = in.u4();
    header.fields_offset = in.pos();
    return header;
}

ClassDump read_class_dump_at(Bytes bytes, std::uint64_t pos, std::uint32_t id_size) {
    ByteReader in(bytes, pos + 1);
    return read_class_dump(in, id_size);
}

std::variant<std::vector<ClassDump>, DecodeError> read_class_dumps(const HeapChunk& chunk,
                                                                   std::uint32_t id_size) {
    std::vector<ClassDump> classes;
    auto walked = walk_chunk(chunk, id_size, [&](std::uint8_t tag, std::uint64_t pos, std::uint64_t) {
        if (tag == HprofSubTag::class_dump) {
            ByteReader in(chunk.bytes, pos + 1);
            classes.push_back(read_class_dump(in, id_size));
            classes.back().file_offset = chunk.file_offset(pos);
        }
        return std::optional<DecodeError>{};
    });
    if (auto* error = std::get_if<DecodeError>(&walked)) return std::move(*error);
    return classes;
}

// ---- pass 2: objects, references, roots --------------------------------------------------

namespace {

class ChunkDecoder {
public:
    ChunkDecoder(const HeapChunk& chunk, const HprofContext& context, HeapRecords& out)
        : out(out), chunk_(chunk), context_(context), id_(context.id_size) {}

    std::optional<DecodeError> operator()(std::uint8_t tag, std::uint64_t pos, std::uint64_t size) {
        if (out.deferred_on) return std::nullopt;  // the chunk will be decoded again
        ++out.counts[tag];
        ByteReader in(chunk_.bytes, pos + 1);
        switch (tag) {
            case HprofSubTag::class_dump: return std::nullopt;  // class objects come from pass 1
            case HprofSubTag::instance_dump: return read_instance_dump(in, pos, size);
            case HprofSubTag::object_array_dump: return read_object_array(in);
            case HprofSubTag::primitive_array_dump: return read_primitive_array(in, pos, true);
            case HprofSubTag::primitive_array_nodata: return read_primitive_array(in, pos, false);
            case HprofSubTag::heap_dump_info: return std::nullopt;  // heap switch: recorded by count only
            default: return read_root(in, tag);
        }
    }

    HeapRecords& out;

private:
    std::optional<DecodeError> read_root(ByteReader& in, std::uint8_t tag) {
        FixedLayout fixed;
        fixed_layout(tag, fixed);
        RootRecord root{in.u(id_), fixed.root, 0};
        // Thread serials follow the object id in every root kind that has one.
        if (fixed.extra >= 4 && tag != HprofSubTag::root_jni_global) root.thread_serial = in.u4();
        out.roots.push_back(root);
        return std::nullopt;
    }

    std::optional<DecodeError> read_instance_dump(ByteReader& in, std::uint64_t pos,
                                                  std::uint64_t size) {
        ObjectRecord object;
        object.id = in.u(id_);
        in.skip(4);
        object.class_id = in.u(id_);
        std::uint32_t length = in.u4();
        object.position = pos;
        const std::uint32_t index = layouts_.get(object.class_id, [&](ObjectId id) { return context_.layouts.index_of(id); });
        const ClassLayout* layout = index == ClassLayout::kNone ? nullptr : &context_.layouts[index];
        bool usable = layout && layout->complete;
        if (!usable && context_.defer_unknown_classes) {
            out.deferred_on = object.class_id;
            return std::nullopt;
        }
        if (!usable && context_.tolerate_unknown_classes) return keep_unreadable(object, length);
        if (!layout)
            return sub_error(&chunk_, pos, HprofSubTag::instance_dump, "object " + hex_offset(object.id) + " has class " +
                                                     hex_offset(object.class_id) + " with no CLASS_DUMP");
        if (!layout->complete)
            return sub_error(&chunk_, pos, HprofSubTag::instance_dump,
                             "object " + hex_offset(object.id) + " has class " + hex_offset(object.class_id) +
                                 " whose super class chain has no CLASS_DUMP: its fields cannot be read");
        if (layout->data_bytes != length)
            return sub_error(&chunk_, pos, HprofSubTag::instance_dump,
                             "object " + hex_offset(object.id) + " has " + std::to_string(length) +
                                 " bytes of fields, its class layout needs " +
                                 std::to_string(layout->data_bytes));
        object.first_ref = out.refs.size();
        context_.layouts.read_references(index, in.here(), id_, [&](ObjectId ref, std::uint32_t, std::uint32_t) {
            if (ref) out.refs.push_back(ref);
        });
        object.ref_count = static_cast<std::uint32_t>(out.refs.size() - object.first_ref);
        (void)size;
        out.objects.push_back(object);
        return std::nullopt;
    }

    // Without its class's layout an instance's references cannot be told from its other
    // field values: it is kept with none, its field bytes standing in for its size.
    std::optional<DecodeError> keep_unreadable(ObjectRecord& object, std::uint32_t field_bytes) {
        object.length = field_bytes;
        object.first_ref = out.refs.size();
        out.unreadable_classes.push_back(object.class_id);
        out.objects.push_back(object);
        return std::nullopt;
    }

    // u4 lengths reach 2^32 - 1; Java arrays stop at 2^31 - 1 (and a NODATA array's claim
    // would otherwise size the heap with no bytes behind it).
    DecodeError too_long(std::uint64_t pos, std::uint8_t tag, std::uint32_t length) const {
        return sub_error(&chunk_, pos, tag, "array length " + std::to_string(length) + " exceeds Java's maximum " +
                                                std::to_string(kMaxJavaArrayLength));
    }

    std::optional<DecodeError> read_object_array(ByteReader& in) {
        ObjectRecord object;
        object.position = in.pos() - 1;
        object.kind = ObjectKind::object_array;
        object.id = in.u(id_);
        in.skip(4);
        std::uint32_t length = in.u4();
        if (length > kMaxJavaArrayLength) return too_long(object.position, HprofSubTag::object_array_dump, length);
        object.class_id = in.u(id_);
        object.first_ref = out.refs.size();
        for (std::uint32_t i = 0; i < length; ++i)
            if (ObjectId ref = in.u(id_)) out.refs.push_back(ref);
        object.ref_count = static_cast<std::uint32_t>(out.refs.size() - object.first_ref);
        object.length = length;
        out.objects.push_back(object);
        return std::nullopt;
    }

    std::optional<DecodeError> read_primitive_array(ByteReader& in, std::uint64_t pos, bool has_data) {
        ObjectRecord object;
        object.position = pos;
        object.kind = ObjectKind::primitive_array;
        object.id = in.u(id_);
        in.skip(4);
        std::uint32_t length = in.u4();
        if (length > kMaxJavaArrayLength) return too_long(pos, has_data ? HprofSubTag::primitive_array_dump : HprofSubTag::primitive_array_nodata, length);
        object.element_type = in.u1();
        std::uint32_t element_bytes = basic_type_size(object.element_type, id_);
        if (element_bytes == 0 || object.element_type == 2)
            return sub_error(&chunk_, pos, has_data ? HprofSubTag::primitive_array_dump : HprofSubTag::primitive_array_nodata,
                             "has invalid element type " + std::to_string(object.element_type));
        object.first_ref = out.refs.size();
        object.length = length;
        out.objects.push_back(object);
        return std::nullopt;
    }

    const HeapChunk& chunk_;
    const HprofContext& context_;
    std::uint32_t id_;
    RecentIds layouts_;  // layout indexes by class id
};

}  // namespace

std::variant<HeapRecords, DecodeError> decode_heap_chunk(const HeapChunk& chunk,
                                                         const HprofContext& context) {
    HeapRecords records;
    if (auto error = decode_heap_chunk_into(chunk, context, records)) return std::move(*error);
    return records;
}

std::optional<DecodeError> decode_heap_chunk_into(const HeapChunk& chunk, const HprofContext& context,
                                                  HeapRecords& out) {
    out.objects.clear();
    out.refs.clear();
    out.roots.clear();
    out.classes.clear();
    out.unreadable_classes.clear();
    std::fill(std::begin(out.counts), std::end(out.counts), 0);
    out.deferred_on = 0;
    ChunkDecoder decoder(chunk, context, out);
    auto walked = walk_chunk(chunk, context.id_size, std::ref(decoder));
    if (auto* error = std::get_if<DecodeError>(&walked)) return std::move(*error);
    return std::nullopt;
}

// ---- layouts -------------------------------------------------------------------------------

// Each class's chain is walked up only to the first class already built, so every class is
// visited a bounded number of times: building all layouts is linear however deep the
// hierarchy. No recursion: a chain can be as long as the dump has classes.
ClassLayouts::ClassLayouts(std::span<const ClassDump> classes, std::uint32_t id_size) {
    layouts_.resize(classes.size());
    supers_first_.reserve(classes.size());
    for (std::uint32_t i = 0; i < classes.size(); ++i) index_.emplace(classes[i].class_id, i);
    std::vector<std::uint8_t> state(classes.size(), 0);  // 0 new, 1 on the chain being walked, 2 built
    std::vector<std::uint32_t> chain;
    for (std::uint32_t i = 0; i < classes.size(); ++i) {
        if (state[i] == 2) continue;
        chain.clear();
        std::uint32_t top = i;
        for (;;) {  // up to java.lang.Object, a missing super class, a built one, or a loop
            state[top] = 1;
            chain.push_back(top);
            std::uint32_t super = classes[top].super_id ? index_of(classes[top].super_id) : ClassLayout::kNone;
            if (super == ClassLayout::kNone || state[super] != 0) break;
            top = super;
        }
        for (std::size_t k = chain.size(); k-- > 0;) {
            std::uint32_t c = chain[k];
            std::uint32_t super = classes[c].super_id ? index_of(classes[c].super_id) : ClassLayout::kNone;
            bool complete = classes[c].super_id == 0 || (super != ClassLayout::kNone && state[super] == 2 &&
                                                         layouts_[super].complete);
            if (super != ClassLayout::kNone && state[super] != 2) super = ClassLayout::kNone;  // a loop: cut it
            finish(classes[c], c, super, complete, id_size);
            state[c] = 2;
        }
    }
}

void ClassLayouts::finish(const ClassDump& dump, std::uint32_t index, std::uint32_t super, bool complete,
                          std::uint32_t id_size) {
    ClassLayout& layout = layouts_[index];
    std::uint32_t own_bytes = 0;
    for (const FieldDecl& field : dump.fields) {
        if (field.type == 2) {
            layout.ref_offsets.push_back(own_bytes);
            layout.ref_names.push_back(field.name_id);
            ++layout.own.references;
        } else {
            layout.own.primitive_bytes += basic_type_size(field.type, id_size);
        }
        own_bytes += basic_type_size(field.type, id_size);
    }
    layout.data_bytes = own_bytes;
    layout.references = layout.own.references;
    layout.complete = complete;
    layout.super = super;
    if (super != ClassLayout::kNone) {
        const ClassLayout& above = layouts_[super];
        layout.data_bytes += above.data_bytes;
        layout.references += above.references;
        layout.refs_above = above.own.references ? super : above.refs_above;
    }
    supers_first_.push_back(index);
}

std::uint32_t basic_type_size(std::uint8_t type, std::uint32_t id_size) {
    switch (type) {
        case 2: return id_size;
        case 4: case 8: return 1;
        case 5: case 9: return 2;
        case 6: case 10: return 4;
        case 7: case 11: return 8;
        default: return 0;
    }
}

std::string_view basic_type_java_name(BasicType type) {
    switch (type) {
        case BasicType::boolean: return "boolean";
        case BasicType::char_: return "char";
        case BasicType::float_: return "float";
        case BasicType::double_: return "double";
        case BasicType::byte: return "byte";
        case BasicType::short_: return "short";
        case BasicType::int_: return "int";
        case BasicType::long_: return "long";
        case BasicType::object: break;
    }
    return "java.lang.Object";
}

std::string_view root_kind_name(RootKind kind) {
    static constexpr std::string_view names[] = {
        "unknown", "jni_global", "jni_local", "java_frame", "native_stack", "sticky_class",
        "thread_block", "monitor_used", "thread_object", "interned_string", "finalizing",
        "debugger", "reference_cleanup", "vm_internal", "jni_monitor", "unreachable",
        "system_class"};
    return names[static_cast<std::size_t>(kind)];
}

}  // namespace heapgraph
