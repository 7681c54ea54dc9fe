// Exact names for the few edges of reported paths. The graph keeps no null references, so a
// slot in an out row says neither which field of an instance it is nor which element of an
// array. After the leak suspects are found (tens of path edges), their source objects are
// read back from the dump:
//   1. wanted: the instances and object arrays the edges leave (class objects are named from
//      their class dumps already; slot 0 is the class edge), as a sorted address list;
//   2. records the value pass located (ValueRequest::locate: it walks every sub-record
//      anyway) are read where they lie in the file; for any left, one pass over the heap
//      dump's sub-records, sizes from the record headers (the chunker's walk, which also joins
//      records split across segments), stopping when every wanted object is found; pages
//      are dropped behind the pass as the loader drops them;
//   3. each found record is decoded with nulls: slot k (after the class edge) is the k-th
//      reference that is non-null and names an object of the dump, as the builder emits
//      them (instance fields in layout order, the class's own first; elements in order);
//      slots past an instance's fields are a thread's locals (GC roots hung from it).
// A name is kept only when the decoded reference is the edge's target.
#include <algorithm>
#include <unordered_map>

#include "byte_reader.h"
#include "edge_names.h"
#include "mapped_file.h"
#include "pipeline.h"

namespace heapgraph {

namespace {

using graph::NodeId;

// A big-endian id or length at `at` (the pass has checked the record fits).
std::uint64_t read_id(Bytes bytes, std::uint64_t at, std::uint32_t size) { return ByteReader(bytes, at).u(size); }

// MAT's names for the GC roots a thread holds.
std::string local_name(const std::string& root_kind) {
    if (root_kind == "java_frame") return "<Java Local>";
    if (root_kind == "jni_local") return "<JNI Local>";
    if (root_kind == "native_stack") return "<Native Stack>";
    if (root_kind == "thread_block") return "<Thread Block>";
    return "<" + root_kind + ">";
}

class EdgeNamer {
public:
    EdgeNamer(LoadedDump& dump, const DumpSource& source)
        : dump_(dump), source_(source), id_(source.id_size), layouts_(source.classes, source.id_size) {}

    // The edges that need their record, by source address.
    void want(std::span<const graph::PathEdge> edges) {
        const graph::HeapGraph& g = dump_.graph;
        for (const graph::PathEdge& e : edges) {
            graph::NodeKind kind = g.types.kind(e.from);
            bool class_edge = g.classes[g.types.class_index(e.from)].node != graph::kNoNode;
            if (kind != graph::NodeKind::instance && kind != graph::NodeKind::object_array) continue;
            if (class_edge && e.slot == 0) continue;
            wanted_[dump_.addresses.address_of(e.from)].push_back(e);
        }
    }

    bool done() const { return wanted_.empty(); }

    // A sub-record of the pass: decoded when it is a wanted object.
    void visit(Bytes bytes, std::uint64_t pos) {
        std::uint8_t tag = bytes[pos];
        if (tag != HprofSubTag::instance_dump && tag != HprofSubTag::object_array_dump) return;
        auto it = wanted_.find(read_id(bytes, pos + 1, id_));
        if (it == wanted_.end()) return;
        if (tag == HprofSubTag::instance_dump) read_instance(bytes, pos, it->second);
        else read_object_array(bytes, pos, it->second);
        wanted_.erase(it);  // found: a later pass looks for the rest only
    }

    // The records the value pass located, read where they lie. A span the file no longer
    // holds (it shrank since) is left to the pass, which stops at the cut.
    void visit_located(std::span<const RecordSpan> located, Bytes file) {
        for (const RecordSpan& r : located)
            if (Bytes record = bytes_at(file, r.file_offset, r.bytes); wanted_.count(r.address) && !record.empty())
                visit(record, 0);
    }

    std::vector<graph::NamedEdge> take() { return std::move(named_); }

private:
    NodeId node_of(ObjectId address) const {
        return address == 0 ? graph::kNoNode : dump_.addresses.node_of(address);  // kMissing == kNoNode
    }

    // Slot of the first reference: after the class edge, when the class has a class object.
    std::uint32_t first_slot(NodeId v) const {
        const graph::HeapGraph& g = dump_.graph;
        return g.classes[g.types.class_index(v)].node != graph::kNoNode;
    }

    void name(const std::vector<graph::PathEdge>& edges, std::uint32_t slot, NodeId to, const std::string& text) {
        for (const graph::PathEdge& e : edges)
            if (e.slot == slot && e.to == to) named_.push_back({e.from, e.slot, text});
    }

    // INSTANCE DUMP, read through the class layout as the decoder reads it. Class dump i is
    // class i of the graph, and its reference fields are named in layout order.
    void read_instance(Bytes bytes, std::uint64_t pos, const std::vector<graph::PathEdge>& edges) {
        const NodeId from = edges.front().from;
        const std::uint32_t c = dump_.graph.types.class_index(from);
        const auto& fields = dump_.field_names.instance_fields;
        auto instance = read_instance_header(bytes, pos, id_);
        if (!instance || c >= source_.classes.size() || c >= fields.size() || instance->class_id != source_.classes[c].class_id)
            return;
        const ClassLayout& layout = layouts_[c];
        if (!layout.complete || instance->field_bytes != layout.data_bytes || layout.references != fields[c].total) return;
        std::uint32_t slot = first_slot(from);
        layouts_.read_references(c, bytes.data() + instance->fields_offset, id_,
                                 [&](ObjectId value, std::uint32_t level, std::uint32_t k) {
                                     NodeId to = node_of(value);
                                     if (to == graph::kNoNode) return;
                                     if (level < fields.size() && k < fields[level].own.size()) name(edges, slot, to, fields[level].own[k]);
                                     ++slot;
                                 });
        // A thread's locals follow its fields, in root-record order.
        for (const graph::PathEdge& e : edges)
            if (e.slot >= slot) name(edges, e.slot, e.to, local_name(local_kind(e.to)));
    }

    // OBJECT ARRAY DUMP: tag, id, stack serial (u4), length (u4), class id, elements.
    void read_object_array(Bytes bytes, std::uint64_t pos, const std::vector<graph::PathEdge>& edges) {
        const std::uint32_t length = static_cast<std::uint32_t>(read_id(bytes, pos + 1 + id_ + 4, 4));
        const std::uint64_t elements = pos + 1 + id_ + 8 + id_;
        std::uint32_t last = 0;
        for (const graph::PathEdge& e : edges) last = std::max(last, e.slot);
        std::uint32_t slot = first_slot(edges.front().from);
        for (std::uint32_t i = 0; i < length && slot <= last; ++i) {
            NodeId to = node_of(read_id(bytes, elements + std::uint64_t{i} * id_, id_));
            if (to == graph::kNoNode) continue;
            std::string index = "[";  // built in steps: gcc 12 misreads "[" + to_string(i) as an overflow
            index += std::to_string(i);
            index += ']';
            name(edges, slot++, to, index);
        }
    }

    std::string local_kind(NodeId to) const {
        for (const graph::GcRoot& r : dump_.graph.roots)
            if (!r.global && r.node == to) return dump_.graph.root_kind_names[r.kind];
        return "local";
    }

    LoadedDump& dump_;
    const DumpSource& source_;
    std::uint32_t id_;
    ClassLayouts layouts_;  // class dump i is class i of the graph
    std::unordered_map<ObjectId, std::vector<graph::PathEdge>> wanted_;
    std::vector<graph::NamedEdge> named_;
};

}  // namespace

void name_edges(LoadedDump& dump, std::span<const graph::PathEdge> edges, const std::function<void(const ProgressEvent&)>& progress,
                std::span<const RecordSpan> located) {
    if (!dump.source || edges.empty()) return;
    const DumpSource& source = *dump.source;
    EdgeNamer namer(dump, source);
    namer.want(edges);
    namer.visit_located(located, source.file);
    HeapChunker chunker = chunker_for(source, 64u << 20);
    while (!namer.done()) {
        auto next = chunker.next();
        auto* chunk = std::get_if<std::optional<HeapChunk>>(&next);
        if (!chunk || !*chunk) break;  // a cut dump (--allow-truncated) ends the pass
        Bytes bytes = (*chunk)->bytes;
        for_each_sub_record(bytes, source.id_size, [&](std::uint64_t pos, std::uint64_t) {
            namer.visit(bytes, pos);
            return !namer.done();
        });
        if (source.release_pages && (*chunk)->owned.empty()) release_pages(bytes);
        if (progress) progress({"path names", chunker.done_bytes(), chunker.total_bytes(), "B"});
    }
    if (source.mapping) source.mapping->check_intact();  // the file shrank since it was loaded?
    auto& exact = dump.field_names.exact;
    for (graph::NamedEdge& e : namer.take()) {
        cut_name(e.name);  // the names read back are dump strings too
        exact.push_back(std::move(e));
    }
    std::sort(exact.begin(), exact.end(), [](const graph::NamedEdge& a, const graph::NamedEdge& b) {
        return a.from != b.from ? a.from < b.from : a.slot < b.slot;
    });
    exact.erase(std::unique(exact.begin(), exact.end(),
                            [](const graph::NamedEdge& a, const graph::NamedEdge& b) {
                                return a.from == b.from && a.slot == b.slot;
                            }),
                exact.end());
}

}  // namespace heapgraph
