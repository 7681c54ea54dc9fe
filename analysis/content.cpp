// Duplicate strings and arrays, from the value reader's records (pipeline/values.h).
//
// Strings: every java.lang.String the report counts (in the dominator tree) is keyed by a
// 128-bit hash of its contents (its array's hash from the decode, or its slice's for a JDK 6
// substring), their length and encoding; equal keys are equal values. The contents are
// not read again: a sweep comparing them byte for byte read the whole dump a second time
// (42.9 s of the 8x replica's 311 s run). A group's waste is every String but one and every
// distinct backing array but one: copies that share one array waste only their String objects.
// Arrays: primitive arrays that are no String's value, grouped by type, length and contents
// the same way; a group wastes all its arrays but one. docs/report-schema.md says where this
// differs from Eclipse MAT.
#include "content.h"

#include "bucket_sort.h"
#include "byte_reader.h"
#include "edge_names.h"
#include "top_rows.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cstdio>

namespace heapgraph::analysis {

namespace {

using graph::NodeId;
using graph::kNoNode;

// Node of each record: the address index answers each in a few loads.
template <typename Records>
std::vector<NodeId> nodes_of(const Records& records, NodeAddresses addresses) {
    std::vector<NodeId> nodes(records.size(), kNoNode);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, records.size()), [&](const auto& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) nodes[i] = addresses.node_of(records[i].address);
    });
    return nodes;
}

constexpr NodeId kNoArray = kNoNode;

// Each string's value: its index in values.arrays (sorted by address), or kNoArray.
std::vector<NodeId> value_arrays(const DumpValues& values) {
    std::vector<NodeId> index(values.strings.size(), kNoArray);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, index.size()), [&](const auto& range) {
        std::size_t hint = 0;  // the strings come in address order, and mostly so do their values
        for (std::size_t i = range.begin(); i != range.end(); ++i)
            if (const ArrayObject* a = values.array_near(values.strings[i].value, hint))
                index[i] = static_cast<NodeId>(a - values.arrays.data());
    });
    return index;
}

// One object to group: its contents' key, then the object. Its shallow size and its value
// array's are copied in when the members are made, in node order: the groups come in hash
// order, and looking the sizes up there jumps about the whole column (past the memory
// limit, a page fault each: 31 s of the 8x replica's run).
struct Member {
    ContentHash hash;
    // Strings: the value's length in chars (String.length()); arrays: elements. Not bytes:
    // an array's may pass 32 bits, and 48 bytes a member, not 56 (the 8x replica's 29M
    // String members are a 1.4 GB column sorted in a file).
    std::uint32_t units = 0;
    std::uint32_t kind = 0;  // strings: JavaChars; arrays: element type
    NodeId node = kNoNode;
    NodeId array = 0;        // index into DumpValues::arrays
    std::uint32_t own = 0;   // the node's shallow size word (graph::ShallowSizes::word)
    std::uint32_t value = 0; // strings: the value array's shallow size word (0: not in the graph)
    std::uint64_t position = 0;  // file offset of the contents' first byte (never of a split array)

    std::uint64_t own_bytes(const graph::HeapGraph& g) const { return g.shallow_bytes.size_of(own, node); }

    bool same_key(const Member& o) const { return hash == o.hash && units == o.units && kind == o.kind; }
    bool operator<(const Member& o) const {
        return std::tie(hash, units, kind, node) < std::tie(o.hash, o.units, o.kind, o.node);
    }
};

// A column (graph/column.h): one per String or array to group, which past the memory
// budget goes to a file.
using Members = graph::Column<Member>;

// By key: the hash's top bits spread them over buckets (graph/bucket_sort.h).
void sort_members(Members& members) {
    graph::bucket_sort(members, [](const Member& m, int bits) { return m.hash.high >> (64 - bits); }, std::less<Member>());
}

// Keeps the members whose key another member may share: one alone with its key forms no
// group. Two bits a slot, over about eight slots a member (at most 2^28, 64 MB), by the
// hash's top bits: seen once, seen again. Members of one key share a slot, so every group is
// kept whole; a single member is kept only when another member's slot is its own (about one
// in eight). Done before the sort, whose copy is then of what is kept: on the 2 GB BigHeap
// dump 65% of the String members, 106 MB instead of 162 (docs/pipeline.md, "Stop 54").
void keep_possible_duplicates(Members& members) {
    const std::size_t n = members.size();
    if (n < 2) {
        members.clear();
        return;
    }
    const int bits = std::clamp(static_cast<int>(std::bit_width(n)) + 3, 6, 28);
    auto slot = [&](const Member& m) { return static_cast<std::size_t>(m.hash.high >> (64 - bits)); };
    graph::NodeBits once(std::size_t{1} << bits), twice(std::size_t{1} << bits);
    // Both passes a slab at a time, each slab's pages let go after it where the members are a
    // file (graph/column.h); the kept ones are written behind what is read, so a slab's
    // writes lie between the first kept from it and its end.
    constexpr std::size_t kSlab = (std::size_t{16} << 20) / sizeof(Member);
    graph::for_each_slab(n, kSlab, [&](std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) {
            const std::size_t s = slot(members[i]);
            (once.test(s) ? twice : once).set(s);
        }
        members.release_pages(first, last);
    });
    std::size_t kept = 0;
    graph::for_each_slab(n, kSlab, [&](std::size_t first, std::size_t last) {
        const std::size_t written_from = kept;
        for (std::size_t i = first; i < last; ++i)
            if (twice.test(slot(members[i]))) members[kept++] = members[i];
        members.release_pages(written_from, last);
    });
    members.resize(kept);
    if (!members.in_file()) members.shrink_to_fit();  // in a file the copy would cost more
}

// Calls group(first, last) for every run of two or more members with one key, `members`
// sorted by key: equal contents. The key's 128-bit hash stands for the contents, which are
// not read again (docs/report-schema.md: the chance of two contents sharing one).
template <typename Group>
void for_each_group(Members& members, Group&& group) {
    for (std::size_t begin = 0, end; begin < members.size(); begin = end) {
        end = begin + 1;
        while (end < members.size() && members[end].same_key(members[begin])) ++end;
        if (end - begin >= 2) group(members.begin() + static_cast<std::ptrdiff_t>(begin),
                                    members.begin() + static_cast<std::ptrdiff_t>(end));
    }
}

// A member's contents in the file, `width` bytes a unit (the kept rows' values are read
// from there).
Bytes contents(const DumpValues& values, const Member& m, std::uint32_t width) {
    return bytes_at(values.source->file, m.position, std::uint64_t{m.units} * width);
}

std::uint32_t char_width(const Member& m) { return static_cast<JavaChars>(m.kind) == JavaChars::latin1 ? 1 : 2; }

// The strings to group: counted, with a char[] or byte[] value the pass read whole.
Members string_members(const graph::HeapGraph& g, const graph::NodeBits& counted, NodeAddresses addresses,
                       const DumpValues& values, std::span<const NodeId> value_index, std::span<const NodeId> array_nodes) {
    const std::vector<NodeId> nodes = nodes_of(values.strings, addresses);
    Members members;
    // Room for every String at once: a column regrows by copying, in a file too.
    members.reserve(values.strings.size());
    for (std::size_t i = 0; i < values.strings.size(); ++i) {
        const StringObject& s = values.strings[i];
        if (nodes[i] == kNoNode || !counted.test(nodes[i])) continue;
        const NodeId at = value_index[i];
        if (at == kNoArray) continue;
        const ArrayObject& a = values.arrays[at];
        if (a.type != static_cast<std::uint8_t>(BasicType::char_) && a.type != static_cast<std::uint8_t>(BasicType::byte))
            continue;
        Bytes whole = values.elements(a);
        if (whole.size() != std::uint64_t{a.length} * basic_type_size(a.type, 4)) continue;  // split: not compared
        auto span = values.string_span(s, a);
        if (!span) continue;
        const NodeId array_node = array_nodes[at];
        Member m{a.hash, 0, static_cast<std::uint32_t>(span->chars), nodes[i], static_cast<NodeId>(at),
                 g.shallow_bytes.word(nodes[i]), array_node == kNoNode ? 0 : g.shallow_bytes.word(array_node),
                 a.data_offset + span->from};
        m.units = static_cast<std::uint32_t>(span->bytes / char_width(m));  // a u4 length's bytes, halved for UTF-16
        if (span->bytes != whole.size()) m.hash = content_hash(whole.subspan(span->from, span->bytes));  // a JDK 6 slice
        members.push_back(m);
    }
    return members;
}

// Arrays that back a String are counted with the strings, not again here.
Members array_members(const graph::HeapGraph& g, const graph::NodeBits& counted, std::span<const NodeId> nodes,
                      const DumpValues& values, std::span<const NodeId> value_index) {
    std::vector<std::uint8_t> string_value(values.arrays.size(), 0);
    std::size_t string_values = 0;
    for (NodeId at : value_index)
        if (at != kNoArray && !string_value[at]) string_value[at] = 1, ++string_values;
    Members members;
    members.reserve(values.arrays.size() - string_values);
    for (std::size_t i = 0; i < values.arrays.size(); ++i) {
        const ArrayObject& a = values.arrays[i];
        if (nodes[i] == kNoNode || !counted.test(nodes[i]) || string_value[i] || a.data_offset == ArrayObject::kSplit) continue;
        members.push_back({a.hash, a.length, a.type, nodes[i], static_cast<NodeId>(i), g.shallow_bytes.word(nodes[i]), 0,
                           a.data_offset});
    }
    return members;
}

// "[0, 7, 14, ...]": the first elements of an array, as Java prints them.
std::string first_elements(Bytes bytes, std::uint8_t type, std::uint64_t length) {
    constexpr std::uint64_t kShown = 8;
    const std::uint32_t width = basic_type_size(type, 4);
    std::string out = "[";
    for (std::uint64_t i = 0; i < std::min(length, kShown) && (i + 1) * width <= bytes.size(); ++i) {
        if (i) out += ", ";
        out += java_value_text(type, ByteReader(bytes, i * width).u(width));
    }
    if (length > kShown) out += ", ...";
    return out + "]";
}

// Most wasted bytes first, then most copies, then the example's address (node order).
template <typename Row>
bool most_wasted(const std::pair<Row, Member>& x, const std::pair<Row, Member>& y) {
    const Row &a = x.first, &b = y.first;
    return std::tie(b.wasted_bytes, b.count, a.example) < std::tie(a.wasted_bytes, a.count, b.example);
}

}  // namespace

std::string java_value_text(std::uint8_t type, std::uint64_t bits) {
    char text[48];
    switch (static_cast<BasicType>(type)) {
        case BasicType::boolean: return bits ? "true" : "false";
        case BasicType::char_: {
            // Control characters and lone surrogate halves would print as nothing: U+XXXX.
            if (bits < 0x20 || (bits >= 0x7F && bits < 0xA0) || (bits >= 0xD800 && bits < 0xE000)) {
                std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(bits & 0xFFFF));
                return text;
            }
            const std::uint8_t unit[2] = {static_cast<std::uint8_t>(bits >> 8), static_cast<std::uint8_t>(bits)};
            return utf8_from_java_chars(unit, JavaChars::utf16_big_endian, 1);
        }
        case BasicType::float_:
            std::snprintf(text, sizeof text, "%.9g", static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits))));
            return text;
        case BasicType::double_: std::snprintf(text, sizeof text, "%.17g", std::bit_cast<double>(bits)); return text;
        case BasicType::byte: return std::to_string(static_cast<std::int8_t>(bits));
        case BasicType::short_: return std::to_string(static_cast<std::int16_t>(bits));
        case BasicType::int_: return std::to_string(static_cast<std::int32_t>(bits));
        case BasicType::long_: return std::to_string(static_cast<std::int64_t>(bits));
        case BasicType::object: break;
    }
    return {};
}

void find_duplicates(const graph::HeapGraph& g, const graph::NodeBits& counted,
                     NodeAddresses addresses, const DumpValues& values, std::size_t top,
                     ContentFindings& out) {
    if (!values.available || !values.source) return;  // PHD, classic: nothing was read
    const std::vector<NodeId> array_nodes = nodes_of(values.arrays, addresses);
    // A member's value array's size, from its word (Member).
    auto array_bytes = [&](const Member& m) { return g.shallow_bytes.size_of(m.value, array_nodes[m.array]); };
    const std::vector<NodeId> value_index = value_arrays(values);
    // One set of members at a time: the strings' go before the arrays' are made.
    Members strings = string_members(g, counted, addresses, values, value_index, array_nodes);
    keep_possible_duplicates(strings);
    sort_members(strings);
    // Values are decoded for the rows kept only: decoding every group would read the file
    // again in random order.
    TopRows<std::pair<DuplicateString, Member>, decltype(&most_wasted<DuplicateString>)> string_rows(
        top, most_wasted<DuplicateString>);
    std::vector<std::pair<NodeId, std::uint64_t>> group_arrays;  // of a group: reused, not allocated per group
    for_each_group(strings, [&](auto first, auto last) {
        DuplicateString d;
        d.count = static_cast<std::uint64_t>(last - first);
        // Each distinct value array once (strings may share one), with its size.
        group_arrays.clear();
        for (auto m = first; m != last; ++m) {
            d.wasted_bytes += m->own_bytes(g);
            group_arrays.push_back({m->array, array_bytes(*m)});
        }
        std::sort(group_arrays.begin(), group_arrays.end());
        group_arrays.erase(std::unique(group_arrays.begin(), group_arrays.end()), group_arrays.end());
        d.arrays = group_arrays.size();
        for (const auto& [a, bytes] : group_arrays) d.wasted_bytes += bytes;
        d.wasted_bytes -= first->own_bytes(g) + array_bytes(*first);
        d.length = first->units;
        d.example = first->node;
        out.string_wasted_bytes += d.wasted_bytes;
        ++out.string_groups;
        string_rows.add({d, *first});
    });
    strings = {};
    for (auto& [d, first] : string_rows.take()) {
        d.value = utf8_from_java_chars(contents(values, first, char_width(first)), static_cast<JavaChars>(first.kind),
                                       kValueChars, &d.value_cut);
        out.duplicate_strings.push_back(std::move(d));
    }

    Members arrays = array_members(g, counted, array_nodes, values, value_index);
    keep_possible_duplicates(arrays);
    sort_members(arrays);
    TopRows<std::pair<DuplicateArray, Member>, decltype(&most_wasted<DuplicateArray>)> array_rows(
        top, most_wasted<DuplicateArray>);
    for_each_group(arrays, [&](auto first, auto last) {
        DuplicateArray d;
        d.example = first->node;
        d.count = static_cast<std::uint64_t>(last - first);
        d.length = first->units;
        for (auto m = first + 1; m != last; ++m) d.wasted_bytes += m->own_bytes(g);
        out.array_wasted_bytes += d.wasted_bytes;
        ++out.array_groups;
        array_rows.add({d, *first});
    });
    for (auto& [d, first] : array_rows.take()) {
        d.first_elements = first_elements(contents(values, first, basic_type_size(static_cast<std::uint8_t>(first.kind), 4)),
                                          static_cast<std::uint8_t>(first.kind), d.length);
        out.duplicate_arrays.push_back(std::move(d));
    }
    out.split_arrays = values.split_arrays;
}

}  // namespace heapgraph::analysis
