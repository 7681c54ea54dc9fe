// The index's kept graph (kept_dump.h). One description of each part, `keep(archive, part)`,
// serves both ways: an Archive<false> writes what it is handed, an Archive<true> reads into
// it. Numbers go as their bytes (the file is read back by the same build: the index key
// holds the tool version), containers as a count and their elements, columns whole.
#include "kept_dump.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <libdeflate.h>

#include "edge_names.h"

namespace heapgraph {

namespace {

// 2: referrer rows keep starts for their nodes only; 3: shallow sizes take 2 bytes a node
constexpr char kMagic[] = "heapgraph-kept-dump/3\n";

template <bool Reading>
class Archive {
public:
    static constexpr bool reading = Reading;
    using Stream = std::conditional_t<Reading, std::istream, std::ostream>;

    Archive(Stream& stream, std::uint64_t bytes, std::string name)
        : stream_(stream), left_(bytes), name_(std::move(name)) {}

    void raw(void* bytes, std::size_t n) {
        if constexpr (Reading) {
            check(n <= left_, "the file ends early");
            stream_.read(static_cast<char*>(bytes), static_cast<std::streamsize>(n));
            check(static_cast<std::size_t>(stream_.gcount()) == n, "the file cannot be read");
            left_ -= n;
            if (n) crc_ = libdeflate_crc32(crc_, bytes, n);  // a null buffer would restart it
        } else {
            stream_.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
        }
    }
    void check(bool holds, const char* what) const {
        if (!holds) throw KeptDumpError(name_ + ": " + what + " is not as kept");
    }
    // Reading: the CRC-32 of the bytes read so far, or of the whole file once the rest is read.
    std::uint32_t crc() const { return crc_; }
    std::uint32_t crc_to_end() {
        std::vector<char> buffer(1 << 20);
        while (left_ > 0 && stream_) raw(buffer.data(), std::min<std::uint64_t>(left_, buffer.size()));
        return crc_;
    }

    template <typename T>
    void io(T& value) {
        if constexpr (std::is_same_v<T, bool>) {
            std::uint8_t byte = value;
            raw(&byte, 1);
            check(byte <= 1, "a flag");
            value = byte != 0;
        } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
            raw(&value, sizeof value);
        } else if constexpr (requires { value.keep(*this); }) {
            value.keep(*this);
        } else {
            keep(*this, value);
        }
    }
    void io(std::string& text) {
        std::uint64_t n = text.size();
        count(n, 1);
        if constexpr (Reading) text.resize(n);
        raw(text.data(), n);
    }
    // Elements of a struct type are read one by one, so that a count past what the file holds
    // fails when the bytes run out, before memory in proportion to the count is taken.
    template <typename T, typename A>
    void io(std::vector<T, A>& values) {
        std::uint64_t n = values.size();
        count(n, bulk<T>() ? sizeof(T) : 1);
        if constexpr (bulk<T>()) {
            if constexpr (Reading) values.resize(n);
            raw(values.data(), n * sizeof(T));
        } else if constexpr (Reading) {
            values.clear();
            for (std::uint64_t i = 0; i < n; ++i) io(values.emplace_back());
        } else {
            for (T& value : values) io(value);
        }
    }
    template <typename T>
    void io(graph::Column<T>& values) {
        std::uint64_t n = values.size();
        count(n, sizeof(T));
        if constexpr (Reading) values.resize(n);
        raw(values.data(), n * sizeof(T));
    }
    template <typename T>
    void io(std::optional<T>& value) {
        bool present = value.has_value();
        io(present);
        if (Reading && present && !value) value.emplace();
        if (present) io(*value);
    }
    template <typename Map>
        requires requires { typename Map::mapped_type; }
    void io(Map& map) {
        std::uint64_t n = map.size();
        count(n, 2);
        if constexpr (Reading) {
            for (std::uint64_t i = 0; i < n; ++i) {
                typename Map::key_type key{};
                typename Map::mapped_type value{};
                io(key), io(value);
                map.emplace(std::move(key), std::move(value));
            }
        } else {  // in key order: the same graph gives the same file
            std::vector<typename Map::value_type*> entries;
            for (auto& entry : map) entries.push_back(&entry);
            std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
            for (auto* entry : entries) {
                auto key = entry->first;
                io(key), io(entry->second);
            }
        }
    }

private:
    // Plain numbers, and structs of them without padding, go as one block of bytes.
    template <typename T>
    static constexpr bool bulk() {
        return (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) || std::is_same_v<T, graph::Edge>;
    }
    // A count of elements of at least `least` bytes each: no more than the bytes left.
    void count(std::uint64_t& n, std::uint64_t least) {
        raw(&n, sizeof n);
        if constexpr (Reading) check(n <= left_ / least, "a count");
    }

    Stream& stream_;
    std::uint64_t left_;
    std::string name_;
    std::uint32_t crc_ = 0;
};

template <typename A>
void keep(A& a, DumpInfo& d) {
    a.io(d.path), a.io(d.format), a.io(d.format_version), a.io(d.id_size), a.io(d.bytes), a.io(d.inflated_bytes);
    a.io(d.gzip_members), a.io(d.dumps_in_file), a.io(d.dump_index), a.io(d.compressed_oops), a.io(d.size_model);
    a.io(d.roots_inferred), a.io(d.dangling_references), a.io(d.records), a.io(d.sub_records);
}
template <typename A>
void keep(A& a, graph::ClassInfo& c) {
    a.io(c.name), a.io(c.node), a.io(c.loader);
}
template <typename A>
void keep(A& a, graph::GcRoot& r) {
    a.io(r.node), a.io(r.kind), a.io(r.global);
}
template <typename A>
void keep(A& a, graph::HeapGraph& g) {
    a.io(g.types), a.io(g.shallow_bytes), a.io(g.classes), a.io(g.out), a.io(g.in), a.io(g.roots);
    a.io(g.root_kind_names), a.io(g.root_nodes), a.io(g.reachable), a.io(g.edges);
}
template <typename A>
void keep(A& a, Warning& w) {
    a.io(w.code), a.io(w.count), a.io(w.message);
}
template <typename A>
void keep(A& a, graph::FieldNames::ClassFields& c) {
    a.io(c.own), a.io(c.super), a.io(c.total);
}
template <typename A>
void keep(A& a, graph::NamedEdge& e) {
    a.io(e.from), a.io(e.slot), a.io(e.name);
}
template <typename A>
void keep(A& a, graph::FieldNames& f) {
    a.io(f.instance_fields), a.io(f.class_edges), a.io(f.exact);
}
template <typename A>
void keep(A& a, SegmentSpan& s) {
    a.io(s.offset), a.io(s.length);
}
template <typename A>
void keep(A& a, ChunkCut& c) {
    a.io(c.pos), a.io(c.length), a.io(c.segment);
}
template <typename A>
void keep(A& a, FieldDecl& f) {
    a.io(f.name_id), a.io(f.type);
}
template <typename A>
void keep(A& a, StaticField& f) {
    a.io(f.name_id), a.io(f.type), a.io(f.value);
}
template <typename A>
void keep(A& a, ClassDump& c) {
    a.io(c.class_id), a.io(c.super_id), a.io(c.loader_id), a.io(c.signers_id), a.io(c.protection_domain_id);
    a.io(c.instance_size), a.io(c.statics), a.io(c.fields), a.io(c.file_offset);
}
template <typename A>
void keep(A& a, StackFrame& f) {
    a.io(f.class_name), a.io(f.method), a.io(f.signature), a.io(f.source), a.io(f.line);
}
template <typename A>
void keep(A& a, StackTrace& t) {
    a.io(t.serial), a.io(t.thread_serial), a.io(t.frames);
}
// The source's bytes are not kept: attach_dump_bytes maps them again.
template <typename A>
void keep(A& a, DumpSource& s) {
    a.io(s.segments), a.io(s.id_size), a.io(s.classes), a.io(s.release_pages), a.io(s.field_names);
    a.io(s.stack_traces), a.io(s.chunks);
}
template <typename A>
void keep(A& a, Javacore::Frame& f) {
    a.io(f.class_name), a.io(f.method), a.io(f.source), a.io(f.line);
}
template <typename A>
void keep(A& a, Javacore::Thread& t) {
    a.io(t.name), a.io(t.state), a.io(t.daemon), a.io(t.object), a.io(t.frames);
}
template <typename A>
void keep(A& a, LoadedDump::Scan& s) {
    a.io(s.objects), a.io(s.references), a.io(s.names), a.io(s.graph_built);
}
template <typename A>
void keep(A& a, LoadedDump& d) {
    a.io(d.info), a.io(d.graph), a.io(d.addresses), a.io(d.warnings), a.io(d.weak_edges), a.io(d.field_names);
    bool has_source = d.source != nullptr;
    a.io(has_source);
    if (A::reading && has_source) d.source = std::make_shared<DumpSource>();
    if (has_source) a.io(*d.source);
    a.io(d.javacore_threads), a.io(d.scan);
}

// Rows of n nodes (or none), starting at 0, ascending, ending at the targets' count, each
// target a node.
bool rows_hold(const graph::Csr& rows, std::uint64_t n) {
    if (!rows.layout_holds()) return false;
    if (rows.empty()) return rows.targets.empty();
    if (rows.rows() != n || rows.begin(0) != 0 || rows.begin(n) != rows.targets.size()) return false;
    for (std::uint64_t v = 0; v < n; ++v)
        if (rows.begin(v) > rows.begin(v + 1)) return false;
    for (graph::NodeId t : rows.targets)
        if (t >= n) return false;
    return true;
}

// What the analyses index by without a check: every node id below the node count, every
// class index below the class count, one attribute per node.
void check_graph(const Archive<true>& a, const LoadedDump& d) {
    const graph::HeapGraph& g = d.graph;
    const std::uint64_t n = g.node_count();
    // `reachable` is kept empty while the analysis has not set it yet (heap_graph.h).
    a.check(g.shallow_bytes.size() == n && d.addresses.size() == n &&
                (g.reachable.words() == 0 || g.reachable.words() == (n + 63) / 64),
            "the node count");
    a.check(rows_hold(g.out, n) && rows_hold(g.in, n), "the graph's rows");
    for (std::uint64_t v = 0; v < n; ++v) a.check(g.types.class_index(v) < g.classes.size(), "a node's class");
    for (const graph::ClassInfo& c : g.classes)
        a.check((c.node == graph::kNoNode || c.node < n) && (c.loader == graph::kNoNode || c.loader < n), "a class");
    for (const graph::GcRoot& r : g.roots) a.check(r.node < n && r.kind < g.root_kind_names.size(), "a GC root");
    for (graph::NodeId v : g.root_nodes) a.check(v < n, "a root node");
    for (const graph::Edge& e : d.weak_edges) a.check(e.from < n && e.to < n, "a weak edge");
    for (const auto& c : d.field_names.instance_fields)
        a.check(c.super == 0xFFFFFFFFu || c.super < d.field_names.instance_fields.size(), "a class's fields");
}

}  // namespace

void keep_dump(const LoadedDump& dump, std::ostream& out) {
    out.write(kMagic, sizeof kMagic - 1);
    Archive<false> archive(out, 0, "");
    archive.io(const_cast<LoadedDump&>(dump));  // the writing archive only reads it
}

LoadedDump reopen_dump(const std::string& kept, const std::string& path, const LoadOptions& options,
                       std::optional<std::uint32_t> crc32) {
    std::ifstream in(kept, std::ios::binary | std::ios::ate);
    if (!in) throw KeptDumpError(kept + ": cannot be read");
    const auto bytes = static_cast<std::uint64_t>(in.tellg());
    in.seekg(0);
    Archive<true> archive(in, bytes, kept);
    const KeptDumpError damaged(kept + ": its CRC-32 differs from the one kept with it", true);
    LoadedDump dump;
    try {
        char magic[sizeof kMagic - 1] = {};
        archive.raw(magic, sizeof magic);
        archive.check(std::equal(magic, magic + sizeof magic, kMagic), "the header");
        archive.io(dump);
        archive.check(in.peek() == std::ifstream::traits_type::eof(), "the end");
        check_graph(archive, dump);
    } catch (const KeptDumpError&) {  // a file not as written says so, whatever broke first
        if (crc32 && archive.crc_to_end() != *crc32) throw damaged;
        throw;
    }
    if (crc32 && archive.crc() != *crc32) throw damaged;
    if (dump.source) attach_dump_bytes(dump, path, options);
    return dump;
}

}  // namespace heapgraph
