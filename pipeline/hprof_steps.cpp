// The HPROF steps of the heap builder:
//   - names: a class's name is its LOAD CLASS record's string, in Java form; a class the dump
//     gives no usable name is told apart by its id, and each way of having none is counted;
//   - sizes: HPROF does not say how the VM laid objects out (compressed oops and class
//     pointers, field packing). Objects lie next to each other in the heap, so the model
//     whose sizes match the most address gaps exactly is the VM's (docs/size-model.md);
//   - field names and weak edges (docs/suspects.md). Blocks keep no null fields, so the
//     referent's position in a row is unknown: each java.lang.ref.Reference instance's
//     `referent` is read back from its record in the file.
#include "hprof_steps.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <atomic>
#include <numeric>

namespace heapgraph {

std::string hprof_string(const std::unordered_map<ObjectId, std::string_view>& strings, ObjectId id) {
    auto text = strings.find(id);
    return text == strings.end() ? std::string() : utf8_from_modified(text->second);
}

std::string hprof_class_name(const std::unordered_map<ObjectId, std::string_view>& strings,
                             const std::unordered_map<ObjectId, ClassNameRef>& class_names, ObjectId class_id) {
    auto load = class_names.find(class_id);
    if (load == class_names.end()) return {};
    auto text = strings.find(load->second.name_id);
    return text == strings.end() ? std::string() : java_class_name(utf8_from_modified(text->second));
}

namespace {

using graph::kNoNode;
using graph::NodeId;

std::string string_of(const HprofParts& hprof, ObjectId id) { return hprof_string(hprof.strings, id); }

// The Java name, or "" when the dump gives none.
std::string raw_class_name(const HprofParts& hprof, ObjectId class_id) {
    return hprof_class_name(hprof.strings, hprof.class_names, class_id);
}

class HprofClassNamer final : public ClassNamer {
public:
    explicit HprofClassNamer(const HprofParts& hprof) : hprof_(hprof) {}

    std::string name_of(ObjectId class_id) override {
        auto load = hprof_.class_names.find(class_id);
        if (load == hprof_.class_names.end()) {
            ++unnamed_classes_;
        } else if (auto text = hprof_.strings.find(load->second.name_id); text == hprof_.strings.end()) {
            name_strings_missing_.note(load->second.record_offset, load->second.name_id);
        } else if (text->second.empty()) {
            empty_names_.note(load->second.record_offset, class_id);
        } else {
            return java_class_name(utf8_from_modified(text->second));
        }
        return "<unnamed class " + hex_offset(class_id) + ">";
    }

    void warn(Warnings& warnings) const override {
        warnings.add("unnamed_classes", unnamed_classes_, "classes with no LOAD CLASS name record");
        warnings.add("class_name_strings_missing", name_strings_missing_.count,
                     "LOAD CLASS records whose name string id has no STRING record (the first: LOAD_CLASS @" +
                         hex_offset(name_strings_missing_.offset) + " names string " + hex_offset(name_strings_missing_.id) +
                         "): their classes are named <unnamed class ID>");
        warnings.add("empty_class_names", empty_names_.count,
                     "LOAD CLASS records whose name string is empty (the first: LOAD_CLASS @" + hex_offset(empty_names_.offset) +
                         " for class " + hex_offset(empty_names_.id) + "): their classes are named <unnamed class ID>");
    }

private:
    // LOAD CLASS records that name no usable string: how many, and the first in the file.
    struct FirstOf {
        std::uint64_t count = 0, offset = 0;
        ObjectId id = 0;
        void note(std::uint64_t at, ObjectId what) {
            if (count++ == 0 || at < offset) offset = at, id = what;
        }
    };
    const HprofParts& hprof_;
    std::uint64_t unnamed_classes_ = 0;
    FirstOf name_strings_missing_, empty_names_;
};

void sort_unique(std::vector<ObjectId>& ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

// MAT's class edges after java.lang.Class: super class, loader, object statics.
HeapClass heap_class(const ClassDump& dump, std::string name) {
    HeapClass c{dump.class_id, dump.super_id, dump.loader_id, std::move(name), 0, 0, dump.file_offset, {}, 2};
    c.refs = {dump.super_id, dump.loader_id};
    for (const StaticField& field : dump.statics)
        if (field.type == 2) c.refs.push_back(field.value);
    return c;
}

// Every primitive array class, then (by id) the classes with no class dump: of object
// arrays, and of instances a cut dump lost them for.
std::vector<ClassKey> class_keys(HprofParts& hprof, const std::vector<EdgeBlock>& blocks, Warnings& warnings) {
    std::vector<ClassKey> keys;
    for (std::uint8_t type = 4; type <= 11; ++type) keys.push_back({ObjectKind::primitive_array, type});
    std::vector<ObjectId> arrays, unreadable;
    for (const EdgeBlock& block : blocks) {
        arrays.insert(arrays.end(), block.unknown_classes.begin(), block.unknown_classes.end());
        unreadable.insert(unreadable.end(), block.unreadable_classes.begin(), block.unreadable_classes.end());
        hprof.unreadable_instances += block.unreadable_instances;
    }
    sort_unique(arrays);
    sort_unique(unreadable);
    warnings.add("arrays_without_class_dump", arrays.size(), "array classes with no CLASS DUMP: their arrays have no class edge");
    hprof.unreadable_classes = unreadable.size();
    std::erase_if(unreadable, [&](ObjectId id) { return hprof.layouts.index_of(id) != ClassLayout::kNone; });
    arrays.insert(arrays.end(), unreadable.begin(), unreadable.end());
    sort_unique(arrays);
    for (ObjectId id : arrays) keys.push_back({ObjectKind::instance, id});
    return keys;
}

}  // namespace

HeapParts hprof_heap_parts(HprofParts& hprof, std::vector<EdgeBlock> blocks, DumpInfo& info) {
    HeapParts parts;
    for (const EdgeBlock& block : blocks)
        for (std::size_t tag = 0; tag < 256; ++tag)
            if (block.counts[tag]) info.sub_records[hprof_sub_tag_name(static_cast<std::uint8_t>(tag))] += block.counts[tag];
    hprof.layouts = ClassLayouts(hprof.classes, hprof.id_size);
    auto namer = std::make_unique<HprofClassNamer>(hprof);
    for (const ClassDump& dump : hprof.classes) parts.classes.push_back(heap_class(dump, namer->name_of(dump.class_id)));
    parts.class_keys = class_keys(hprof, blocks, parts.warnings);
    parts.blocks = std::move(blocks);
    parts.namer = std::move(namer);
    parts.hprof = &hprof;
    return parts;
}

// ---- sizes ---------------------------------------------------------------------------------

namespace {

class SizeModelChoice {
    // Nodes a slab of the passes over every node: their file columns' pages go after each.
    static constexpr std::size_t kSlab = std::size_t{1} << 22;

public:
    SizeModelChoice(const BuiltHeap& heap, const HprofParts& hprof) : heap_(heap), hprof_(hprof) {}

    SizeModel choose(std::uint32_t id_size) {
        std::uint32_t alignment = object_alignment();
        std::vector<SizeModel> candidates;
        for (bool packed : {false, true}) {
            if (id_size == 4) {
                candidates.push_back(make_size_model(4, false, false, packed, alignment));
                continue;
            }
            candidates.push_back(make_size_model(8, true, true, packed, alignment));
            candidates.push_back(make_size_model(8, false, false, packed, alignment));
            candidates.push_back(make_size_model(8, false, true, packed, alignment));
        }
        const std::vector<std::uint64_t> hits = gap_matches(candidates);
        std::uint64_t best_hits = 0;
        SizeModel model = candidates.front();  // ties keep the earlier candidate
        for (std::size_t i = 0; i < candidates.size(); ++i)
            if (hits[i] > best_hits) best_hits = hits[i], model = candidates[i];
        return model;
    }

    void apply(const SizeModel& model) {
        std::vector<std::uint64_t> sizes = instance_sizes(model);
        const graph::HeapInput& input = heap_.input;
        auto& shallow = heap_.input.shallow_bytes;
        graph::for_each_slab(heap_.index.size(), kSlab, [&](std::size_t first, std::size_t last) {
            const tbb::blocked_range<NodeId> slab(static_cast<NodeId>(first), static_cast<NodeId>(last));
            tbb::parallel_for(slab, [&](const auto& r) {
                for (NodeId v = r.begin(); v < r.end(); ++v) shallow.set(v, node_bytes(v, model, sizes));
            });
            input.types.release_pages(first, last);
            shallow.release_pages(first, last);
        });
        for (const ClassDump& c : hprof_.classes) shallow.set(heap_.node_of(c.class_id), class_shallow_bytes(c, model));
    }

private:
    // Folded down the super chains: each class's from its super class's, once.
    std::vector<std::uint64_t> instance_sizes(const SizeModel& model) {
        std::vector<std::uint64_t> sizes(heap_.input.classes.size(), 0);
        std::vector<std::uint64_t> ends(hprof_.classes.size());
        if (model.packed_fields && injected_.empty()) injected_ = injected_fields();
        for (std::uint32_t i : hprof_.layouts.supers_first()) {
            const ClassLayout& layout = hprof_.layouts[i];
            std::uint64_t below = layout.super == ClassLayout::kNone ? model.object_header_bytes : ends[layout.super];
            ends[i] = level_end(below, layout.own, model);
            sizes[i] = instance_shallow_bytes(ends[i], model, model.packed_fields ? injected_[i] : ClassLayout::Level{});
        }
        return sizes;
    }

    std::uint64_t node_bytes(NodeId v, const SizeModel& model, const std::vector<std::uint64_t>& sizes) const {
        const graph::HeapInput& input = heap_.input;
        switch (input.types.kind(v)) {
            case graph::NodeKind::instance:
                // An instance with no class dump (a cut dump): its header and field bytes as dumped.
                return input.types.class_index(v) < hprof_.classes.size()
                           ? sizes[input.types.class_index(v)]
                           : instance_shallow_bytes(model.object_header_bytes + input.shallow_bytes[v], model);
            case graph::NodeKind::object_array: return array_shallow_bytes(input.shallow_bytes[v], model.reference_bytes, model);
            case graph::NodeKind::primitive_array:
                return array_shallow_bytes(input.shallow_bytes[v], element_bytes(input.types.class_index(v)), model);
            case graph::NodeKind::class_object: break;
        }
        return 0;
    }

    std::uint32_t element_bytes(std::uint32_t class_index) const {
        for (std::uint8_t type = 4; type <= 11; ++type)
            if (heap_.primitive_class[type] == class_index) return basic_type_size(type, 8);
        return 0;
    }

    // How many address gaps each candidate's sizes match: counted on every node up to 4M
    // pairs, on an evenly spaced sample beyond (a few million gaps decide the model as surely
    // as all of them). One pass for all candidates: each sample's gap and node are read once,
    // not once a candidate (with columns in files, a pass over their pages each).
    std::vector<std::uint64_t> gap_matches(const std::vector<SizeModel>& candidates) {
        std::vector<std::vector<std::uint64_t>> sizes;
        for (const SizeModel& model : candidates) sizes.push_back(instance_sizes(model));
        const NodeId n = heap_.index.size();
        const NodeId stride = std::max<NodeId>(1, n / (4u << 20));
        const NodeId samples = n > 0 ? (n - 1) / stride : 0;
        const auto& addresses = heap_.addresses;
        const graph::HeapInput& input = heap_.input;
        using Hits = std::vector<std::uint64_t>;
        Hits hits(candidates.size(), 0);
        auto add = [](Hits a, const Hits& b) {
            for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
            return a;
        };
        // Samples reach every page of these columns: each slab's go once counted.
        const std::size_t slab = std::max<std::size_t>(1, kSlab / stride);
        graph::for_each_slab(samples, slab, [&](std::size_t first, std::size_t last) {
            hits = add(std::move(hits), tbb::parallel_reduce(
                tbb::blocked_range<NodeId>(static_cast<NodeId>(first), static_cast<NodeId>(last)), Hits(candidates.size(), 0),
                [&](const auto& r, Hits slab_hits) {
                    for (NodeId i = r.begin(); i < r.end(); ++i) {
                        NodeId v = i * stride;
                        if (input.types.kind(v) == graph::NodeKind::class_object) continue;
                        const std::uint64_t gap = addresses[v + 1] - addresses[v];
                        for (std::size_t c = 0; c < candidates.size(); ++c)
                            slab_hits[c] += node_bytes(v, candidates[c], sizes[c]) == gap;
                    }
                    return slab_hits;
                },
                add));
            const std::size_t from = first * stride, to = (last - 1) * stride + 2;  // v and v + 1 read
            addresses.release_pages(from, to), input.types.release_pages(from, to);
        });
        return hits;
    }

    // The greatest common divisor of address gaps, kept within 8..256 (as MAT does): 16 for
    // a VM run with -XX:ObjectAlignmentInBytes=16.
    std::uint32_t object_alignment() const {
        const auto& addresses = heap_.addresses;
        std::uint64_t gcd = 0;
        for (std::size_t i = 0; i + 1 < addresses.size() && (gcd == 0 || gcd > 8); ++i)
            gcd = std::gcd(gcd, addresses[i + 1] - addresses[i]);
        return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(gcd, 8, 256));
    }

    // HotSpot's injected fields of each class and its super classes (JDK 15+ models only:
    // older VMs had fewer, and the dumps we can check show none).
    std::vector<ClassLayout::Level> injected_fields() const {
        std::vector<ClassLayout::Level> total(hprof_.classes.size());
        for (std::uint32_t i : hprof_.layouts.supers_first()) {
            total[i] = hotspot_injected_fields(raw_class_name(hprof_, hprof_.classes[i].class_id));
            if (std::uint32_t super = hprof_.layouts[i].super; super != ClassLayout::kNone) {
                total[i].primitive_bytes += total[super].primitive_bytes;
                total[i].references += total[super].references;
            }
        }
        return total;
    }

    const BuiltHeap& heap_;
    const HprofParts& hprof_;
    std::vector<ClassLayout::Level> injected_;  // per class dump, for the packed size models
};

}  // namespace

void set_hprof_sizes(const BuiltHeap& heap, const HprofParts& hprof, DumpInfo& info) {
    SizeModelChoice choice(heap, hprof);
    SizeModel model = choice.choose(info.id_size);
    info.compressed_oops = model.compressed_oops;
    info.size_model = describe(model);
    choice.apply(model);
}

// ---- field names and weak edges ------------------------------------------------------------

graph::FieldNames hprof_field_names(const BuiltHeap& heap, const HprofParts& hprof) {
    graph::FieldNames names;
    names.instance_fields.resize(heap.input.classes.size());
    names.class_edges.resize(heap.input.classes.size());
    const bool class_node = heap.input.classes[heap.class_of_classes].node != kNoNode;
    for (std::uint32_t i = 0; i < hprof.classes.size(); ++i) {
        const ClassDump& c = hprof.classes[i];
        const ClassLayout& layout = hprof.layouts[i];
        for (ObjectId name : layout.ref_names) names.instance_fields[i].own.push_back(string_of(hprof, name));
        names.instance_fields[i].super = layout.refs_above;
        names.instance_fields[i].total = layout.references;
        // In the class row's order, only the edges that made it into the row.
        auto& edges = names.class_edges[i];
        if (class_node) edges.push_back("<class>");
        if (heap.node_of(c.super_id) != kNoNode) edges.push_back("<super>");
        if (heap.node_of(c.loader_id) != kNoNode) edges.push_back("<classloader>");
        for (const StaticField& field : c.statics)
            if (field.type == 2 && heap.node_of(field.value) != kNoNode) edges.push_back(string_of(hprof, field.name_id));
    }
    return names;
}

namespace {

// A reference field of a layout: the layout that declares it and its place among that
// layout's references (ClassLayouts::for_each_reference).
struct FieldAt {
    std::uint32_t level = 0, k = 0;
};

// Per class dump, for subclasses of java.lang.ref.Reference: which field is `referent` (the
// last field so named: Reference's own come last, and a subclass keeps its super class's).
// Folded down the super chains.
std::vector<std::optional<FieldAt>> referent_fields(const HprofParts& hprof) {
    const ClassLayouts& layouts = hprof.layouts;
    const std::size_t n = hprof.classes.size();
    std::vector<std::optional<FieldAt>> referent(n);
    std::vector<std::uint8_t> reference(n, 0);
    for (std::uint32_t i : layouts.supers_first()) {
        const ClassLayout& layout = layouts[i];
        if (layout.super != ClassLayout::kNone) {
            reference[i] = reference[layout.super];
            referent[i] = referent[layout.super];
        }
        reference[i] |= raw_class_name(hprof, hprof.classes[i].class_id) == "java.lang.ref.Reference";
        for (std::size_t k = layout.ref_names.size(); k-- > 0 && !referent[i];)
            if (string_of(hprof, layout.ref_names[k]) == "referent") referent[i] = FieldAt{i, static_cast<std::uint32_t>(k)};
    }
    for (std::size_t i = 0; i < n; ++i)
        if (!reference[i]) referent[i].reset();
    return referent;
}

// The referent of the INSTANCE DUMP at the entry's offset, read through the class layout;
// nullopt when the bytes there are not that record.
std::optional<ObjectId> read_referent(const HprofParts& hprof, const BlockReader::Entry& e, std::uint32_t class_dump,
                                      FieldAt referent) {
    auto instance = read_instance_header(hprof.file, e.file_offset, hprof.id_size);
    if (!instance || instance->id != e.address || instance->class_id != hprof.classes[class_dump].class_id) return std::nullopt;
    if (instance->field_bytes != hprof.layouts[class_dump].data_bytes ||
        instance->fields_offset + instance->field_bytes > hprof.file.size())
        return std::nullopt;
    ObjectId value = 0;
    hprof.layouts.read_references(class_dump, hprof.file.data() + instance->fields_offset, hprof.id_size,
                                  [&](ObjectId ref, std::uint32_t level, std::uint32_t k) {
                                      if (level == referent.level && k == referent.k) value = ref;
                                  });
    return value;
}

}  // namespace

std::vector<graph::Edge> hprof_weak_edges(const BuiltHeap& heap, const HprofParts& hprof, Warnings& warnings) {
    std::vector<std::optional<FieldAt>> referent = referent_fields(hprof);
    const auto& blocks = heap.parts.blocks;
    std::vector<std::vector<graph::Edge>> found(blocks.size());
    std::atomic<std::uint64_t> unread = 0;
    for_each_block(blocks.size(), [&](std::size_t b) {
        each_entry(blocks[b], [&](const BlockReader::Entry& e) {
            if (e.kind != ObjectKind::instance || e.class_ordinal == 0 || !referent[e.class_ordinal - 1]) return;
            std::uint32_t c = e.class_ordinal - 1;
            std::optional<ObjectId> value = read_referent(hprof, e, c, *referent[c]);
            if (!value) ++unread;
            else if (NodeId to = heap.node_of(*value); to != kNoNode) found[b].push_back({heap.node_of(e.address), to});
        });
    });
    std::vector<graph::Edge> weak;
    for (const ClassDump& c : hprof.classes)
        if (raw_class_name(hprof, c.class_id) == "java.lang.ref.Finalizer")
            for (const StaticField& field : c.statics)
                if (field.type == 2 && string_of(hprof, field.name_id) == "unfinalized" && heap.node_of(field.value) != kNoNode)
                    weak.push_back({heap.node_of(c.class_id), heap.node_of(field.value)});
    for (auto& block : found) weak.insert(weak.end(), block.begin(), block.end());
    std::sort(weak.begin(), weak.end(), [](const graph::Edge& a, const graph::Edge& b) {
        return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
    warnings.add("referents_unread", unread,
                 "Reference objects whose referent could not be read back from the file (a record split "
                 "across segments): leak-suspect paths may run through their referents");
    return weak;
}

}  // namespace heapgraph
