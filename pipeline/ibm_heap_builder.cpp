// IBM dump records -> heap graph. PHD and classic text record objects, classes and
// references, but no class loaders and no GC roots. Steps:
//   1. nodes (objects and class records) get ids in address order;
//   2. class records become classes, names in Java form; arrays get "<element>[]" classes;
//   3. class loaders as OpenJ9 DTFJ assigns them (PHDJavaRuntime.findLoaders): loader objects
//      are instances of ClassLoader subclasses; a class belongs to the loader object its record
//      references (the first object reference, or the last when the heap holds
//      java/lang/Class objects away from class records); the loader that defines
//      java/lang/Class or its own class, with at least 5 java/lang classes, is the bootstrap
//      loader and takes every class left over. A javacore, when given, moves the classes it
//      lists to their loaders;
//   4. edges as for HPROF (instance -> class, the record's references, class -> super and its
//      listed references) plus, as in MAT's DTFJ model, loader <-> each class it defines;
//   5. roots as Eclipse MAT makes them for a PHD: the bootstrap loader and its classes
//      (system_class), every object nothing else references (unreferenced), and the live
//      thread objects a javacore names (thread_object). docs/heap-graph.md has the sources.
#include "ibm_heap_builder.h"

#include <iterator>
#include <map>
#include <unordered_set>

#include "address_index.h"
#include "mapped_file.h"

namespace heapgraph {

namespace {

std::uint64_t align8(std::uint64_t bytes) { return (bytes + 7) / 8 * 8; }

constexpr std::uint8_t kSystemClassRoot = 0, kUnreferencedRoot = 1, kThreadRoot = 2;

class IbmHeapBuilder {
public:
    IbmHeapBuilder(IbmHeap heap, DumpInfo& info) : heap_(std::move(heap)), runs_(heap_.runs), info_(info) {}

    LoadedDump build() {
        index_nodes();
        make_classes();
        assign_loaders();
        fill_nodes();
        link_loaders();
        add_roots();
        LoadedDump loaded;
        loaded.addresses = index_->addresses();
        loaded.graph = graph::build_heap_graph(std::move(input_));
        loaded.warnings = warnings();
        return loaded;
    }

private:
    std::vector<Warning> warnings() const {
        std::vector<Warning> out;
        if (class_refs_dropped_)
            out.push_back({"phd_class_refs_dropped", class_refs_dropped_,
                           "J9 writes an object's class as its first reference: dropped, as DTFJ does"});
        if (threads_missing_)
            out.push_back({"javacore_threads_missing", threads_missing_,
                           "javacore thread objects the dump does not contain: not made roots"});
        if (dangling_)
            out.push_back({"dangling_references", dangling_,
                           "references to objects the dump does not contain were skipped: retained sizes may be low"});
        return out;
    }

    void index_nodes() {
        AddressIndex::Range range;
        for (const PhdRecords& r : runs_) {
            for (const PhdObject& o : r.objects) range.add(o.address);
            for (const PhdClass& c : r.classes) range.add(c.address);
            class_refs_dropped_ += r.class_refs_dropped;
            for (std::size_t k = 0; k < static_cast<std::size_t>(PhdRecordKind::count_); ++k)
                if (r.counts_by_kind[k]) info_.sub_records[phd_record_name(static_cast<PhdRecordKind>(k))] += r.counts_by_kind[k];
        }
        index_ = std::make_unique<AddressIndex>(range);
        for (const PhdRecords& r : runs_) {
            for (const PhdObject& o : r.objects) insert(o.address, o.file_offset);
            for (const PhdClass& c : r.classes) insert(c.address, c.file_offset);
        }
        index_->finish();
        const std::size_t n = index_->size();
        input_.kind.assign(n, graph::NodeKind::instance);
        input_.class_index.assign(n, 0);
        input_.shallow_bytes.assign(n, 0);
    }

    void insert(ObjectId address, std::uint64_t offset) {
        if (address == 0)  // 0 is null: such an object could never be referenced (fuzz finding)
            throw DumpError(info_.path, {offset, heap_.record_name, "places an object at address 0, which is null"});
        if (!index_->insert(address))
            throw DumpError(info_.path, {offset, heap_.record_name, "dumps object " + hex_offset(address) +
                                                                   " a second time: one address cannot hold two objects"});
    }

    graph::NodeId node_of(ObjectId address) const {
        std::uint32_t node = address ? index_->node_of(address) : AddressIndex::kMissing;
        return node == AddressIndex::kMissing ? graph::kNoNode : node;
    }

    std::uint32_t class_named(const std::string& name, graph::NodeId loader = graph::kNoNode) {
        auto found = by_name_.find(name);
        if (found != by_name_.end()) return found->second;
        input_.classes.push_back({name, graph::kNoNode, loader});
        return by_name_[name] = static_cast<std::uint32_t>(input_.classes.size() - 1);
    }

    std::optional<std::uint32_t> record_named(const std::string& java_name) const {
        auto found = by_name_.find(java_name);
        if (found == by_name_.end() || found->second >= records_.size()) return std::nullopt;
        return found->second;
    }

    // Class records come first in input_.classes, in file order: index i is records_[i].
    void make_classes() {
        for (const PhdRecords& r : runs_)
            for (const PhdClass& c : r.classes) {
                std::uint32_t index = static_cast<std::uint32_t>(input_.classes.size());
                input_.classes.push_back({java_class_name(c.name), node_of(c.address), graph::kNoNode});
                by_name_.emplace(input_.classes.back().name, index);
                by_address_.emplace(c.address, index);
                records_.push_back(&c);
            }
        class_of_classes_ = class_named("java.lang.Class");
    }

    // ---- step 3: class loaders ---------------------------------------------------------

    // DTFJ: a class whose super chain reaches java/lang/ClassLoader, or that has no super
    // class and a name ending "ClassLoader" (old Java 5 dumps lack super classes).
    std::vector<std::uint8_t> find_loader_classes() const {
        std::vector<std::uint8_t> is_loader = extends_class_loader();
        for (std::uint32_t i = 0; i < records_.size(); ++i) {
            const PhdClass& c = *records_[i];
            if (!by_address_.count(c.super_address) && !c.name.starts_with('[') && c.name.ends_with("ClassLoader"))
                is_loader[i] = 1;
        }
        return is_loader;
    }

    // Whether each class record's super chain (itself included) reaches java/lang/ClassLoader.
    // Each chain is walked once up to a class already decided, so a chain of n classes costs n
    // steps, not n^2 / 2; a cycle of supers (a damaged dump) ends the walk too.
    std::vector<std::uint8_t> extends_class_loader() const {
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
                auto super = by_address_.find(records_[j]->super_address);
                if (super == by_address_.end()) break;
                j = super->second;
            }
            std::uint8_t answer = state[j] == kYes ? kYes : kNo;  // kOnPath: a cycle without the base
            for (std::uint32_t k : path) state[k] = answer;
            path.clear();
        }
        std::vector<std::uint8_t> is_loader(records_.size());
        for (std::uint32_t i = 0; i < records_.size(); ++i) is_loader[i] = state[i] == kYes;
        return is_loader;
    }

    // Loader objects (and their classes), the objects a javacore names as loaders, and how
    // many java/lang/Class objects sit away from class records.
    std::uint64_t find_loader_objects(const std::vector<std::uint8_t>& is_loader_class,
                                      const std::unordered_set<ObjectId>& javacore_objects) {
        std::optional<std::uint32_t> jlc = record_named("java.lang.Class");
        std::uint64_t on_heap_classes = 0;
        for (const PhdRecords& r : runs_)
            for (const PhdObject& o : r.objects) {
                if (o.kind != ObjectKind::instance) continue;
                auto cls = by_address_.find(o.class_address);
                if (cls == by_address_.end()) continue;
                if (cls->second < records_.size() && is_loader_class[cls->second]) loaders_[o.address] = cls->second;
                else if (javacore_objects.count(o.address)) javacore_loader_class_[o.address] = cls->second;
                if (jlc && cls->second == *jlc && !by_address_.count(o.address)) ++on_heap_classes;
            }
        return on_heap_classes;
    }

    // The loader object a class record names: its first object reference, or its last one
    // when `use_first` is false. References to class records are class references, skipped.
    ObjectId loader_named_by(const PhdClass& c, bool use_first) const {
        ObjectId best = 0;
        for (ObjectId ref : c.static_refs) {
            if (by_address_.count(ref)) continue;
            if (loaders_.count(ref) && (!best || !use_first)) best = ref;
            if (use_first && !c.name.starts_with('[')) break;
        }
        return best;
    }

    void assign_loaders() {
        std::unordered_set<ObjectId> javacore_objects;
        if (heap_.javacore)
            for (const Javacore::Loader& l : heap_.javacore->loaders)
                if (l.object) javacore_objects.insert(l.object);
        const bool use_first = find_loader_objects(find_loader_classes(), javacore_objects) == 0;
        std::optional<std::uint32_t> jlc = record_named("java.lang.Class");
        loader_of_.assign(records_.size(), 0);
        std::uint64_t boot_java_lang = 0;
        for (std::uint32_t i = 0; i < records_.size(); ++i) {
            ObjectId loader = loader_named_by(*records_[i], use_first);
            if (!loader) continue;
            loader_of_[i] = loader;
            if (!boot_ && (i == jlc || i == loaders_.at(loader))) boot_ = loader;
            if (boot_ == loader && input_.classes[i].name.starts_with("java.lang.")) ++boot_java_lang;
        }
        if (boot_java_lang < 5) boot_.reset();
        if (heap_.javacore) apply_javacore(*heap_.javacore, jlc);
        for (std::uint32_t i = 0; i < records_.size(); ++i)
            if (!bootstrap(i)) input_.classes[i].loader = node_of(loader_of_[i]);
    }

    bool bootstrap(std::uint32_t record) const {
        return !loader_of_[record] || (boot_ && loader_of_[record] == *boot_);
    }

    // DTFJ moves the classes a javacore lists under a loader to that loader (found by address,
    // else by a unique name: J9 javacores give J9Class addresses), and takes the loader that
    // lists java/lang/Class or its own class as the bootstrap loader.
    void apply_javacore(const Javacore& core, std::optional<std::uint32_t> jlc) {
        std::map<std::string_view, std::int64_t> by_raw_name;  // -1: not unique
        for (std::uint32_t i = 0; i < records_.size(); ++i) {
            auto [it, fresh] = by_raw_name.emplace(records_[i]->name, i);
            if (!fresh) it->second = -1;
        }
        for (const Javacore::Loader& loader : core.loaders) {
            std::optional<std::uint32_t> loader_class = class_of_loader(loader.object);
            if (!loader_class) continue;
            for (const Javacore::Class& listed : loader.classes) {
                auto at = by_address_.find(listed.address);
                std::int64_t record = -1;
                if (at != by_address_.end() && at->second < records_.size()) record = at->second;
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

    std::optional<std::uint32_t> class_of_loader(ObjectId object) {
        if (!object) return std::nullopt;
        if (auto known = loaders_.find(object); known != loaders_.end()) return known->second;
        auto named = javacore_loader_class_.find(object);
        if (named == javacore_loader_class_.end()) return std::nullopt;
        loaders_[object] = named->second;
        return named->second;
    }

    // ---- step 4: nodes and edges -------------------------------------------------------

    // Object arrays name their element class: the array class is "<element>[]", loaded by
    // the element's loader.
    std::uint32_t class_of(const PhdObject& o) {
        if (o.kind == ObjectKind::primitive_array)
            return class_named(std::string(basic_type_java_name(static_cast<BasicType>(o.element_type))) + "[]");
        auto found = by_address_.find(o.class_address);
        if (found == by_address_.end()) {
            auto named = heap_.classes_without_records.find(o.class_address);
            if (named != heap_.classes_without_records.end())
                return class_named(java_class_name(named->second) + (o.kind == ObjectKind::object_array ? "[]" : ""));
            std::string name = "<unknown class " + hex_offset(o.class_address) + ">";
            return class_named(o.kind == ObjectKind::object_array ? name + "[]" : name);
        }
        if (o.kind == ObjectKind::object_array)
            return class_named(input_.classes[found->second].name + "[]", input_.classes[found->second].loader);
        return found->second;
    }

    // Instances: the class record's size (header included), rounded to the heap's 8-byte
    // object alignment (a 20-byte J9 instance takes 24: its neighbour starts 24 bytes on, and
    // MAT's asserted figures count 24). Arrays: the v6 record's size, or an estimate of J9's
    // layout (16-byte header, word-sized references) for older versions.
    std::uint64_t shallow(const PhdObject& o, std::uint32_t class_index) const {
        if (o.instance_size) return o.instance_size;
        if (o.kind == ObjectKind::instance)
            return class_index < records_.size() ? align8(records_[class_index]->instance_size) : 0;
        std::uint64_t element = o.kind == ObjectKind::object_array ? heap_.word_bytes
                                                                   : basic_type_size(o.element_type, 8);
        return align8(16 + o.length * element);
    }

    // The decoders hold each object below kMaxJavaObjectBytes; the total is what could still
    // wrap the sums made over it later (formats.h).
    void set_shallow(graph::NodeId v, std::uint64_t bytes, std::uint64_t file_offset) {
        if (!add_heap_bytes(heap_bytes_, bytes))
            throw DumpError(info_.path, {file_offset, heap_.record_name,
                                         "takes the heap's objects past 2^63 bytes, more than any heap can hold"});
        input_.shallow_bytes[v] = bytes;
    }

    void edge(graph::NodeId from, ObjectId to) {
        graph::NodeId node = node_of(to);
        if (node == graph::kNoNode) {
            ++dangling_;
            return;
        }
        input_.edges.push_back({from, node});
    }

    void fill_nodes() {
        for (const PhdRecords& r : runs_) {
            for (const PhdClass& c : r.classes) fill_class(c);
            for (const PhdObject& o : r.objects) fill_object(r, o);
        }
    }

    void fill_class(const PhdClass& c) {
        graph::NodeId v = node_of(c.address);
        input_.kind[v] = graph::NodeKind::class_object;
        input_.class_index[v] = class_of_classes_;
        set_shallow(v, c.class_bytes, c.file_offset);
        if (input_.classes[class_of_classes_].node != graph::kNoNode) input_.edges.push_back({v, input_.classes[class_of_classes_].node});
        if (c.super_address) edge(v, c.super_address);
        for (ObjectId ref : c.static_refs) edge(v, ref);
    }

    void fill_object(const PhdRecords& r, const PhdObject& o) {
        graph::NodeId v = node_of(o.address);
        std::uint32_t class_index = class_of(o);
        input_.kind[v] = o.kind == ObjectKind::instance       ? graph::NodeKind::instance
                         : o.kind == ObjectKind::object_array ? graph::NodeKind::object_array
                                                              : graph::NodeKind::primitive_array;
        input_.class_index[v] = class_index;
        set_shallow(v, shallow(o, class_index), o.file_offset);
        graph::NodeId class_node = input_.classes[class_index].node;
        if (class_node != graph::kNoNode) input_.edges.push_back({v, class_node});
        for (std::uint64_t i = o.first_ref; i < o.first_ref + o.ref_count; ++i) edge(v, r.refs[i]);
    }

    ObjectId effective_loader(std::uint32_t record) const {
        return loader_of_[record] ? loader_of_[record] : boot_.value_or(0);
    }

    // MAT's DTFJ model: a loader references every class it defines, and each class its loader.
    // Edges the records already hold are not added twice (a classic dump we wrote has them).
    void link_loaders() {
        std::unordered_set<std::uint64_t> held;
        auto key = [](graph::NodeId from, graph::NodeId to) { return std::uint64_t{from} << 32 | to; };
        std::vector<std::uint8_t> involved(input_.kind.size(), 0);
        for (const auto& [object, cls] : loaders_)
            if (node_of(object) != graph::kNoNode) involved[node_of(object)] = 1;
        for (std::uint32_t i = 0; i < records_.size(); ++i) involved[input_.classes[i].node] = 1;
        for (const graph::Edge& e : input_.edges)
            if (involved[e.from]) held.insert(key(e.from, e.to));
        for (std::uint32_t i = 0; i < records_.size(); ++i) {
            graph::NodeId loader = node_of(effective_loader(i)), cls = input_.classes[i].node;
            if (loader == graph::kNoNode) continue;
            if (!held.count(key(loader, cls))) input_.edges.push_back({loader, cls});
            if (!held.count(key(cls, loader))) input_.edges.push_back({cls, loader});
        }
    }

    // ---- step 5: roots -----------------------------------------------------------------

    void add_roots() {
        input_.root_kind_names = {"system_class", "unreferenced", "thread_object"};
        std::vector<std::uint8_t> rooted(input_.kind.size(), 0);
        auto root = [&](graph::NodeId v, std::uint8_t kind) {
            if (v == graph::kNoNode || rooted[v]) return;
            rooted[v] = 1;
            input_.roots.push_back({v, kind, true});
        };
        if (boot_) root(node_of(*boot_), kSystemClassRoot);
        for (std::uint32_t i = 0; i < records_.size(); ++i)
            if (bootstrap(i)) root(input_.classes[i].node, kSystemClassRoot);
        if (heap_.javacore)
            for (ObjectId thread : heap_.javacore->thread_objects) {
                if (node_of(thread) == graph::kNoNode) ++threads_missing_;
                root(node_of(thread), kThreadRoot);
            }
        std::vector<std::uint8_t> referenced(input_.kind.size(), 0);
        for (const graph::Edge& e : input_.edges)
            if (e.from != e.to) referenced[e.to] = 1;
        for (graph::NodeId v = 0; v < input_.kind.size(); ++v)
            if (!referenced[v]) root(v, kUnreferencedRoot);
    }

    IbmHeap heap_;
    std::vector<PhdRecords>& runs_;
    DumpInfo& info_;
    std::unique_ptr<AddressIndex> index_;
    graph::HeapInput input_;
    std::map<std::string, std::uint32_t> by_name_;
    std::unordered_map<ObjectId, std::uint32_t> by_address_;
    std::vector<const PhdClass*> records_;
    std::unordered_map<ObjectId, std::uint32_t> loaders_;  // loader object -> its class record
    std::unordered_map<ObjectId, std::uint32_t> javacore_loader_class_;
    std::vector<ObjectId> loader_of_;  // per class record; 0: none found
    std::optional<ObjectId> boot_;     // the bootstrap loader's object, when one is found
    std::uint32_t class_of_classes_ = 0;
    std::uint64_t class_refs_dropped_ = 0, dangling_ = 0, threads_missing_ = 0;
    std::uint64_t heap_bytes_ = 0;  // shallow sizes so far
};

}  // namespace

LoadedDump build_ibm_heap(IbmHeap heap, DumpInfo& info) {
    info.roots_inferred = true;
    return IbmHeapBuilder(std::move(heap), info).build();
}

std::optional<Javacore> read_javacore_option(const LoadOptions& options, const DumpInfo&) {
    if (options.javacore.empty()) return std::nullopt;
    // Opened as a dump is: a FIFO, a directory or a missing file is one line naming it.
    return read_javacore(read_regular_file(options.javacore, "--javacore "));
}

}  // namespace heapgraph
