// PHD -> heap graph:
//   1. header, then one cheap pass that cuts the body into runs carrying the decoder state;
//   2. runs decode in parallel through the HPROF flow graph (ordered_flow.h): results come
//      back in run order, so any thread count agrees;
//   3. nodes (objects and class records) get ids in address order; classes keep their names
//      in Java form; object arrays, which name their element class, are given the array class;
//   4. edges as for HPROF (instance -> class, references, class -> super and its listed refs);
//   5. PHD records no GC roots: as Eclipse MAT does, every class and every object that nothing
//      references becomes a root (docs/heap-graph.md).
#include "phd_loader.h"

#include <fstream>
#include <iterator>
#include <map>

#include "address_index.h"
#include "ordered_flow.h"
#include "take.h"

namespace heapgraph {

namespace {

constexpr std::uint64_t kRunBytes = 4u << 20;

std::uint64_t align8(std::uint64_t bytes) { return (bytes + 7) / 8 * 8; }

class PhdBuilder {
public:
    PhdBuilder(const PhdHeader& header, std::vector<PhdRecords>& runs, DumpInfo& info,
               std::vector<ObjectId> threads)
        : header_(header), runs_(runs), info_(info), threads_(std::move(threads)) {}

    LoadedDump build() {
        index_nodes();
        make_classes();
        fill_nodes();
        add_roots();
        LoadedDump loaded;
        loaded.addresses = index_->addresses();
        loaded.graph = graph::build_heap_graph(std::move(input_));
        if (class_refs_dropped_)
            loaded.warnings.push_back({"phd_class_refs_dropped", class_refs_dropped_,
                                       "J9 writes an object's class as its first reference: dropped, as DTFJ does"});
        if (threads_missing_)
            loaded.warnings.push_back({"javacore_threads_missing", threads_missing_,
                                       "javacore thread objects the dump does not contain: not made roots"});
        if (dangling_)
            loaded.warnings.push_back({"dangling_references", dangling_,
                                       "references to objects the dump does not contain were skipped: retained sizes may be low"});
        return loaded;
    }

private:
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
        if (!index_->insert(address))
            throw DumpError(info_.path, {offset, "PHD record", "dumps object " + hex_offset(address) +
                                                                   " a second time: one address cannot hold two objects"});
    }

    graph::NodeId node_of(ObjectId address) const {
        std::uint32_t node = address ? index_->node_of(address) : AddressIndex::kMissing;
        return node == AddressIndex::kMissing ? graph::kNoNode : node;
    }

    std::uint32_t class_named(const std::string& name) {
        auto found = by_name_.find(name);
        if (found != by_name_.end()) return found->second;
        input_.classes.push_back({name, graph::kNoNode, graph::kNoNode});
        return by_name_[name] = static_cast<std::uint32_t>(input_.classes.size() - 1);
    }

    void make_classes() {
        for (const PhdRecords& r : runs_)
            for (const PhdClass& c : r.classes) {
                std::uint32_t index = static_cast<std::uint32_t>(input_.classes.size());
                input_.classes.push_back({java_class_name(c.name), node_of(c.address), graph::kNoNode});
                by_name_.emplace(input_.classes.back().name, index);
                by_address_.emplace(c.address, index);
            }
        class_of_classes_ = class_named("java.lang.Class");
    }

    // Object arrays name their element class: the array class is "<element>[]".
    std::uint32_t class_of(const PhdObject& o) {
        if (o.kind == ObjectKind::primitive_array)
            return class_named(std::string(basic_type_java_name(static_cast<BasicType>(o.element_type))) + "[]");
        auto found = by_address_.find(o.class_address);
        std::string name = found != by_address_.end() ? input_.classes[found->second].name
                                                      : "<unknown class " + hex_offset(o.class_address) + ">";
        if (o.kind == ObjectKind::object_array) return class_named(name + "[]");
        if (found != by_address_.end()) return found->second;
        return class_named(name);
    }

    // Instances: the class record's size (header included), rounded to the heap's 8-byte
    // object alignment (a 20-byte J9 instance takes 24: its neighbour starts 24 bytes on, and
    // MAT's asserted figures count 24). Arrays: the v6 record's size, or an estimate of J9's
    // layout (16-byte header, word-sized references) for older versions.
    std::uint64_t shallow(const PhdObject& o, std::uint32_t class_index) const {
        if (o.instance_size) return o.instance_size;
        if (o.kind == ObjectKind::instance)
            return class_sizes_.count(class_index) ? align8(class_sizes_.at(class_index)) : 0;
        std::uint64_t element = o.kind == ObjectKind::object_array ? header_.word_bytes()
                                                                   : basic_type_size(o.element_type, 8);
        return align8(16 + o.length * element);
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
        for (const PhdRecords& r : runs_)
            for (const PhdClass& c : r.classes) class_sizes_[by_address_.at(c.address)] = c.instance_size;
        for (const PhdRecords& r : runs_) {
            for (const PhdClass& c : r.classes) fill_class(c);
            for (const PhdObject& o : r.objects) fill_object(r, o);
        }
    }

    void fill_class(const PhdClass& c) {
        graph::NodeId v = node_of(c.address);
        input_.kind[v] = graph::NodeKind::class_object;
        input_.class_index[v] = class_of_classes_;
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
        input_.shallow_bytes[v] = shallow(o, class_index);
        graph::NodeId class_node = input_.classes[class_index].node;
        if (class_node != graph::kNoNode) input_.edges.push_back({v, class_node});
        for (std::uint64_t i = o.first_ref; i < o.first_ref + o.ref_count; ++i) edge(v, r.refs[i]);
    }

    // Roots a PHD can have: classes, objects nothing else references, and the thread objects
    // a javacore names (docs/heap-graph.md).
    void add_roots() {
        input_.root_kind_names = {"class", "unreferenced", "thread_object"};
        for (ObjectId thread : threads_) {
            graph::NodeId node = node_of(thread);
            if (node == graph::kNoNode) ++threads_missing_;
            else input_.roots.push_back({node, 2, true});
        }
        std::vector<std::uint8_t> referenced(input_.kind.size(), 0);
        for (const graph::Edge& e : input_.edges)
            if (e.from != e.to) referenced[e.to] = 1;
        for (graph::NodeId v = 0; v < input_.kind.size(); ++v) {
            if (input_.kind[v] == graph::NodeKind::class_object) input_.roots.push_back({v, 0, true});
            else if (!referenced[v]) input_.roots.push_back({v, 1, true});
        }
    }

    const PhdHeader& header_;
    std::vector<PhdRecords>& runs_;
    DumpInfo& info_;
    std::unique_ptr<AddressIndex> index_;
    graph::HeapInput input_;
    std::map<std::string, std::uint32_t> by_name_;
    std::unordered_map<ObjectId, std::uint32_t> by_address_;
    std::unordered_map<std::uint32_t, std::uint64_t> class_sizes_;
    std::uint32_t class_of_classes_ = 0;
    std::vector<ObjectId> threads_;
    std::uint64_t class_refs_dropped_ = 0, dangling_ = 0, threads_missing_ = 0;
};

std::vector<ObjectId> javacore_threads(const LoadOptions& options, const DumpInfo& info) {
    if (options.javacore.empty()) return {};
    std::ifstream in(options.javacore, std::ios::binary);
    if (!in) throw BadRequest(info.path + ": --javacore " + options.javacore + " cannot be read");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return javacore_thread_objects(text);
}

}  // namespace

LoadedDump load_phd(Bytes file, DumpInfo info, const LoadOptions& options) {
    std::vector<StageTiming> timings;
    StageClock clock(timings);
    clock.start("frame");
    PhdHeader header = take(info, read_phd_header(file));
    info.format = "phd";
    info.format_version = "PHD " + std::to_string(header.version) + (header.j9 ? " (J9)" : "");
    info.id_size = header.word_bytes();
    info.dumps_in_file = 1;
    if (options.dump_index != 0)
        throw BadRequest(info.path + ": --dump-index " + std::to_string(options.dump_index) +
                         " is out of range: a PHD file holds 1 heap dump, numbered 0");
    std::vector<PhdRun> runs = take(info, scan_phd_runs(file, header, kRunBytes));
    clock.start("decode");
    // The same flow graph as HPROF: runs in order in, decoded in parallel, collected in order
    // (so the first error collected is the first in the file).
    std::vector<PhdRecords> records;
    std::optional<DecodeError> first_error;
    std::size_t next_run = 0;
    run_ordered_flow<PhdRun, std::variant<PhdRecords, DecodeError>>(
        [&]() -> std::optional<PhdRun> {
            if (next_run == runs.size()) return std::nullopt;
            return runs[next_run++];
        },
        [&](const PhdRun& run) { return decode_phd_run(file, header, run); },
        [&](const PhdRun& run, std::variant<PhdRecords, DecodeError>& result) {
            if (auto* error = std::get_if<DecodeError>(&result)) {
                if (!first_error) first_error = std::move(*error);
                return;
            }
            records.push_back(std::move(std::get<PhdRecords>(result)));
            if (options.progress) options.progress({"decode", run.end, file.size(), "B"});
        },
        std::max<std::uint64_t>(2, options.bytes_in_flight / kRunBytes));
    if (first_error) throw DumpError(info.path, *first_error);
    clock.start("graph");
    LoadedDump loaded = PhdBuilder(header, records, info, javacore_threads(options, info)).build();
    clock.stop();
    loaded.timings = std::move(timings);
    loaded.info = std::move(info);
    return loaded;
}

}  // namespace heapgraph
