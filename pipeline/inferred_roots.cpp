// Class loaders and GC roots for dumps that record neither (PHD, classic text):
//   1. class loaders as OpenJ9 DTFJ assigns them (PHDJavaRuntime.findLoaders): loader objects
//      are instances of ClassLoader subclasses; a class belongs to the loader object its record
//      references (the first object reference, or the last when the heap holds
//      java/lang/Class objects away from class records); the loader that defines
//      java/lang/Class or its own class, with at least 5 java/lang classes, is the bootstrap
//      loader and takes every class left over. A javacore, when given, moves the classes it
//      lists to their loaders;
//   2. edges as in MAT's DTFJ model: loader <-> each class it defines;
//   3. roots as Eclipse MAT makes them for a PHD: the bootstrap loader and its classes
//      (system_class), every object nothing else references (unreferenced), and the live
//      thread objects a javacore names (thread_object). docs/heap-graph.md has the sources.
#include "inferred_roots.h"

#include <algorithm>
#include <map>

namespace heapgraph {

namespace {

constexpr std::uint8_t kSystemClassRoot = 0, kUnreferencedRoot = 1, kThreadRoot = 2;

}  // namespace

InferredLoaders::InferredLoaders(const InferredParts& parts, BuiltHeap heap,
                                 const std::unordered_map<ObjectId, std::uint32_t>& records)
    : parts_(parts), heap_(heap), records_(heap.parts.classes), by_address_(records) {}

std::optional<std::uint32_t> InferredLoaders::record_at(ObjectId address) const {
    auto found = by_address_.find(address);
    return found == by_address_.end() ? std::nullopt : std::optional<std::uint32_t>(found->second);
}

std::optional<std::uint32_t> InferredLoaders::record_named(const std::string& java_name) const {
    const auto& classes = heap_.input.classes;
    for (std::uint32_t i = 0; i < records_.size(); ++i)  // the first class of that name, as a map by name keeps it
        if (classes[i].name == java_name) return i;
    return std::nullopt;
}

std::span<const ObjectId> InferredLoaders::statics(std::uint32_t record) const {
    const HeapClass& c = records_[record];
    return std::span<const ObjectId>(c.refs).subspan(c.super_id ? 1 : 0);
}

// ---- 1. class loaders ------------------------------------------------------------------

// DTFJ: a class whose super chain reaches java/lang/ClassLoader, or that has no super
// class and a name ending "ClassLoader" (old Java 5 dumps lack super classes).
std::vector<std::uint8_t> InferredLoaders::find_loader_classes() const {
    std::vector<std::uint8_t> is_loader = extends_class_loader();
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
        const std::string& name = parts_.raw_names[i];
        if (!by_address_.count(records_[i].super_id) && !name.starts_with('[') && name.ends_with("ClassLoader"))
            is_loader[i] = 1;
    }
    return is_loader;
}

// Whether each class record's super chain (itself included) reaches java/lang/ClassLoader.
// Each chain is walked once up to a class already decided, so a chain of n classes costs n
// steps, not n^2 / 2; a cycle of supers (a damaged dump) ends the walk too.
std::vector<std::uint8_t> InferredLoaders::extends_class_loader() const {
    enum : std::uint8_t { kUnknown, kYes, kNo, kOnPath };
    std::vector<std::uint8_t> state(records_.size(), kUnknown);
    std::optional<std::uint32_t> base = record_named("java.lang.ClassLoader");
    if (base) state[*base] = kYes;
    std::vector<std::uint32_t> path;
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
        std::uint32_t j = i;
        while (state[j] == kUnknown) {
            state[j] = kOnPath;
            path.push_back(j);
            auto super = record_at(records_[j].super_id);
            if (!super) break;
            j = *super;
        }
        std::uint8_t answer = state[j] == kYes ? kYes : kNo;  // kOnPath: a cycle without the base
        for (std::uint32_t k : path) state[k] = answer;
        path.clear();
    }
    std::vector<std::uint8_t> is_loader(records_.size());
    for (std::uint32_t i = 0; i < records_.size(); ++i) is_loader[i] = state[i] == kYes;
    return is_loader;
}

// Loader objects (and their classes and references), the objects a javacore names as
// loaders, and how many java/lang/Class objects sit away from class records.
std::uint64_t InferredLoaders::find_loader_objects(const std::vector<std::uint8_t>& is_loader_class,
                                                   const std::unordered_set<ObjectId>& javacore_objects) {
    std::optional<std::uint32_t> jlc = record_named("java.lang.Class");
    std::uint64_t on_heap_classes = 0;
    for (const EdgeBlock& block : heap_.parts.blocks) {
        BlockReader reader(block);
        BlockReader::Entry e;
        while (reader.next(e)) {
            // A plain index, not an optional: GCC 12 warns falsely on reading the optional below.
            constexpr std::uint32_t kNoRecord = 0xFFFFFFFFu;
            const std::uint32_t cls = e.kind == ObjectKind::instance ? record_at(e.raw_class_id).value_or(kNoRecord) : kNoRecord;
            const bool known = cls != kNoRecord;
            bool loader = known && is_loader_class[cls], named = known && !loader && javacore_objects.count(e.address);
            std::vector<ObjectId>* refs = loader || named ? &loader_refs_[e.address] : nullptr;
            for (std::uint32_t r = 0; r < e.ref_count; ++r) {
                ObjectId ref = reader.next_ref(e);
                if (refs) refs->push_back(ref);
            }
            if (loader) loaders_[e.address] = cls;
            else if (named) javacore_loader_class_[e.address] = cls;
            if (known && jlc && cls == *jlc && !by_address_.count(e.address)) ++on_heap_classes;
        }
    }
    return on_heap_classes;
}

// The loader object a class record names: its first object reference, or its last one
// when `use_first` is false. References to class records are class references, skipped.
ObjectId InferredLoaders::loader_named_by(std::uint32_t record, bool use_first) const {
    ObjectId best = 0;
    for (ObjectId ref : statics(record)) {
        if (by_address_.count(ref)) continue;
        if (loaders_.count(ref) && (!best || !use_first)) best = ref;
        if (use_first && !parts_.raw_names[record].starts_with('[')) break;
    }
    return best;
}

void InferredLoaders::assign() {
    std::unordered_set<ObjectId> javacore_objects;
    if (parts_.javacore)
        for (const Javacore::Loader& l : parts_.javacore->loaders)
            if (l.object) javacore_objects.insert(l.object);
    const bool use_first = find_loader_objects(find_loader_classes(), javacore_objects) == 0;
    std::optional<std::uint32_t> jlc = record_named("java.lang.Class");
    loader_of_.assign(records_.size(), 0);
    std::uint64_t boot_java_lang = 0;
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
        ObjectId loader = loader_named_by(i, use_first);
        if (!loader) continue;
        loader_of_[i] = loader;
        if (!boot_ && (i == jlc || i == loaders_.at(loader))) boot_ = loader;
        if (boot_ == loader && heap_.input.classes[i].name.starts_with("java.lang.")) ++boot_java_lang;
    }
    if (boot_java_lang < 5) boot_.reset();
    if (parts_.javacore) apply_javacore(*parts_.javacore, jlc);
    for (std::uint32_t i = 0; i < records_.size(); ++i)
        if (!bootstrap(i)) heap_.input.classes[i].loader = heap_.node_of(loader_of_[i]);
}

bool InferredLoaders::bootstrap(std::uint32_t record) const {
    return !loader_of_[record] || (boot_ && loader_of_[record] == *boot_);
}

// DTFJ moves the classes a javacore lists under a loader to that loader (found by address,
// else by a unique name: J9 javacores give J9Class addresses), and takes the loader that
// lists java/lang/Class or its own class as the bootstrap loader.
void InferredLoaders::apply_javacore(const Javacore& core, std::optional<std::uint32_t> jlc) {
    std::map<std::string_view, std::int64_t> by_raw_name;  // -1: not unique
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
        auto [it, fresh] = by_raw_name.emplace(parts_.raw_names[i], i);
        if (!fresh) it->second = -1;
    }
    for (const Javacore::Loader& loader : core.loaders) {
        std::optional<std::uint32_t> loader_class = class_of_loader(loader.object);
        if (!loader_class) continue;
        for (const Javacore::Class& listed : loader.classes) {
            std::optional<std::uint32_t> at = record_at(listed.address);
            std::int64_t record = at ? std::int64_t{*at} : -1;
            if (record < 0) {
                auto named = by_raw_name.find(listed.name);
                if (named != by_raw_name.end()) record = named->second;
            }
            if (record < 0) continue;
            loader_of_[record] = loader.object;
            if (record == loader_class || record == jlc) boot_ = loader.object;
        }
    }
}

std::optional<std::uint32_t> InferredLoaders::class_of_loader(ObjectId object) {
    if (!object) return std::nullopt;
    if (auto known = loaders_.find(object); known != loaders_.end()) return known->second;
    auto named = javacore_loader_class_.find(object);
    if (named == javacore_loader_class_.end()) return std::nullopt;
    loaders_[object] = named->second;
    return named->second;
}

// ---- 2. loader edges -------------------------------------------------------------------

ObjectId InferredLoaders::effective_loader(std::uint32_t record) const {
    return loader_of_[record] ? loader_of_[record] : boot_.value_or(0);
}

// Whether the row of `from` (a loader object or a class record) already holds `to`: its class
// edge or one of its references.
bool InferredLoaders::held(ObjectId from, graph::NodeId to) const {
    const graph::NodeId v = heap_.node_of(from);
    const auto& input = heap_.input;
    if (input.types.kind(v) == graph::NodeKind::class_object) {
        if (input.classes[heap_.class_of_classes].node == to) return true;
        const HeapClass& c = records_[by_address_.at(from)];
        return std::any_of(c.refs.begin(), c.refs.end(), [&](ObjectId ref) { return heap_.node_of(ref) == to; });
    }
    if (input.classes[input.types.class_index(v)].node == to) return true;
    auto refs = loader_refs_.find(from);
    return refs != loader_refs_.end() &&
           std::any_of(refs->second.begin(), refs->second.end(), [&](ObjectId ref) { return heap_.node_of(ref) == to; });
}

void InferredLoaders::link(std::vector<graph::Edge>& extra_edges) {
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
        const ObjectId loader_id = effective_loader(i);
        const graph::NodeId loader = heap_.node_of(loader_id), cls = heap_.input.classes[i].node;
        if (loader == graph::kNoNode) continue;
        if (!held(loader_id, cls)) extra_edges.push_back({loader, cls});
        if (!held(records_[i].id, loader)) extra_edges.push_back({cls, loader});
    }
}

// ---- 3. roots --------------------------------------------------------------------------

void InferredLoaders::add_roots(Warnings& warnings) {
    graph::HeapInput& input = heap_.input;
    input.root_kind_names = {"system_class", "unreferenced", "thread_object"};
    std::vector<std::uint8_t> rooted(input.types.size(), 0);
    auto root = [&](graph::NodeId v, std::uint8_t kind) {
        if (v == graph::kNoNode || rooted[v]) return;
        rooted[v] = 1;
        input.roots.push_back({v, kind, true});
    };
    if (boot_) root(heap_.node_of(*boot_), kSystemClassRoot);
    for (std::uint32_t i = 0; i < records_.size(); ++i)
        if (bootstrap(i)) root(input.classes[i].node, kSystemClassRoot);
    std::uint64_t threads_missing = 0;
    if (parts_.javacore)
        for (ObjectId thread : parts_.javacore->thread_objects) {
            if (heap_.node_of(thread) == graph::kNoNode) ++threads_missing;
            root(heap_.node_of(thread), kThreadRoot);
        }
    std::vector<std::uint8_t> referenced(input.types.size(), 0);
    for (graph::NodeId v = 0; v < input.types.size(); ++v)
        for (graph::NodeId w : heap_.out.of(v))
            if (w != v) referenced[w] = 1;
    for (graph::NodeId v = 0; v < input.types.size(); ++v)
        if (!referenced[v]) root(v, kUnreferencedRoot);
    warnings.add("javacore_threads_missing", threads_missing,
                 "javacore thread objects the dump does not contain: not made roots");
}

}  // namespace heapgraph
