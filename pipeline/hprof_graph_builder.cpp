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
    Builder(HprofParts& parts, DumpInfo& info)
        : parts_(parts), info_(info), index_(address_range()), layouts_(parts.classes, info.id_size) {}

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

    // The Java name, or "" when the dump gives none.
    std::string raw_class_name(ObjectId class_id) const {
        auto load = parts_.class_names.find(class_id);
        if (load == parts_.class_names.end()) return {};
        auto text = parts_.strings.find(load->second.name_id);
        return text == parts_.strings.end() ? std::string() : java_class_name(utf8_from_modified(text->second));
    }

    // A class the dump gives no usable name is still told apart from the others by its id;
    // each way of having none is counted on its own (warn_unnamed).
    std::string class_name(ObjectId class_id) {
        auto load = parts_.class_names.find(class_id);
        if (load == parts_.class_names.end()) {
            ++unnamed_classes_;
        } else if (auto text = parts_.strings.find(load->second.name_id); text == parts_.strings.end()) {
            name_strings_missing_.note(load->second.record_offset, load->second.name_id);
        } else if (text->second.empty()) {
            empty_names_.note(load->second.record_offset, class_id);
        } else {
            return java_class_name(utf8_from_modified(text->second));
        }
        return "<unnamed class " + hex_offset(class_id) + ">";
    }

    void warn_unnamed() {
        warn_if("unnamed_classes", unnamed_classes_, "classes with no LOAD CLASS name record");
        warn_if("class_name_strings_missing", name_strings_missing_.count,
                "LOAD CLASS records whose name string id has no STRING record (the first: LOAD_CLASS @" +
                    hex_offset(name_strings_missing_.offset) + " names string " + hex_offset(name_strings_missing_.id) +
                    "): their classes are named <unnamed class ID>");
        warn_if("empty_class_names", empty_names_.count,
                "LOAD CLASS records whose name string is empty (the first: LOAD_CLASS @" + hex_offset(empty_names_.offset) +
                    " for class " + hex_offset(empty_names_.id) + "): their classes are named <unnamed class ID>");
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
        std::vector<ObjectId> arrays, unreadable;
        for (const EdgeBlock& block : parts_.blocks) {
            arrays.insert(arrays.end(), block.unknown_classes.begin(), block.unknown_classes.end());
            unreadable.insert(unreadable.end(), block.unreadable_classes.begin(), block.unreadable_classes.end());
            parts_.unreadable_instances += block.unreadable_instances;
        }
        sort_unique(arrays);
        sort_unique(unreadable);
        arrays_without_class_dump_ = arrays.size();
        parts_.unreadable_classes = unreadable.size();
        // Classes with no class dump: of object arrays, and of instances a cut dump lost them for.
        std::erase_if(unreadable, [&](ObjectId id) { return layouts_.index_of(id) != ClassLayout::kNone; });
        arrays.insert(arrays.end(), unreadable.begin(), unreadable.end());
        sort_unique(arrays);
        for (ObjectId id : arrays) unknown_class_index_.emplace(id, add_class(class_name(id), kNoNode));
    }

    static void sort_unique(std::vector<ObjectId>& ids) {
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
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

    // Folded down the super chains: each class's from its super class's, once.
    std::vector<std::uint64_t> instance_sizes(const SizeModel& model) {
        std::vector<std::uint64_t> sizes(input_.classes.size(), 0);
        std::vector<std::uint64_t> ends(parts_.classes.size());
        if (model.packed_fields && injected_.empty()) injected_ = injected_fields();
        for (std::uint32_t i : layouts_.supers_first()) {
            const ClassLayout& layout = layouts_[i];
            std::uint64_t below = layout.super == ClassLayout::kNone ? model.object_header_bytes : ends[layout.super];
            ends[i] = level_end(below, layout.own, model);
            sizes[i] = instance_shallow_bytes(ends[i], model, model.packed_fields ? injected_[i] : ClassLayout::Level{});
        }
        return sizes;
    }

    std::uint64_t node_bytes(NodeId v, const SizeModel& model, const std::vector<std::uint64_t>& sizes) const {
        switch (input_.kind[v]) {
            case graph::NodeKind::instance:
                // An instance with no class dump (a cut dump): its header and field bytes as dumped.
                return input_.class_index[v] < parts_.classes.size()
                           ? sizes[input_.class_index[v]]
                           : instance_shallow_bytes(model.object_header_bytes + input_.shallow_bytes[v], model);
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

    // HotSpot's injected fields of each class and its super classes (JDK 15+ models only:
    // older VMs had fewer, and the dumps we can check show none).
    std::vector<ClassLayout::Level> injected_fields() const {
        std::vector<ClassLayout::Level> total(parts_.classes.size());
        for (std::uint32_t i : layouts_.supers_first()) {
            total[i] = hotspot_injected_fields(raw_class_name(parts_.classes[i].class_id));
            if (std::uint32_t super = layouts_[i].super; super != ClassLayout::kNone) {
                total[i].primitive_bytes += total[super].primitive_bytes;
                total[i].references += total[super].references;
            }
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
        warn_unnamed();
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
        return text == parts_.strings.end() ? std::string() : utf8_from_modified(text->second);
    }

    void name_fields() {
        graph::FieldNames& names = field_names_;
        names.instance_fields.resize(input_.classes.size());
        names.class_edges.resize(input_.classes.size());
        for (std::uint32_t i = 0; i < parts_.classes.size(); ++i) {
            const ClassDump& c = parts_.classes[i];
            const ClassLayout& layout = layouts_[i];
            for (ObjectId name : layout.ref_names) names.instance_fields[i].own.push_back(string_of(name));
            names.instance_fields[i].super = layout.refs_above;
            names.instance_fields[i].total = layout.references;
            // In class_edges' order, only the edges that made it into the row.
            auto& edges = names.class_edges[i];
            if (input_.classes[class_of_classes_].node != kNoNode) edges.push_back("<class>");
            if (node_of(c.super_id) != kNoNode) edges.push_back("<super>");
            if (node_of(c.loader_id) != kNoNode) edges.push_back("<classloader>");
            for (const StaticField& field : c.statics)
                if (field.type == 2 && node_of(field.value) != kNoNode) edges.push_back(string_of(field.name_id));
        }
    }

    // Per class dump, for subclasses of java.lang.ref.Reference: where `referent` lies in an
    // instance's field bytes, counted back from their end (the last field so named: Reference's
    // own come last, and a subclass keeps its super class's). Folded down the super chains.
    std::vector<std::optional<std::uint64_t>> referent_fields() const {
        const std::size_t n = parts_.classes.size();
        std::vector<std::optional<std::uint64_t>> from_end(n);
        std::vector<std::uint8_t> reference(n, 0);
        for (std::uint32_t i : layouts_.supers_first()) {
            const ClassLayout& layout = layouts_[i];
            if (layout.super != ClassLayout::kNone) {
                reference[i] = reference[layout.super];
                from_end[i] = from_end[layout.super];
            }
            reference[i] |= raw_class_name(parts_.classes[i].class_id) == "java.lang.ref.Reference";
            for (std::size_t k = 0; k < layout.ref_names.size() && !from_end[i]; ++k)
                if (string_of(layout.ref_names[layout.ref_names.size() - 1 - k]) == "referent")
                    from_end[i] = layout.data_bytes - layout.ref_offsets[layout.ref_names.size() - 1 - k];
        }
        for (std::size_t i = 0; i < n; ++i)
            if (!reference[i]) from_end[i].reset();
        return from_end;
    }

    void find_weak_edges() {
        std::vector<std::optional<std::uint64_t>> referent = referent_fields();
        std::vector<std::vector<graph::Edge>> found(parts_.blocks.size());
        std::atomic<std::uint64_t> unread = 0;
        for_each_block(parts_.blocks.size(), [&](std::size_t b) {
            BlockReader reader(parts_.blocks[b]);
            BlockReader::Entry e;
            while (reader.next(e)) {
                for (std::uint32_t r = 0; r < e.ref_count; ++r) reader.next_ref(e);
                if (e.kind != ObjectKind::instance || e.class_ordinal == 0 || !referent[e.class_ordinal - 1]) continue;
                std::uint32_t c = e.class_ordinal - 1;
                std::optional<ObjectId> value = read_referent(e, c, *referent[c]);
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
    // (u4), field bytes; the referent lies `from_end` bytes before their end. nullopt when the
    // bytes there are not that record.
    std::optional<ObjectId> read_referent(const BlockReader::Entry& e, std::uint32_t class_dump,
                                          std::uint64_t from_end) const {
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
        if (length != layouts_[class_dump].data_bytes || from_end > length || e.file_offset + header + length > file.size())
            return std::nullopt;
        return read(e.file_offset + header + length - from_end, id);
    }

    void warn_if(std::string code, std::uint64_t count, std::string message) {
        if (count) warnings_.push_back({std::move(code), count, std::move(message)});
    }

    HprofParts& parts_;
    DumpInfo& info_;
    AddressIndex index_;
    ClassLayouts layouts_;
    std::vector<ClassLayout::Level> injected_;  // per class dump, for the packed size models
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
    // LOAD CLASS records that name no usable string: how many, and the first in the file.
    struct FirstOf {
        std::uint64_t count = 0, offset = 0;
        ObjectId id = 0;
        void note(std::uint64_t at, ObjectId what) {
            if (count++ == 0 || at < offset) offset = at, id = what;
        }
    };
    FirstOf name_strings_missing_, empty_names_;
};

}  // namespace

LoadedDump build_hprof_graph(HprofParts& parts, DumpInfo& info, const LoadOptions&) {
    return Builder(parts, info).build();
}

}  // namespace heapgraph
