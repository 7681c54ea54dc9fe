// HeapParts -> graph::HeapGraph, in passes over the blocks (parallel where the writes are
// disjoint):
//   1. index: every object and class address goes into the AddressIndex (node ids follow
//      address order); an address dumped twice, or at 0 (null), is an error;
//   2. class table: one class per class record (file order), java.lang.Class, then the
//      classes objects name without a record, in HeapParts::class_keys order; a rootless
//      format's class loaders are worked out first (arrays take their element's loader);
//   3. nodes: kind, class and shallow size (or, for HPROF, array length) of every node, and
//      its out-degree counting every reference (no reference is looked up here);
//   4. sizes: HPROF's size model (hprof_steps.cpp); the heap's total is held below 2^63;
//   5. roots: root records mapped to nodes; a thread's locals hang from its thread object
//      (MAT); with no sticky-class roots, bootstrap classes become roots (MAT). A rootless
//      format links loaders and classes here and infers its roots after step 6;
//   6. edges: prefix sum of degrees, then scatter (implicit edges first, docs/heap-graph.md);
//      edges added by steps 5 (thread locals, loader links) end their rows, in their order;
//      a reference that does not resolve is counted as dangling and leaves a hole, and one
//      pass closes the holes when there are any (each reference is looked up once);
//   7. HPROF: field names per class and the weak edges, for leak-suspect paths.
#include "heap_builder.h"

#include "warning_codes.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "hprof_steps.h"
#include "inferred_roots.h"

namespace heapgraph {

namespace {

using graph::kNoNode;
using graph::NodeId;

graph::NodeKind node_kind(ObjectKind kind) {
    switch (kind) {
        case ObjectKind::instance: return graph::NodeKind::instance;
        case ObjectKind::object_array: return graph::NodeKind::object_array;
        case ObjectKind::primitive_array: return graph::NodeKind::primitive_array;
        case ObjectKind::class_object: break;
    }
    return graph::NodeKind::class_object;
}


class HeapBuilder {
public:
    HeapBuilder(HeapParts& parts, DumpInfo& info) : parts_(parts), info_(info), index_(address_range()) {}

    LoadedDump build() {
        LoadedDump loaded;
        StageClock clock(loaded.timings, parts_.progress);
        clock.start("index");
        index_addresses();
        make_class_table();
        clock.start("nodes");
        fill_nodes();
        if (parts_.hprof) {
            clock.start("size model");
            set_hprof_sizes(view(), *parts_.hprof, info_);
        }
        addresses_ = {};  // the size model's; from here on the index answers
        check_heap_total();
        if (inferred_) inferred_->link(extra_edges_);
        else add_roots();
        clock.start("edges");
        fill_edges();
        if (inferred_) inferred_->add_roots(parts_.warnings);
        if (parts_.hprof) {
            loaded.field_names = hprof_field_names(view(), *parts_.hprof);
            loaded.weak_edges = hprof_weak_edges(view(), *parts_.hprof, parts_.warnings);
        }
        parts_.blocks = {};
        clock.start("transpose");
        loaded.addresses = std::move(index_);
        input_.out = &out_;
        if (parts_.progress)
            input_.progress = [this](std::uint64_t done, std::uint64_t total) {
                parts_.progress({"transpose", done, total, "rows"});
            };
        loaded.graph = graph::build_heap_graph(std::move(input_));
        warn_dangling(loaded.graph.edges);
        loaded.warnings = std::move(parts_.warnings).in_order();
        return loaded;
    }

private:
    // for_each_block with a bar: blocks done of all.
    void blocks_pass(const char* stage, const std::function<void(std::size_t)>& body) {
        std::atomic<std::uint64_t> done = 0;
        const std::uint64_t total = parts_.blocks.size();
        for_each_block(total, [&](std::size_t b) {
            body(b);
            if (parts_.progress) parts_.progress({stage, ++done, total, "blocks"});
        });
    }

    // HotSpot routinely dumps references to objects it leaves out (JDK 6 and 7: 1-17% of
    // the references of the corpus dumps). The count is a summary figure; only a share no
    // complete dump shows is a warning (warning_codes.cpp).
    void warn_dangling(std::uint64_t kept) {
        info_.dangling_references = dangling_;
        if (dangling_ * 5 > kept + dangling_)
            parts_.warnings.add("dangling_references", dangling_,
                                "more than a fifth of the references name objects the dump does not contain: it may be "
                                "damaged or filtered; what those objects held shows as unreachable");
    }

    BuiltHeap view() {
        BuiltHeap heap{info_, parts_, input_, out_, addresses_, index_, class_of_classes_, {}};
        std::copy(std::begin(primitive_class_), std::end(primitive_class_), heap.primitive_class);
        return heap;
    }

    AddressIndex::Range address_range() const {
        AddressIndex::Range range;
        for (const EdgeBlock& block : parts_.blocks) range.merge(block.range);
        for (const HeapClass& c : parts_.classes) range.add(c.id);
        // Past 2^32 objects 32-bit ids would wrap and name the wrong objects: refuse at once.
        if (range.count > parts_.limits.objects)
            throw TooManyObjects(info_.path, "holds " + std::to_string(range.count) + " objects and classes",
                                 parts_.limits.objects);
        return range;
    }

    NodeId node_of(ObjectId address) const {
        NodeId node = address ? index_.node_of(address) : AddressIndex::kMissing;
        return node == AddressIndex::kMissing ? kNoNode : node;
    }

    // ---- 1. index ------------------------------------------------------------------------

    void index_addresses() {
        std::mutex mutex;
        std::vector<ObjectId> duplicates;
        std::optional<std::uint64_t> first_null;  // offset of the first object dumped at 0
        auto note_null = [&](std::uint64_t offset) {
            if (!first_null || offset < *first_null) first_null = offset;
        };
        blocks_pass("index", [&](std::size_t b) {
            each_entry(parts_.blocks[b], [&](const BlockReader::Entry& e) {
                if (e.address == 0) {  // null: such an object could never be referenced (fuzz finding)
                    std::lock_guard lock(mutex);
                    note_null(e.file_offset);
                } else if (!index_.insert(e.address)) {
                    std::lock_guard lock(mutex);
                    duplicates.push_back(e.address);
                }
            });
        });
        for (const HeapClass& c : parts_.classes) {
            if (c.id == 0) note_null(c.file_offset);
            else if (!index_.insert(c.id)) duplicates.push_back(c.id);
        }
        if (first_null) throw DumpError(info_.path, {*first_null, parts_.record_name, parts_.null_address});
        index_.finish();
        if (!duplicates.empty() || index_.sparse_duplicates()) fail_on_duplicate(duplicates);
        if (parts_.hprof) addresses_ = index_.addresses();  // for the size model only
    }

    // Strict: one address dumped twice cannot be one object. Names the lowest such address
    // and the offset of its second record, both independent of thread timing.
    [[noreturn]] void fail_on_duplicate(std::vector<ObjectId> duplicates) const {
        if (duplicates.empty()) {  // sparse index: find them by counting, class ids too (fuzz finding)
            std::map<ObjectId, int> seen;
            auto count = [&](ObjectId id) {
                if (id != 0 && ++seen[id] == 2) duplicates.push_back(id);
            };
            for (const HeapClass& c : parts_.classes) count(c.id);
            for (const EdgeBlock& block : parts_.blocks) each_entry(block, [&](const auto& e) { count(e.address); });
        }
        ObjectId lowest = *std::min_element(duplicates.begin(), duplicates.end());
        std::vector<std::uint64_t> offsets;  // of every record at that address: class or object
        for (const HeapClass& c : parts_.classes)
            if (c.id == lowest) offsets.push_back(c.file_offset);
        for (const EdgeBlock& block : parts_.blocks)
            each_entry(block, [&](const auto& e) {
                if (e.address == lowest) offsets.push_back(e.file_offset);
            });
        std::sort(offsets.begin(), offsets.end());
        throw DumpError(info_.path, {offsets.at(1), parts_.record_name,
                                     "dumps object " + hex_offset(lowest) + " a second time: one address cannot hold two objects"});
    }

    // ---- 2. class table ------------------------------------------------------------------

    std::uint32_t add_class(std::string name, NodeId node, NodeId loader = kNoNode) {
        // A node's type word numbers classes in 30 bits: refuse before an index would wrap.
        if (input_.classes.size() >= parts_.limits.classes)
            throw UnsupportedFormat(info_.path + ": holds more than " + std::to_string(parts_.limits.classes) +
                                    " classes; heapgraph numbers at most that many in one dump (docs/heap-graph.md)");
        input_.classes.push_back({std::move(name), node, loader});
        return static_cast<std::uint32_t>(input_.classes.size() - 1);
    }

    std::uint32_t class_named(const std::string& name, NodeId loader = kNoNode) {
        auto found = by_name_.find(name);
        return found != by_name_.end() ? found->second : (by_name_[name] = add_class(name, kNoNode, loader));
    }

    void make_class_table() {
        for (std::uint32_t i = 0; i < parts_.classes.size(); ++i) {
            const HeapClass& c = parts_.classes[i];
            std::uint32_t index = add_class(c.name, node_of(c.id), node_of(c.loader_id));
            by_name_.emplace(c.name, index);
            records_.emplace(c.id, i);
        }
        // Classic text: a type whose record came after its first object got a stand-in id;
        // the id stands for the first record of that name, here and in the inferred loaders.
        if (parts_.namer)
            for (const auto& [id, name] : parts_.namer->stand_ins())
                if (auto named = by_name_.find(name); named != by_name_.end()) records_.emplace(id, named->second);
        class_of_classes_ = class_named("java.lang.Class");
        if (parts_.inferred) {
            inferred_.emplace(*parts_.inferred, view(), records_);
            inferred_->assign();
        }
        for (const ClassKey& key : parts_.class_keys) add_key_class(key);
        if (parts_.namer) parts_.namer->warn(parts_.warnings);
    }

    void add_key_class(const ClassKey& key) {
        const bool records = parts_.objects_name_records;
        if (key.kind == ObjectKind::primitive_array) {
            primitive_class_[key.id] = class_named(std::string(basic_type_java_name(static_cast<BasicType>(key.id))) + "[]");
            return;
        }
        auto record = records ? records_.find(key.id) : records_.end();
        if (records && key.kind == ObjectKind::object_array) {
            element_class_[key.id] = record != records_.end()
                                         ? class_named(input_.classes[record->second].name + "[]", input_.classes[record->second].loader)
                                         : class_named(parts_.namer->name_of(key.id) + "[]");
        } else if (record != records_.end()) {
            by_id_class_[key.id] = record->second;
        } else if (!by_id_class_.count(key.id)) {
            std::string name = parts_.namer->name_of(key.id);
            by_id_class_[key.id] = records ? class_named(name) : add_class(name, kNoNode);
        }
    }

    std::uint32_t class_of(const BlockReader::Entry& e) const {
        if (e.kind == ObjectKind::primitive_array) return primitive_class_[e.element_type];
        if (e.class_ordinal) return e.class_ordinal - 1;
        if (e.kind == ObjectKind::object_array && parts_.objects_name_records) return element_class_.at(e.raw_class_id);
        return by_id_class_.at(e.raw_class_id);
    }

    // ---- 3. nodes ------------------------------------------------------------------------

    void fill_nodes() {
        const std::size_t n = index_.size();
        input_.types.assign(n, graph::NodeKind::instance, 0);
        input_.shallow_bytes.assign(n, 0);  // HPROF: array lengths until the size model is known
        out_starts_.assign(n + 1, 0);       // degrees at [v + 1] until the prefix sum
        blocks_pass("nodes", [&](std::size_t b) { fill_block_nodes(parts_.blocks[b]); });
        for (const HeapClass& c : parts_.classes) fill_class_node(c);
    }

    // A size the format gave, else the record's instance size (PHD), else (HPROF) the length
    // the size model turns into one.
    std::uint64_t first_size(const BlockReader::Entry& e, std::uint32_t class_index) const {
        if (e.shallow_bytes) return *e.shallow_bytes;
        if (parts_.hprof) return e.length;
        bool record = e.kind == ObjectKind::instance && class_index < parts_.classes.size();
        return record ? parts_.classes[class_index].instance_bytes : 0;
    }

    // A row's room: the class edge and every reference, resolved or not (scatter_block).
    void fill_block_nodes(const EdgeBlock& block) {
        each_entry(block, [&](const BlockReader::Entry& e) {
            NodeId v = node_of(e.address);
            const std::uint32_t c = class_of(e);
            input_.types.set(v, node_kind(e.kind), c);
            input_.shallow_bytes.set(v, first_size(e, c));
            out_starts_[v + 1] = (input_.classes[c].node != kNoNode) + std::uint64_t{e.ref_count};
        });
    }

    // MAT's class edges: its type (java.lang.Class), then the record's references (HPROF:
    // super class, loader, object statics; signers and protection domain are not edges by
    // default in MAT either).
    template <typename Visit>
    void class_edges(const HeapClass& c, Visit visit) const {
        visit(input_.classes[class_of_classes_].node);
        for (ObjectId ref : c.refs) visit(node_of(ref));
    }

    void fill_class_node(const HeapClass& c) {
        NodeId v = node_of(c.id);
        input_.types.set(v, graph::NodeKind::class_object, class_of_classes_);
        input_.shallow_bytes.set(v, c.shallow_bytes);
        std::uint64_t degree = 0;
        class_edges(c, [&](NodeId to) { degree += to != kNoNode; });
        for (std::size_t k = c.links; k < c.refs.size(); ++k) dangling_ += c.refs[k] && node_of(c.refs[k]) == kNoNode;
        out_starts_[v + 1] = degree;
    }

    // ---- 4. sizes ------------------------------------------------------------------------

    // The decoders hold each object below kMaxJavaObjectBytes; the total is what could still
    // wrap the sums made over it later (formats.h).
    void check_heap_total() const {
        const std::uint64_t total = tbb::parallel_reduce(
            tbb::blocked_range<std::size_t>(0, input_.shallow_bytes.size()), std::uint64_t{0},
            [&](const auto& r, std::uint64_t sum) {
                for (std::size_t v = r.begin(); v < r.end(); ++v)
                    if (!add_heap_bytes(sum, input_.shallow_bytes[v])) return kMaxHeapBytes + 1;
                return sum;
            },
            [](std::uint64_t a, std::uint64_t b) { return add_heap_bytes(a, b) ? a : kMaxHeapBytes + 1; });
        if (total > kMaxHeapBytes) fail_on_heap_total();
    }

    // Names the record (class records first, then objects in file order) whose size takes the
    // running total past 2^63.
    [[noreturn]] void fail_on_heap_total() const {
        std::uint64_t total = 0;
        std::optional<std::uint64_t> offset;
        auto add = [&](ObjectId address, std::uint64_t at) {
            if (!add_heap_bytes(total, input_.shallow_bytes[node_of(address)]) && !offset) offset = at;
        };
        for (const HeapClass& c : parts_.classes) add(c.id, c.file_offset);
        for (const EdgeBlock& block : parts_.blocks) each_entry(block, [&](const auto& e) { add(e.address, e.file_offset); });
        throw DumpError(info_.path, {offset.value_or(0), parts_.record_name,
                                     "takes the heap's objects past 2^63 bytes, more than any heap can hold"});
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
                if (!global) extra_edges_.push_back({thread->second, node});
                input_.roots.push_back({node, static_cast<std::uint8_t>(root.kind), global});
            }
        if (!sticky) add_system_class_roots();
        parts_.warnings.add("roots_to_missing_objects", missing,
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
        parts_.warnings.add("system_classes_as_roots", added,
                            "the dump has no sticky-class roots: classes of the bootstrap loader were made roots, as MAT does");
    }

    // ---- 6. edges ------------------------------------------------------------------------

    void fill_edges() {
        for (const graph::Edge& e : extra_edges_) ++out_starts_[e.from + 1];
        graph::sum_degrees(out_starts_);
        out_.targets.assign(out_starts_.back(), 0);
        std::atomic<std::uint64_t> dangling = 0;
        blocks_pass("edges", [&](std::size_t b) { dangling += scatter_block(parts_.blocks[b]); });
        dangling_ += dangling;
        for (const HeapClass& c : parts_.classes) {
            std::uint64_t at = out_starts_[node_of(c.id)];
            class_edges(c, [&](NodeId to) {
                if (to != kNoNode) out_.targets[at++] = to;
            });
        }
        // Edges added by steps end their rows, in the order the steps added them.
        std::unordered_map<NodeId, std::uint64_t> count, taken;
        for (const graph::Edge& e : extra_edges_) ++count[e.from];
        for (const graph::Edge& e : extra_edges_)
            out_.targets[out_starts_[e.from + 1] - count[e.from] + taken[e.from]++] = e.to;
        if (dangling) close_holes();
        out_.set_starts(std::move(out_starts_));
    }

    // Writes each entry's class edge and resolved references at its row's start; the room of
    // its dangling references is left as holes (kNoNode). Returns how many it left.
    std::uint64_t scatter_block(const EdgeBlock& block) {
        std::uint64_t dangling = 0;
        BlockReader reader(block);
        BlockReader::Entry e;
        while (reader.next(e)) {
            NodeId v = node_of(e.address);
            std::uint64_t at = out_starts_[v];
            NodeId class_node = input_.classes[input_.types.class_index(v)].node;
            if (class_node != kNoNode) out_.targets[at++] = class_node;
            const std::uint64_t end = at + e.ref_count;
            for (std::uint32_t r = 0; r < e.ref_count; ++r) {
                NodeId to = node_of(reader.next_ref(e));
                if (to != kNoNode) out_.targets[at++] = to;
            }
            dangling += end - at;
            std::fill(out_.targets.begin() + at, out_.targets.begin() + end, kNoNode);
        }
        return dangling;
    }

    // Moves every row down over the holes dangling references left, in one pass.
    void close_holes() {
        graph::Column<NodeId>& targets = out_.targets;
        const std::size_t n = out_starts_.size() - 1;
        std::uint64_t kept = 0;
        for (std::size_t v = 0; v < n; ++v) {
            const std::uint64_t first = out_starts_[v], last = out_starts_[v + 1];
            out_starts_[v] = kept;
            for (std::uint64_t i = first; i < last; ++i)
                if (targets[i] != kNoNode) targets[kept++] = targets[i];
        }
        out_starts_[n] = kept;
        targets.resize(kept);
        targets.shrink_to_fit();
    }

    HeapParts& parts_;
    DumpInfo& info_;
    AddressIndex index_;
    graph::Column<ObjectId> addresses_;
    graph::HeapInput input_;
    graph::Csr out_;
    graph::Column<std::uint64_t> out_starts_;  // out_'s row starts while it is built
    std::map<std::string, std::uint32_t> by_name_;
    std::unordered_map<ObjectId, std::uint32_t> records_;  // class record index by id: the first
    std::unordered_map<ObjectId, std::uint32_t> by_id_class_, element_class_;
    std::uint32_t primitive_class_[12] = {};
    std::uint32_t class_of_classes_ = 0;
    std::optional<InferredLoaders> inferred_;
    std::vector<graph::Edge> extra_edges_;
    std::uint64_t dangling_ = 0;
};

}  // namespace

void for_each_block(std::size_t blocks, const std::function<void(std::size_t)>& body) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const auto& r) {
        for (std::size_t b = r.begin(); b < r.end(); ++b) body(b);
    });
}

// A code missing from the registry is a programming error, caught by any test that meets it.
void Warnings::add(std::string code, std::uint64_t count, std::string message) {
    if (warning_rank(code) == warning_codes().size()) throw std::logic_error("warning code '" + code + "' is not registered");
    if (count) found_.push_back({std::move(code), count, std::move(message)});
}

// In the registry's order, whatever step counted them.
std::vector<Warning> Warnings::in_order() && {
    std::stable_sort(found_.begin(), found_.end(),
                     [](const Warning& a, const Warning& b) { return warning_rank(a.code) < warning_rank(b.code); });
    return std::move(found_);
}

LoadedDump build_heap(HeapParts& parts, DumpInfo& info) {
    if (parts.inferred) info.roots_inferred = true;
    return HeapBuilder(parts, info).build();
}

}  // namespace heapgraph
