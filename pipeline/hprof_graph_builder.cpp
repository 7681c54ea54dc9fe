// Decoded HPROF records -> graph::HeapInput -> graph::HeapGraph.
//   1. list every object and class dump, sort by address: node ids follow address order;
//   2. choose the size model (compressed oops or not) and give every node its shallow size;
//   3. build the class table (class dumps, then synthetic classes for primitive arrays or
//      array classes the dump has no class dump for);
//   4. map references to node ids and add the implicit edges (docs/heap-graph.md);
//   5. map root records; with no sticky-class roots, bootstrap classes become roots (MAT).
#include "hprof_graph_builder.h"

#include <oneapi/tbb/parallel_sort.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace heapgraph {

namespace {

using graph::NodeId;
using graph::kNoNode;

constexpr std::uint32_t kClassChunk = 0xFFFFFFFFu;

struct NodeSource {
    ObjectId address;
    std::uint32_t chunk;  // kClassChunk for class dumps
    std::uint32_t index;  // into the chunk's objects, or into parts.classes
};

graph::NodeKind node_kind(ObjectKind kind) {
    switch (kind) {
        case ObjectKind::instance: return graph::NodeKind::instance;
        case ObjectKind::object_array: return graph::NodeKind::object_array;
        case ObjectKind::primitive_array: return graph::NodeKind::primitive_array;
        case ObjectKind::class_object: break;
    }
    return graph::NodeKind::class_object;
}

class Builder {
public:
    Builder(const HprofParts& parts, DumpInfo& info) : parts_(parts), info_(info) {
        for (const ClassDump& c : parts.classes) by_id_.emplace(c.class_id, &c);
    }

    LoadedDump build() {
        list_nodes();
        choose_size_model();
        make_class_table();
        fill_nodes();
        add_edges();
        add_roots();
        LoadedDump loaded;
        loaded.addresses = std::move(addresses_);
        loaded.graph = graph::build_heap_graph(std::move(input_));
        loaded.warnings = std::move(warnings_);
        return loaded;
    }

private:
    const ObjectRecord& object(const NodeSource& s) const { return parts_.records[s.chunk].objects[s.index]; }

    void list_nodes() {
        for (std::uint32_t i = 0; i < parts_.classes.size(); ++i)
            sources_.push_back({parts_.classes[i].class_id, kClassChunk, i});
        for (std::uint32_t c = 0; c < parts_.records.size(); ++c) {
            const HeapRecords& records = parts_.records[c];
            for (std::uint32_t i = 0; i < records.objects.size(); ++i)
                sources_.push_back({records.objects[i].id, c, i});
            for (std::size_t tag = 0; tag < 256; ++tag)
                if (records.counts[tag]) info_.sub_records[hprof_sub_tag_name(static_cast<std::uint8_t>(tag))] += records.counts[tag];
        }
        // Ties (one address written twice) keep the record that comes first in the file.
        tbb::parallel_sort(sources_.begin(), sources_.end(), [](const NodeSource& a, const NodeSource& b) {
            if (a.address != b.address) return a.address < b.address;
            if (a.chunk != b.chunk) return a.chunk == kClassChunk || (b.chunk != kClassChunk && a.chunk < b.chunk);
            return a.index < b.index;
        });
        std::size_t before = sources_.size();
        sources_.erase(std::unique(sources_.begin(), sources_.end(),
                                   [](const NodeSource& a, const NodeSource& b) { return a.address == b.address; }),
                       sources_.end());
        warn_if("duplicate_objects", before - sources_.size(),
                "records for an address that was already dumped: the first record is kept");
        addresses_.reserve(sources_.size());
        for (const NodeSource& s : sources_) addresses_.push_back(s.address);
    }

    std::uint64_t object_bytes(const ObjectRecord& o, const SizeModel& model) const {
        switch (o.kind) {
            case ObjectKind::instance:
                return instance_shallow_bytes(parts_.context.layouts.at(o.class_id), model,
                                              model.packed_fields ? injected(o.class_id) : ClassLayout::Level{});
            case ObjectKind::object_array:
                return array_shallow_bytes(o.length, model.reference_bytes, model);
            case ObjectKind::primitive_array:
                return array_shallow_bytes(o.length, basic_type_size(o.element_type, 8), model);
            case ObjectKind::class_object: break;
        }
        return 0;
    }

    // HPROF does not say how the VM laid objects out (compressed oops and class pointers,
    // field packing). Objects lie next to each other in the heap, so the model whose sizes
    // match the most address gaps exactly is the VM's. Ties keep the earlier candidate.
    void choose_size_model() {
        std::uint32_t alignment = object_alignment();
        std::vector<SizeModel> candidates;
        for (bool packed : {false, true}) {
            if (info_.id_size == 4) {
                candidates.push_back(make_size_model(4, false, false, packed, alignment));
                continue;
            }
            candidates.push_back(make_size_model(8, true, true, packed, alignment));
            candidates.push_back(make_size_model(8, false, false, packed, alignment));
            candidates.push_back(make_size_model(8, false, true, packed, alignment));
        }
        std::uint64_t best_hits = 0;
        model_ = candidates.front();
        for (const SizeModel& candidate : candidates) {
            std::uint64_t hits = gap_matches(candidate);
            if (hits > best_hits) best_hits = hits, model_ = candidate;
        }
        info_.compressed_oops = model_.compressed_oops;
        info_.size_model = describe(model_);
    }

    std::uint64_t gap_matches(const SizeModel& model) const {
        std::uint64_t hits = 0;
        for (std::size_t i = 0; i + 1 < sources_.size(); ++i) {
            if (sources_[i].chunk == kClassChunk) continue;
            std::uint64_t gap = sources_[i + 1].address - sources_[i].address;
            hits += object_bytes(object(sources_[i]), model) == gap;
        }
        return hits;
    }

    // HotSpot's injected fields of the class and its super classes (JDK 15+ models only:
    // older VMs had fewer, and the dumps we can check show none).
    ClassLayout::Level injected(ObjectId class_id) const {
        auto cached = injected_.find(class_id);
        if (cached != injected_.end()) return cached->second;
        ClassLayout::Level total;
        for (ObjectId c = class_id; c != 0;) {
            auto dump = by_id_.find(c);
            if (dump == by_id_.end()) break;
            ClassLayout::Level own = hotspot_injected_fields(raw_class_name(c));
            total.primitive_bytes += own.primitive_bytes;
            total.references += own.references;
            c = dump->second->super_id;
        }
        return injected_[class_id] = total;
    }

    std::string raw_class_name(ObjectId class_id) const {
        auto name_id = parts_.class_name_ids.find(class_id);
        if (name_id == parts_.class_name_ids.end()) return {};
        auto text = parts_.strings.find(name_id->second);
        return text == parts_.strings.end() ? std::string() : java_class_name(text->second);
    }

    // The greatest common divisor of address gaps, kept within 8..256 (as MAT does): 16 for
    // a VM run with -XX:ObjectAlignmentInBytes=16.
    std::uint32_t object_alignment() const {
        std::uint64_t gcd = 0;
        for (std::size_t i = 0; i + 1 < sources_.size() && (gcd == 0 || gcd > 8); ++i)
            gcd = std::gcd(gcd, sources_[i + 1].address - sources_[i].address);
        return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(gcd, 8, 256));
    }

    std::string class_name(ObjectId class_id) {
        std::string name = raw_class_name(class_id);
        if (!name.empty()) return name;
        ++unnamed_classes_;
        return "<unnamed class " + hex_offset(class_id) + ">";
    }

    std::uint32_t add_class(std::string name, NodeId node) {
        input_.classes.push_back({std::move(name), node, kNoNode});
        return static_cast<std::uint32_t>(input_.classes.size() - 1);
    }

    void make_class_table() {
        for (NodeId v = 0; v < sources_.size(); ++v) {
            if (sources_[v].chunk != kClassChunk) continue;
            const ClassDump& c = parts_.classes[sources_[v].index];
            std::uint32_t index = add_class(class_name(c.class_id), v);
            class_index_.emplace(c.class_id, index);
            by_name_.emplace(input_.classes[index].name, index);
        }
        for (auto& info : input_.classes) {
            const ClassDump& c = parts_.classes[sources_[info.node].index];
            info.loader = node_of(c.loader_id);
        }
        auto found = by_name_.find("java.lang.Class");
        class_of_classes_ = found != by_name_.end() ? found->second
                                                    : (by_name_["java.lang.Class"] = add_class("java.lang.Class", kNoNode));
    }

    std::uint32_t array_class(const ObjectRecord& o) {
        if (o.kind == ObjectKind::primitive_array) {
            std::string name = std::string(basic_type_java_name(static_cast<BasicType>(o.element_type))) + "[]";
            auto found = by_name_.find(name);
            if (found != by_name_.end()) return found->second;
            return by_name_[name] = add_class(name, kNoNode);
        }
        auto found = class_index_.find(o.class_id);
        if (found != class_index_.end()) return found->second;
        ++arrays_without_class_dump_;
        return class_index_[o.class_id] = add_class(class_name(o.class_id), kNoNode);
    }

    // Class objects count as instances of java.lang.Class, sized by their statics (MAT).
    void fill_nodes() {
        std::size_t n = sources_.size();
        input_.kind.resize(n);
        input_.class_index.resize(n);
        input_.shallow_bytes.resize(n);
        for (NodeId v = 0; v < n; ++v) {
            if (sources_[v].chunk == kClassChunk) {
                input_.kind[v] = graph::NodeKind::class_object;
                input_.class_index[v] = class_of_classes_;
                input_.shallow_bytes[v] = class_shallow_bytes(parts_.classes[sources_[v].index], model_);
                continue;
            }
            const ObjectRecord& o = object(sources_[v]);
            input_.kind[v] = node_kind(o.kind);
            input_.shallow_bytes[v] = object_bytes(o, model_);
            input_.class_index[v] = o.kind == ObjectKind::instance ? class_index_.at(o.class_id) : array_class(o);
        }
    }

    NodeId node_of(ObjectId address) const {
        if (address == 0) return kNoNode;
        auto it = std::lower_bound(addresses_.begin(), addresses_.end(), address);
        if (it == addresses_.end() || *it != address) return kNoNode;
        return static_cast<NodeId>(it - addresses_.begin());
    }

    void edge_to(NodeId from, ObjectId address) {
        if (address == 0) return;
        NodeId to = node_of(address);
        if (to == kNoNode) {
            ++dangling_;
            return;
        }
        input_.edges.push_back({from, to});
    }

    // MAT's class edges: its type (java.lang.Class), super class, loader, object statics.
    // Signers and protection domain are not edges by default in MAT either.
    void add_class_edges(NodeId v, const ClassDump& c) {
        NodeId type = input_.classes[class_of_classes_].node;
        if (type != kNoNode) input_.edges.push_back({v, type});
        edge_to(v, c.super_id);
        edge_to(v, c.loader_id);
        for (const StaticField& field : c.statics)
            if (field.type == 2) edge_to(v, field.value);
    }

    void add_edges() {
        for (NodeId v = 0; v < sources_.size(); ++v) {
            const NodeSource& s = sources_[v];
            if (s.chunk == kClassChunk) {
                add_class_edges(v, parts_.classes[s.index]);
                continue;
            }
            const ObjectRecord& o = object(s);
            NodeId class_node = input_.classes[input_.class_index[v]].node;
            if (class_node != kNoNode) input_.edges.push_back({v, class_node});
            const auto& refs = parts_.records[s.chunk].refs;
            for (std::uint64_t r = o.first_ref; r < o.first_ref + o.ref_count; ++r) edge_to(v, refs[r]);
        }
        warn_if("dangling_references", dangling_,
                "references to objects the dump does not contain were skipped: retained sizes may be low");
    }

    // A thread's locals (Java frame, JNI local, native stack, thread block) hang from its
    // thread object, as in MAT: an edge thread -> object, and the root is not global. Kept
    // in the root list for counting, marked non-global.
    static bool thread_local_kind(RootKind kind) {
        return kind == RootKind::java_frame || kind == RootKind::jni_local ||
               kind == RootKind::native_stack || kind == RootKind::thread_block;
    }

    void add_roots() {
        for (std::size_t k = 0; k < static_cast<std::size_t>(RootKind::count_); ++k)
            input_.root_kind_names.emplace_back(root_kind_name(static_cast<RootKind>(k)));
        std::unordered_map<std::uint32_t, NodeId> threads;
        for (const HeapRecords& records : parts_.records)
            for (const RootRecord& root : records.roots)
                if (root.kind == RootKind::thread_object && node_of(root.id) != kNoNode)
                    threads.emplace(root.thread_serial, node_of(root.id));
        bool sticky = false;
        std::uint64_t missing = 0;
        for (const HeapRecords& records : parts_.records)
            for (const RootRecord& root : records.roots) {
                sticky |= root.kind == RootKind::sticky_class;
                NodeId node = node_of(root.id);
                if (node == kNoNode) {
                    ++missing;
                    continue;
                }
                auto thread = thread_local_kind(root.kind) ? threads.find(root.thread_serial) : threads.end();
                bool global = thread == threads.end();
                if (!global) input_.edges.push_back({thread->second, node});
                input_.roots.push_back({node, static_cast<std::uint8_t>(root.kind), global});
            }
        if (!sticky) add_system_class_roots();
        warn_if("roots_to_missing_objects", missing,
                "GC root records name objects the dump does not contain: they were skipped");
        warn_if("unnamed_classes", unnamed_classes_, "classes with no LOAD CLASS name record");
        warn_if("arrays_without_class_dump", arrays_without_class_dump_,
                "object arrays whose array class has no CLASS DUMP: their class edge is missing");
    }

    // MAT: a dump without ROOT STICKY CLASS records treats bootstrap-loaded classes (not
    // array classes) as roots.
    void add_system_class_roots() {
        std::uint64_t added = 0;
        for (const auto& c : input_.classes)
            if (c.node != kNoNode && c.loader == kNoNode && !c.name.ends_with("[]")) {
                input_.roots.push_back({c.node, static_cast<std::uint8_t>(RootKind::system_class)});
                ++added;
            }
        warn_if("system_classes_as_roots", added,
                "the dump has no sticky-class roots: classes of the bootstrap loader were made roots, as MAT does");
    }

    void warn_if(std::string code, std::uint64_t count, std::string message) {
        if (count) warnings_.push_back({std::move(code), count, std::move(message)});
    }

    const HprofParts& parts_;
    DumpInfo& info_;
    SizeModel model_;
    std::vector<NodeSource> sources_;
    std::vector<ObjectId> addresses_;
    graph::HeapInput input_;
    std::unordered_map<ObjectId, std::uint32_t> class_index_;
    std::map<std::string, std::uint32_t> by_name_;
    std::vector<Warning> warnings_;
    std::unordered_map<ObjectId, const ClassDump*> by_id_;
    mutable std::unordered_map<ObjectId, ClassLayout::Level> injected_;
    std::uint32_t class_of_classes_ = 0;
    std::uint64_t dangling_ = 0, unnamed_classes_ = 0, arrays_without_class_dump_ = 0;
};

}  // namespace

LoadedDump build_hprof_graph(const HprofParts& parts, DumpInfo& info) {
    return Builder(parts, info).build();
}

}  // namespace heapgraph
