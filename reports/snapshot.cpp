// Analysis snapshots (`heapgraph analyze DUMP --save FILE`, docs/diff.md): what `diff` needs
// of a dump, a few kilobytes instead of the dump. Layout, integers little-endian:
//   0   8  magic "\x89HGSNAP\n" (the high byte and the newline catch text-mode mangling)
//   8   4  format version (kSnapshotVersion)
//   12  4  CRC-32 of the payload
//   16  8  payload bytes
//   24  8  inflated bytes
//   32  .. payload: the snapshot as compact JSON, deflated (zlib)
// Reading checks, in order: magic, version, lengths, checksum, inflation, JSON shape; each
// failure is a SnapshotError that names the file and what is wrong.
#include <unistd.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "regular_file.h"
#include "reports.h"

namespace heapgraph::reports {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<char, 8> kMagic{'\x89', 'H', 'G', 'S', 'N', 'A', 'P', '\n'};
constexpr std::size_t kHeaderBytes = 32;
// A snapshot holds at most kMaxHistogramRows classes and graph::HolderOptions::max_holders
// holders of at most 17 steps, names at most 1 KiB (pipeline's kMaxNameBytes): under 48 MiB of
// JSON even then, and a few KB for real dumps. A payload that claims more is refused before
// it is inflated: parsing 1 GiB of JSON took 7.7 GB.
constexpr std::uint64_t kMaxInflatedBytes = 48ull << 20;
constexpr std::size_t kMaxHistogramRows = 10000;
// Counts and byte sizes stay below 2^62 (no heap comes near): growth is their difference
// as a signed 64-bit number, which a size of 2^64-1 would turn negative.
constexpr std::uint64_t kMaxValue = std::uint64_t{1} << 62;

void put_le(std::string& out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

std::uint64_t get_le(const std::string& in, std::size_t at, int bytes) {
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
    return value;
}

Json to_json(const Snapshot& s) {
    Json out;
    out["schema"] = "heapgraph-snapshot";
    out["version"] = kSnapshotVersion;
    out["tool_version"] = s.tool_version;
    out["dump"] = Json{{"path", s.dump_path}, {"format", s.format}, {"bytes", s.dump_bytes}, {"inflated_bytes", s.inflated_bytes}};
    out["summary"] = Json{{"objects", s.objects}, {"reachable_objects", s.reachable_objects},
                          {"retained_bytes_total", s.retained_bytes_total}, {"classes", s.classes}};
    out["holder_min_percent"] = s.holder_min_percent;
    Json histogram = Json::array();  // [name, count, shallow, retained]
    for (const SnapshotClass& c : s.histogram) histogram.push_back(Json::array({c.name, c.count, c.shallow_bytes, c.retained_bytes}));
    out["histogram"] = std::move(histogram);
    // [[class, via, class, ..., class], anchor kind, parent (-1: none), depth, retained, objects]: the
    // signature and the class are rebuilt from the path.
    Json holders = Json::array();
    for (const SnapshotHolder& h : s.holders) {
        Json path = Json::array();
        for (const graph::HolderStep& step : h.path) {
            if (&step != &h.path.front()) path.push_back(step.via);
            path.push_back(step.class_name);
        }
        holders.push_back(Json::array({std::move(path), h.anchor_kind,
                                       h.parent == graph::kNoHolder ? -1 : static_cast<std::int64_t>(h.parent), h.depth,
                                       h.retained_bytes, h.retained_objects}));
    }
    out["holders"] = std::move(holders);
    return out;
}

// Numbers as the writer wrote them. nlohmann's get<> casts whatever number it finds: a
// float past 2^64 into an integer is undefined behaviour (a fuzz finding), a negative one
// wraps.
std::uint64_t whole(const Json& v) {
    if (!v.is_number_unsigned()) throw std::invalid_argument(std::string("expected a whole number, found a ") + v.type_name());
    if (v.get<std::uint64_t>() >= kMaxValue)
        throw std::out_of_range("number " + std::to_string(v.get<std::uint64_t>()) + " is past 2^62");
    return v.get<std::uint64_t>();
}

std::int64_t signed_whole(const Json& v) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX))
        throw std::invalid_argument(std::string("expected an integer, found a ") + v.type_name());
    return v.get<std::int64_t>();
}

double real(const Json& v) {
    if (!v.is_number()) throw std::invalid_argument(std::string("expected a number, found a ") + v.type_name());
    return v.get<double>();
}

Snapshot from_json(const Json& in, const std::string& source) {
    Snapshot s;
    s.source = source;
    s.from_dump = false;
    s.tool_version = in.at("tool_version").get<std::string>();
    const Json& dump = in.at("dump");
    s.dump_path = dump.at("path").get<std::string>();
    s.format = dump.at("format").get<std::string>();
    s.dump_bytes = whole(dump.at("bytes"));
    s.inflated_bytes = whole(dump.at("inflated_bytes"));
    const Json& summary = in.at("summary");
    s.objects = whole(summary.at("objects"));
    s.reachable_objects = whole(summary.at("reachable_objects"));
    s.retained_bytes_total = whole(summary.at("retained_bytes_total"));
    s.classes = whole(summary.at("classes"));
    s.holder_min_percent = real(in.at("holder_min_percent"));
    for (const Json& row : in.at("histogram"))
        s.histogram.push_back({row.at(0).get<std::string>(), whole(row.at(1)), whole(row.at(2)),
                               whole(row.at(3))});
    for (const Json& row : in.at("holders")) {
        SnapshotHolder h;
        const Json& path = row.at(0);
        if (path.empty() || path.size() % 2 == 0) throw std::out_of_range("holder path of " + std::to_string(path.size()) + " items");
        h.path.push_back({path.at(0).get<std::string>(), ""});
        for (std::size_t i = 1; i < path.size(); i += 2) h.path.push_back({path.at(i + 1).get<std::string>(), path.at(i).get<std::string>()});
        h.anchor_kind = row.at(1).get<std::string>();
        h.signature = graph::holder_signature(h.path, h.anchor_kind);
        h.class_name = h.path.back().class_name;
        std::int64_t parent = signed_whole(row.at(2));
        if (parent >= static_cast<std::int64_t>(s.holders.size())) throw std::out_of_range("holder parent after its child");
        h.parent = parent < 0 ? graph::kNoHolder : static_cast<std::uint32_t>(parent);
        std::uint64_t depth = whole(row.at(3));
        if (depth > UINT32_MAX) throw std::out_of_range("holder depth " + std::to_string(depth));
        h.depth = static_cast<std::uint32_t>(depth);
        h.retained_bytes = whole(row.at(4));
        h.retained_objects = whole(row.at(5));
        s.holders.push_back(std::move(h));
    }
    return s;
}

// The kMaxHistogramRows classes that retain most, still by name.
void keep_biggest_classes(std::vector<SnapshotClass>& rows) {
    if (rows.size() <= kMaxHistogramRows) return;
    std::stable_sort(rows.begin(), rows.end(),
                     [](const SnapshotClass& a, const SnapshotClass& b) { return a.retained_bytes > b.retained_bytes; });
    rows.resize(kMaxHistogramRows);
    std::sort(rows.begin(), rows.end(), [](const SnapshotClass& a, const SnapshotClass& b) { return a.name < b.name; });
}

}  // namespace

Snapshot make_snapshot(const analysis::Findings& a) {
    Snapshot s;
    s.source = a.dump.path;
    s.dump_path = a.dump.path;
    s.format = a.dump.format;
    s.tool_version = a.tool_version;
    s.dump_bytes = a.dump.bytes;
    s.inflated_bytes = a.dump.inflated_bytes;
    s.objects = a.summary.objects;
    s.reachable_objects = a.summary.reachable_objects;
    s.classes = a.summary.classes;
    s.retained_bytes_total = a.retained.tree.super_root_retained_bytes;
    s.holder_min_percent = a.holder_min_percent;
    std::map<std::string, SnapshotClass> by_name;  // a name defined by two loaders is one row
    for (const graph::HistogramRow& row : a.histogram) {
        if (!row.count) continue;
        SnapshotClass& c = by_name[a.graph.classes[row.class_index].name];
        c.count += row.count, c.shallow_bytes += row.shallow_bytes, c.retained_bytes += a.retained_by_class[row.class_index];
    }
    for (auto& [name, c] : by_name) {
        c.name = name;
        s.histogram.push_back(std::move(c));
    }
    keep_biggest_classes(s.histogram);
    for (const graph::Holder& h : a.holders)
        s.holders.push_back({h.signature, graph::node_class_name(a.graph, h.node), h.path, h.anchor_kind, h.parent,
                             h.depth, h.retained_bytes, h.retained_objects});
    return s;
}

std::string snapshot_file_bytes(std::string_view payload) {
    uLongf packed_bytes = compressBound(payload.size());
    std::string packed(packed_bytes, '\0');
    if (compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_bytes, reinterpret_cast<const Bytef*>(payload.data()),
                  payload.size(), 9) != Z_OK)
        throw std::runtime_error("snapshot: deflate failed");
    packed.resize(packed_bytes);
    std::string file(kMagic.begin(), kMagic.end());
    put_le(file, kSnapshotVersion, 4);
    put_le(file, crc32(0, reinterpret_cast<const Bytef*>(packed.data()), packed.size()), 4);
    put_le(file, packed.size(), 8);
    put_le(file, payload.size(), 8);
    return file + packed;
}

void write_snapshot(const Snapshot& s, std::ostream& out) {
    out << snapshot_file_bytes(to_json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

bool is_snapshot_file(const std::string& path) {
    int fd = -1;
    try {
        fd = open_regular_file(path);
    } catch (const UnreadableDump&) {
        return false;  // then read as a dump, which names the problem
    }
    std::array<char, 8> head{};
    bool snapshot = ::pread(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) && head == kMagic;
    ::close(fd);
    return snapshot;
}

Snapshot read_snapshot(const std::string& path) {
    // Deflate shrinks nothing to below 1/1032, so a payload bigger than the inflated cap is no snapshot.
    std::string bytes;
    try {
        bytes = read_regular_file(path, "", kHeaderBytes + kMaxInflatedBytes + 1024);
    } catch (const UnreadableDump& e) {
        throw SnapshotError(std::string(e.what()) + " (not a usable heapgraph snapshot)");
    }
    auto fail = [&](const std::string& what) { return SnapshotError(path + ": not a usable heapgraph snapshot: " + what); };
    if (bytes.size() < kHeaderBytes || !std::equal(kMagic.begin(), kMagic.end(), bytes.begin()))
        throw fail("header cut short or magic missing");
    std::uint64_t version = get_le(bytes, 8, 4);
    if (version != kSnapshotVersion)
        throw fail("format version " + std::to_string(version) + ", this heapgraph reads version " +
                   std::to_string(kSnapshotVersion) + " only (save it again with `heapgraph analyze DUMP --save`)");
    std::uint64_t packed = get_le(bytes, 16, 8), inflated = get_le(bytes, 24, 8);
    if (packed != bytes.size() - kHeaderBytes)
        throw fail("header says " + std::to_string(packed) + " payload bytes, the file has " +
                   std::to_string(bytes.size() - kHeaderBytes) + " (truncated or appended to)");
    std::uint32_t stored = static_cast<std::uint32_t>(get_le(bytes, 12, 4));
    std::uint32_t computed = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + kHeaderBytes), static_cast<uInt>(packed)));
    if (stored != computed) {
        char text[96];
        std::snprintf(text, sizeof text, "checksum mismatch (stored 0x%08x, computed 0x%08x): the file is corrupt", stored, computed);
        throw fail(text);
    }
    // Deflate expands at most 1032:1: a bigger claim is refused before its buffer is made.
    if (inflated > packed * 1032 + 64)
        throw fail("inflated size " + std::to_string(inflated) + " is implausible for " + std::to_string(packed) +
                   " payload bytes");
    if (inflated > kMaxInflatedBytes)
        throw fail("inflated size " + std::to_string(inflated) + " is past the " + std::to_string(kMaxInflatedBytes) +
                   " bytes a snapshot can hold");
    std::string text(inflated, '\0');
    uLongf text_bytes = inflated;
    if (uncompress(reinterpret_cast<Bytef*>(text.data()), &text_bytes, reinterpret_cast<const Bytef*>(bytes.data() + kHeaderBytes),
                   packed) != Z_OK ||
        text_bytes != inflated)
        throw fail("payload does not inflate to the " + std::to_string(inflated) + " bytes the header gives");
    try {
        Json json = Json::parse(text);
        if (json.at("schema") != "heapgraph-snapshot" || json.at("version") != kSnapshotVersion)
            throw fail("payload schema or version does not match the header");
        return from_json(json, path);
    } catch (const SnapshotError&) {
        throw;
    } catch (const std::exception& e) {
        throw fail(std::string("payload is not a version 1 snapshot: ") + e.what());
    }
}

}  // namespace heapgraph::reports
