// Decoded HPROF blocks -> graph::HeapGraph, in passes over the blocks (parallel where the
// writes are disjoint):
//   1. index: every object and class address goes into the AddressIndex (node ids follow
//      address order); an address dumped twice is an error;
//   2. class table: one class per class dump (file order), then synthetic classes for
//      primitive arrays and array classes the dump has no class dump for;
//   3. nodes: kind, class and (for now) array length of every node, and its out-degree
//      counting only references that resolve (dangling ones are counted, then skipped);
//   4. size model: the candidate whose sizes match the most address gaps (docs/size-model.md);
//      lengths become shallow sizes;
//   5. roots: root records mapped to nodes; a thread's locals hang from its thread object
//      (MAT); with no sticky-class roots, bootstrap classes become roots (MAT);
//   6. edges: prefix sum of degrees, then scatter (implicit edges first, docs/heap-graph.md);
//   7. for leak-suspect paths (docs/suspects.md): field names per class, and the weak edges.
//      Blocks keep no null fields, so the referent's position in a row is unknown: each
//      java.lang.ref.Reference instance's `referent` is read back from its record in the file.
#include "hprof_graph_builder.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <numeric>

namespace heapgraph {

namespace {

using graph::kNoNode;
using graph::NodeId;

constexpr std::uint32_t kMissing = AddressIndex::kMissing;

graph::NodeKind node_kind(ObjectKind kind) {
    switch (kind) {
        case ObjectKind::instance: return graph::NodeKind::instance;
        case ObjectKind::object_array: return graph::NodeKind::object_array;
        case ObjectKind::primitive_array: return graph::NodeKind::primitive_array;
        case ObjectKind::class_object: break;
    }
    return graph::NodeKind::class_object;
}

// Runs `body(block_index)` over all blocks in parallel.
template <typename Body>
void for_each_block(std::size_t blocks, Body body) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const auto& r) {
        for (std::size_t b = r.begin(); b < r.end(); ++b) body(b);
    });
}

class Builder {
public:
    Builder(HprofParts& parts, DumpInfo& info) : parts_(parts), info_(info), index_(address_range()) {
        for (const ClassDump& c : parts.classes) by_id_.emplace(c.class_id, &c);
    }

    LoadedDump build() {
        LoadedDump loaded;
        StageClock clock(loaded.timings);
        clock.start("index");
        index_addresses();
        make_class_table();
        clock.start("nodes");
        fill_nodes();
        clock.start("size model");
        choose_size_model();
        add_roots();
        clock.start("edges");
        fill_edges();
        clock.start("transpose");
        loaded.addresses = std::move(addresses_);
        input_.out = &out_;
        loaded.graph = graph::build_heap_graph(std::move(input_));
        loaded.weak_edges = std::move(weak_edges_);
        loaded.field_names = std::move(field_names_);
        loaded.warnings = std::move(warnings_);
        return loaded;
    }

private:
    AddressIndex::Range address_range() {
        AddressIndex::Range range;
        for (const EdgeBlock& block : parts_.blocks) {
            range.merge(block.range);
            for (std::size_t tag = 0; tag < 256; ++tag)
                if (block.counts[tag]) info_.sub_records[hprof_sub_tag_name(static_cast<std::uint8_t>(tag))] += block.counts[tag];
        }
        for (const ClassDump& c : parts_.classes) range.add(c.class_id);
        return range;
    }

    // ---- 1. index ------------------------------------------------------------------------

    void index_addresses() {
        std::mutex mutex;
        std::vector<ObjectId> duplicates;
        std::optional<std::uint64_t> first_null;  // offset of the first object dumped at id 0
        for_each_block(parts_.blocks.size(), [&](std::size_t b) {
            BlockReader reader(parts_.blocks[b]);
            BlockReader::Entry e;
            while (reader.next(e)) {
                if (e.address == 0) {  // id 0 is null: such an object could never be referenced (fuzz finding)
                    std::lock_guard lock(mutex);
                    if (!first_null || e.file_offset < *first_null) first_null = e.file_offset;
                } else if (!index_.insert(e.address)) {
                    std::lock_guard lock(mutex);
                    duplicates.push_back(e.address);
                }
                for (std::uint32_t r = 0; r < e.ref_count; ++r) reader.next_ref(e);
            }
        });
        for (const ClassDump& c : parts_.classes) {
            if (c.class_id == 0 && (!first_null || c.file_offset < *first_null)) first_null = c.file_offset;
            if (c.class_id != 0 && !index_.insert(c.class_id)) duplicates.push_back(c.class_id);
        }
        if (first_null)
            throw DumpError(info_.path, {*first_null, "heap dump", "dumps an object at id 0, which HPROF reserves for null"});
        index_.finish();
        if (!duplicates.empty() || index_.sparse_duplicates()) fail_on_duplicate(duplicates);
        addresses_ = index_.addresses();
    }

    // Strict: one address dumped twice cannot be one object. Names the lowest such address
    // and the offset of its second record, both independent of thread timing.
    [[noreturn]] void fail_on_duplicate(std::vector<ObjectId> duplicates) {
        std::map<ObjectId, int> seen;
        if (duplicates.empty()) {  // sparse index: find them by counting, class ids too (fuzz finding)
            for (const ClassDump& c : parts_.classes)
                if (c.class_id != 0 && ++seen[c.class_id] == 2) duplicates.push_back(c.class_id);
            for (const EdgeBlock& block : parts_.blocks) {
                BlockReader reader(block);
                BlockReader::Entry e;
                while (reader.next(e)) {
                    if (++seen[e.address] == 2) duplicates.push_back(e.address);
                    for (std::uint32_t r = 0; r < e.ref_count; ++r) reader.next_ref(e);
                }
            }
            seen.clear();
        }
        ObjectId lowest = *std::min_element(duplicates.begin(), duplicates.end());
        std::vector<std::uint64_t> offsets;  // of every record at that address: class or object
        for (const ClassDump& c : parts_.classes)
            if (c.class_id == lowest) offsets.push_back(c.file_offset);
        for (const EdgeBlock& block : parts_.blocks) {
            BlockReader reader(block);
            BlockReader::Entry e;
            while (reader.next(e)) {
                if (e.address == lowest) offsets.push_back(e.file_offset);
                for (std::uint32_t r = 0; r < e.ref_count; ++r) reader.next_ref(e);
            }
        }
        std::sort(offsets.begin(), offsets.end());
        throw DumpError(info_.path, {offsets.at(1), "heap dump", "dumps object " + hex_offset(lowest) +
                                                             " a second time: one address cannot hold two objects"});
    }

    NodeId node_of(ObjectId address) const {
        if (address == 0) return kNoNode;
        std::uint32_t node = index_.node_of(address);
        return node == kMissing ? kNoNode : node;
    }

    // ---- 2. class table ------------------------------------------------------------------

    std::string raw_class_name(ObjectId class_id) const {
        auto name_id = parts_.class_name_ids.find(class_id);
        if (name_id == parts_.class_name_ids.end()) return {};
        auto text = parts_.strings.find(name_id->second);
        return text == parts_.strings.end() ? std::string() : java_class_name(text->second);
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

    std::uint32_t class_by_name(const std::string& name) {
        auto found = by_name_.find(name);
        return found != by_name_.end() ? found->second : (by_name_[name] = add_class(name, kNoNode));
    }

    void make_class_table() {
        for (const ClassDump& c : parts_.classes) {
            std::uint32_t index = add_class(class_name(c.class_id), node_of(c.class_id));
            input_.classes[index].loader = node_of(c.loader_id);
            by_name_.emplace(input_.classes[index].name, index);
        }
        class_of_classes_ = class_by_name("java.lang.Class");
        for (std::uint8_t type = 4; type <= 11; ++type)
            primitive_class_[type] = class_by_name(std::string(basic_type_java_name(static_cast<BasicType>(type))) + "[]");
        std::vector<ObjectId> unknown;
        for (const EdgeBlock& block : parts_.blocks)
            unknown.insert(unknown.end(), block.unknown_classes.begin(), block.unknown_classes.end());
        std::sort(unknown.begin(), unknown.end());
        unknown.erase(std::unique(unknown.begin(), unknown.end()), unknown.end());
        for (ObjectId id : unknown) unknown_class_index_.emplace(id, add_class(class_name(id), kNoNode));
        arrays_without_class_dump_ = unknown.size();
    }

    std::uint32_t class_of(const BlockReader::Entry& e) const {
        if (e.kind == ObjectKind::primitive_array) return primitive_class_[e.element_type];
        if (e.class_ordinal) return e.class_ordinal - 1;
        return unknown_class_index_.at(e.raw_class_id);
    }

    // ---- 3. nodes ------------------------------------------------------------------------

    void fill_nodes() {
        const std::size_t n = index_.size();
        input_.kind.assign(n, graph::NodeKind::instance);
        input_.class_index.assign(n, 0);
        input_.shallow_bytes.assign(n, 0);  // array lengths until the size model is known
        out_.offsets.assign(n + 1, 0);      // degrees at offsets[v + 1] until the prefix sum
        std::atomic<std::uint64_t> dangling = 0;
        for_each_block(parts_.blocks.size(), [&](std::size_t b) { dangling += fill_block_nodes(parts_.blocks[b]); });
        for (std::uint32_t i = 0; i < parts_.classes.size(); ++i) fill_class_node(i);
        dangling_ = dangling;
    }

    std::uint64_t fill_block_nodes(const EdgeBlock& block) {
        std::uint64_t dangling = 0;
        BlockReader reader(block);
        BlockReader::Entry e;
        while (reader.next(e)) {
            NodeId v = node_of(e.address);
            input_.kind[v] = node_kind(e.kind);
            input_.class_index[v] = class_of(e);
            input_.shallow_bytes[v] = e.length;
            std::uint64_t degree = input_.classes[input_.class_index[v]].node != kNoNode;
            for (std::uint32_t r = 0; r < e.ref_count; ++r) {
                bool found = node_of(reader.next_ref(e)) != kNoNode;
                degree += found;
                dangling += !found;
            }
            out_.offsets[v + 1] = degree;
        }
        return dangling;
    }

    // MAT's class edges: its type (java.lang.Class), super class, loader, object statics.
    // Signers and protection domain are not edges by default in MAT either.
    template <typename Visit>
    void class_edges(const ClassDump& c, Visit visit) const {
        visit(input_.classes[class_of_classes_].node);
        visit(node_of(c.super_id));
        visit(node_of(c.loader_id));
        for (const StaticField& field : c.statics)
            if (field.type == 2) visit(node_of(field.value));
    }

    void fill_class_node(std::uint32_t i) {
        const ClassDump& c = parts_.classes[i];
        NodeId v = node_of(c.class_id);
        input_.kind[v] = graph::NodeKind::class_object;
        input_.class_index[v] = class_of_classes_;
        std::uint64_t degree = 0;
        class_edges(c, [&](NodeId to) { degree += to != kNoNode; });
        for (const StaticField& field : c.statics) dangling_statics_ += field.type == 2 && field.value && node_of(field.value) == kNoNode;
        out_.offsets[v + 1] = degree;
    }

    // ---- 4. size model -------------------------------------------------------------------

    std::vector<std::uint64_t> instance_sizes(const SizeModel& model) {
        std::vector<std::uint64_t> sizes(input_.classes.size(), 0);
        for (std::uint32_t i = 0; i < parts_.classes.size(); ++i) {
            ObjectId id = parts_.classes[i].class_id;
            ClassLayout layout = make_layout(by_id_, id, info_.id_size);
            sizes[i] = instance_shallow_bytes(layout, model,
                                              model.packed_fields ? injected(id) : ClassLayout::Level{});
        }
        return sizes;
    }

    std::uint64_t node_bytes(NodeId v, const SizeModel& model, const std::vector<std::uint64_t>& sizes) const {
        switch (input_.kind[v]) {
            case graph::NodeKind::instance: return sizes[input_.class_index[v]];
            case graph::NodeKind::object_array: return array_shallow_bytes(input_.shallow_bytes[v], model.reference_bytes, model);
            case graph::NodeKind::primitive_array:
                return array_shallow_bytes(input_.shallow_bytes[v], element_bytes(input_.class_index[v]), model);
            case graph::NodeKind::class_object: break;
        }
        return 0;
    }

    std::uint32_t element_bytes(std::uint32_t class_index) const {
        for (std::uint8_t type = 4; type <= 11; ++type)
            if (primitive_class_[type] == class_index) return basic_type_size(type, 8);
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
        std::vector<std::uint64_t> sizes = instance_sizes(model_);
        tbb::parallel_for(tbb::blocked_range<NodeId>(0, index_.size()), [&](const auto& r) {
            for (NodeId v = r.begin(); v < r.end(); ++v) input_.shallow_bytes[v] = node_bytes(v, model_, sizes);
        });
        for (const ClassDump& c : parts_.classes) input_.shallow_bytes[node_of(c.class_id)] = class_shallow_bytes(c, model_);
    }

    // Counted on every node up to 4M pairs, on an evenly spaced sample beyond: a few million
    // gaps decide the model as surely as all of them.
    std::uint64_t gap_matches(const SizeModel& model) {
        std::vector<std::uint64_t> sizes = instance_sizes(model);
        const NodeId n = index_.size();
        const NodeId stride = std::max<NodeId>(1, n / (4u << 20));
        const NodeId samples = n > 0 ? (n - 1) / stride : 0;
        return tbb::parallel_reduce(
            tbb::blocked_range<NodeId>(0, samples), std::uint64_t{0},
            [&](const auto& r, std::uint64_t hits) {
                for (NodeId i = r.begin(); i < r.end(); ++i) {
                    NodeId v = i * stride;
                    if (input_.kind[v] != graph::NodeKind::class_object)
                        hits += node_bytes(v, model, sizes) == addresses_[v + 1] - addresses_[v];
                }
                return hits;
            },
            std::plus<>());
    }

    // The greatest common divisor of address gaps, kept within 8..256 (as MAT does): 16 for
    // a VM run with -XX:ObjectAlignmentInBytes=16.
    std::uint32_t object_alignment() const {
        std::uint64_t gcd = 0;
        for (std::size_t i = 0; i + 1 < addresses_.size() && (gcd == 0 || gcd > 8); ++i)
            gcd = std::gcd(gcd, addresses_[i + 1] - addresses_[i]);
        return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(gcd, 8, 256));
    }

    // HotSpot's injected fields of the class and its super classes (JDK 15+ models only:
    // older VMs had fewer, and the dumps we can check show none).
    ClassLayout::Level injected(ObjectId class_id) const {
        ClassLayout::Level total;
        std::size_t depth = 0;
        for (ObjectId c = class_id; c != 0 && depth++ <= by_id_.size();) {
            auto dump = by_id_.find(c);
            if (dump == by_id_.end()) break;
            ClassLayout::Level own = hotspot_injected_fields(raw_class_name(c));
            total.primitive_bytes += own.primitive_bytes;
            total.references += own.references;
            c = dump->second->super_id;
        }
        return total;
    }

    // ---- 5. roots ------------------------------------------------------------------------

    static bool thread_local_kind(RootKind kind) {
        return kind == RootKind::java_frame || kind == RootKind::jni_local ||
               kind == RootKind::native_stack || kind == RootKind::thread_block;
    }

    void add_roots() {
        for (std::size_t k = 0; k < static_cast<std::size_t>(RootKind::count_); ++k)
            input_.root_kind_names.emplace_back(root_kind_name(static_cast<RootKind>(k)));
        std::unordered_map<std::uint32_t, NodeId> threads;
        for (const EdgeBlock& block : parts_.blocks)
            for (const RootRecord& root : block.roots)
                if (root.kind == RootKind::thread_object && node_of(root.id) != kNoNode)
                    threads.emplace(root.thread_serial, node_of(root.id));
        bool sticky = false;
        std::uint64_t missing = 0;
        for (const EdgeBlock& block : parts_.blocks)
            for (const RootRecord& root : block.roots) {
                sticky |= root.kind == RootKind::sticky_class;
                NodeId node = node_of(root.id);
                if (node == kNoNode) {
                    ++missing;
                    continue;
                }
                auto thread = thread_local_kind(root.kind) ? threads.find(root.thread_serial) : threads.end();
                bool global = thread == threads.end();
                if (!global) {
                    thread_edges_.push_back({thread->second, node});
                    ++out_.offsets[thread->second + 1];
                }
                input_.roots.push_back({node, static_cast<std::uint8_t>(root.kind), global});
            }
        if (!sticky) add_system_class_roots();
        warn_if("roots_to_missing_objects", missing,
                "GC root records name objects the dump does not contain: they were skipped");
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

    // ---- 6. edges ------------------------------------------------------------------------

    void fill_edges() {
        for (std::size_t v = 0; v + 1 < out_.offsets.size(); ++v) out_.offsets[v + 1] += out_.offsets[v];
        out_.targets.assign(out_.offsets.back(), 0);
        for_each_block(parts_.blocks.size(), [&](std::size_t b) { scatter_block(parts_.blocks[b]); });
        for (const ClassDump& c : parts_.classes) {
            std::uint64_t at = out_.offsets[node_of(c.class_id)];
            class_edges(c, [&](NodeId to) {
                if (to != kNoNode) out_.targets[at++] = to;
            });
        }
        // A thread's locals go at the end of its row, in root-record order.
        std::unordered_map<NodeId, std::uint64_t> count, taken;
        for (const graph::Edge& e : thread_edges_) ++count[e.from];
        for (const graph::Edge& e : thread_edges_)
            out_.targets[out_.offsets[e.from + 1] - count[e.from] + taken[e.from]++] = e.to;
        name_fields();
        find_weak_edges();
        parts_.blocks = {};
        warn_if("dangling_references", dangling_ + dangling_statics_,
                "references to objects the dump does not contain were skipped: retained sizes may be low");
        warn_if("unnamed_classes", unnamed_classes_, "classes with no LOAD CLASS name record");
        warn_if("arrays_without_class_dump", arrays_without_class_dump_,
                "array classes with no CLASS DUMP: their arrays have no class edge");
    }

    void scatter_block(const EdgeBlock& block) {
        BlockReader reader(block);
        BlockReader::Entry e;
        while (reader.next(e)) {
            NodeId v = node_of(e.address);
            std::uint64_t at = out_.offsets[v];
            NodeId class_node = input_.classes[input_.class_index[v]].node;
            if (class_node != kNoNode) out_.targets[at++] = class_node;
            for (std::uint32_t r = 0; r < e.ref_count; ++r) {
                NodeId to = node_of(reader.next_ref(e));
                if (to != kNoNode) out_.targets[at++] = to;
            }
        }
    }

    // ---- 7. field names and weak edges --------------------------------------------------

    std::string string_of(ObjectId id) const {
        auto text = parts_.strings.find(id);
        return text == parts_.strings.end() ? std::string() : std::string(text->second);
    }

    void name_fields() {
        graph::FieldNames& names = field_names_;
        names.instance_fields.resize(input_.classes.size());
        names.class_edges.resize(input_.classes.size());
        for (std::uint32_t i = 0; i < parts_.classes.size(); ++i) {
            const ClassDump& c = parts_.classes[i];
            ClassLayout layout = make_layout(by_id_, c.class_id, info_.id_size);
            for (ObjectId name : layout.ref_names) names.instance_fields[i].push_back(string_of(name));
            // In class_edges' order, only the edges that made it into the row.
            auto& edges = names.class_edges[i];
            if (input_.classes[class_of_classes_].node != kNoNode) edges.push_back("<class>");
            if (node_of(c.super_id) != kNoNode) edges.push_back("<super>");
            if (node_of(c.loader_id) != kNoNode) edges.push_back("<classloader>");
            for (const StaticField& field : c.statics)
                if (field.type == 2 && node_of(field.value) != kNoNode) edges.push_back(string_of(field.name_id));
        }
    }

    // Per class dump: the index of `referent` among the reference fields, for subclasses of
    // java.lang.ref.Reference (the last field so named: Reference's own come last).
    std::vector<std::int32_t> referent_fields() const {
        std::vector<std::int32_t> referent(parts_.classes.size(), -1);
        for (std::uint32_t i = 0; i < parts_.classes.size(); ++i) {
            bool reference = false;
            std::size_t depth = 0;
            for (ObjectId c = parts_.classes[i].class_id; c != 0 && !reference && depth++ <= by_id_.size();) {
                reference = raw_class_name(c) == "java.lang.ref.Reference";
                auto dump = by_id_.find(c);
                c = dump == by_id_.end() ? 0 : dump->second->super_id;
            }
            if (!reference) continue;
            const auto& fields = field_names_.instance_fields[i];
            for (std::size_t f = 0; f < fields.size(); ++f)
                if (fields[f] == "referent") referent[i] = static_cast<std::int32_t>(f);
        }
        return referent;
    }

    void find_weak_edges() {
        std::vector<std::int32_t> referent = referent_fields();
        std::vector<ClassLayout> layouts(parts_.classes.size());
        for (std::size_t i = 0; i < layouts.size(); ++i)
            if (referent[i] >= 0) layouts[i] = make_layout(by_id_, parts_.classes[i].class_id, info_.id_size);
        std::vector<std::vector<graph::Edge>> found(parts_.blocks.size());
        std::atomic<std::uint64_t> unread = 0;
        for_each_block(parts_.blocks.size(), [&](std::size_t b) {
            BlockReader reader(parts_.blocks[b]);
            BlockReader::Entry e;
            while (reader.next(e)) {
                for (std::uint32_t r = 0; r < e.ref_count; ++r) reader.next_ref(e);
                if (e.kind != ObjectKind::instance || e.class_ordinal == 0 || referent[e.class_ordinal - 1] < 0) continue;
                std::uint32_t c = e.class_ordinal - 1;
                std::optional<ObjectId> value = read_referent(e, c, layouts[c], static_cast<std::uint32_t>(referent[c]));
                if (!value) ++unread;
                else if (NodeId to = node_of(*value); to != kNoNode) found[b].push_back({node_of(e.address), to});
            }
        });
        for (const ClassDump& c : parts_.classes)
            if (raw_class_name(c.class_id) == "java.lang.ref.Finalizer")
                for (const StaticField& field : c.statics)
                    if (field.type == 2 && string_of(field.name_id) == "unfinalized" && node_of(field.value) != kNoNode)
                        weak_edges_.push_back({node_of(c.class_id), node_of(field.value)});
        for (auto& block : found) weak_edges_.insert(weak_edges_.end(), block.begin(), block.end());
        std::sort(weak_edges_.begin(), weak_edges_.end(), [](const graph::Edge& a, const graph::Edge& b) {
            return a.from != b.from ? a.from < b.from : a.to < b.to;
        });
        warn_if("referents_unread", unread,
                "Reference objects whose referent could not be read back from the file (a record split "
                "across segments): leak-suspect paths may run through their referents");
    }

    // The INSTANCE DUMP at the entry's offset: tag, id, stack serial (u4), class id, length
    // (u4), field bytes. nullopt when the bytes there are not that record.
    std::optional<ObjectId> read_referent(const BlockReader::Entry& e, std::uint32_t class_dump, const ClassLayout& layout,
                                          std::uint32_t field) const {
        const std::uint32_t id = info_.id_size;
        const std::uint64_t header = 1 + id + 4 + id + 4;
        const Bytes& file = parts_.file;
        if (file.empty() || e.file_offset + header > file.size() || file[e.file_offset] != 0x21) return std::nullopt;
        auto read = [&](std::uint64_t at, std::uint32_t bytes) {
            std::uint64_t v = 0;
            for (std::uint32_t k = 0; k < bytes; ++k) v = v << 8 | file[at + k];
            return v;
        };
        if (read(e.file_offset + 1, id) != e.address) return std::nullopt;
        if (read(e.file_offset + 1 + id + 4, id) != parts_.classes[class_dump].class_id) return std::nullopt;
        std::uint64_t length = read(e.file_offset + 1 + id + 4 + id, 4);
        if (length != layout.data_bytes || field >= layout.ref_offsets.size() ||
            e.file_offset + header + length > file.size())
            return std::nullopt;
        return read(e.file_offset + header + layout.ref_offsets[field], id);
    }

    void warn_if(std::string code, std::uint64_t count, std::string message) {
        if (count) warnings_.push_back({std::move(code), count, std::move(message)});
    }

    HprofParts& parts_;
    DumpInfo& info_;
    AddressIndex index_;
    std::unordered_map<ObjectId, const ClassDump*> by_id_;
    std::vector<ObjectId> addresses_;
    graph::HeapInput input_;
    graph::Csr out_;
    SizeModel model_;
    std::map<std::string, std::uint32_t> by_name_;
    std::unordered_map<ObjectId, std::uint32_t> unknown_class_index_;
    std::uint32_t primitive_class_[12] = {};
    std::uint32_t class_of_classes_ = 0;
    std::vector<graph::Edge> thread_edges_;
    std::vector<graph::Edge> weak_edges_;
    graph::FieldNames field_names_;
    std::vector<Warning> warnings_;
    std::uint64_t dangling_ = 0, dangling_statics_ = 0, unnamed_classes_ = 0, arrays_without_class_dump_ = 0;
};

}  // namespace

LoadedDump build_hprof_graph(HprofParts& parts, DumpInfo& info, const LoadOptions&) {
    return Builder(parts, info).build();
}

}  // namespace heapgraph
