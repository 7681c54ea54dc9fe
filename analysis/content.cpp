// Duplicate strings and arrays, from the value reader's records (pipeline/values.h).
//
// Strings: every java.lang.String the report counts (in the dominator tree) is keyed by a
// hash of its contents (its array's hash, or its slice's for a JDK 6 substring), their byte
// length and encoding. Equal keys are then compared byte for byte, so a hash collision never
// joins two values. A group's waste is every String but one and every distinct backing
// array but one: copies that share one array waste only their String objects.
// Arrays: primitive arrays that are no String's value, grouped by type, length and contents
// the same way; a group wastes all its arrays but one. docs/report-schema.md says where this
// differs from Eclipse MAT.
#include "content.h"

#include "bucket_sort.h"
#include "byte_reader.h"
#include "edge_names.h"
#include "mapped_file.h"
#include "top_rows.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

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
    std::uint64_t hash = 0, bytes = 0;
    std::uint32_t kind = 0;  // strings: JavaChars; arrays: element type
    NodeId node = kNoNode;
    NodeId array = 0;        // index into DumpValues::arrays
    std::uint32_t own = 0;   // the node's shallow size word (graph::ShallowSizes::word)
    std::uint64_t position = 0;  // file offset of the contents' first byte (never of a split array)
    std::uint32_t value = 0; // strings: the value array's shallow size word (0: not in the graph)

    std::uint64_t own_bytes(const graph::HeapGraph& g) const { return g.shallow_bytes.size_of(own, node); }

    bool same_key(const Member& o) const { return hash == o.hash && bytes == o.bytes && kind == o.kind; }
    bool operator<(const Member& o) const {
        return std::tie(hash, bytes, kind, node) < std::tie(o.hash, o.bytes, o.kind, o.node);
    }
};

// A column (graph/column.h): one per String or array to group, which past the memory
// budget goes to a file.
using Members = graph::Column<Member>;

// By key: the hash's top bits spread them over buckets (graph/bucket_sort.h).
void sort_members(Members& members) {
    graph::bucket_sort(members, [](const Member& m, int bits) { return m.hash >> (64 - bits); }, std::less<Member>());
}

class Grouper {
public:
    explicit Grouper(const DumpValues& values) : values_(values) {}

    Bytes contents(const Member& m) const { return contents(m.position, m.bytes); }

    // Whether each member differs from the first of its run in file order, for several member
    // sets at once: one sweep reads each page of the dump once, where a sweep a set would
    // read the file's pages again for each (the sets' contents lie side by side). Set k's
    // members come at [offset_k, offset_k + size_k), the sets' sizes summed before it.
    //
    // The visits in file order are cut into a slice per core, each swept on its own. A run's
    // first in a later slice is then compared with its first in the earliest slice that has
    // one; where they differ, every member of the run in the later slice is marked. That
    // marks more than a single sweep would only in runs that hold two contents, which are
    // split by contents anyway: the groups are the same for any number of slices.
    std::vector<std::uint8_t> check(std::initializer_list<const Members*> sets) const {
        std::size_t total = 0;
        for (const Members* members : sets) total += members->size();
        // A column: past the memory budget it and its sort's scratch copy go to files (on the
        // 8x replica at --memory-limit 2G, 2.2 GB of the values stage's anonymous memory).
        graph::Column<Visit> order;
        order.reserve(total);
        NodeId runs = 0;
        std::vector<std::uint64_t> run_bytes;  // every member of a run has its first's length
        std::size_t offset = 0;
        for (const Members* members : sets) {
            for_each_run(*members, [&](std::size_t begin, std::size_t end) {
                for (std::size_t i = begin; i < end; ++i)
                    order.push_back({(*members)[i].position, static_cast<NodeId>(offset + i), runs});
                run_bytes.push_back((*members)[begin].bytes);
                ++runs;
            });
            offset += members->size();
        }
        return check_in_file_order(order, run_bytes, total);
    }

    // Calls group(first, last) for every run of two or more members with equal contents,
    // `members` sorted by key and `differs` its part of check(). A run with no member marked
    // is one group; a run a hash collision mixed is sorted by contents and split.
    template <typename Group>
    void for_each_group(Members& members, std::span<const std::uint8_t> differs, Group&& group) const {
        for_each_run(members, [&](std::size_t begin, std::size_t end) {
            auto first = members.begin() + static_cast<std::ptrdiff_t>(begin);
            auto last = members.begin() + static_cast<std::ptrdiff_t>(end);
            if (std::none_of(differs.begin() + static_cast<std::ptrdiff_t>(begin),
                             differs.begin() + static_cast<std::ptrdiff_t>(end), [](std::uint8_t d) { return d; })) {
                group(first, last);
                return;
            }
            split_by_contents(first, last);
            for (auto run = first; run != last;) {
                auto stop = std::find_if(run + 1, last, [&](const Member& m) { return !equal(m, *run); });
                if (stop - run >= 2) group(run, stop);
                run = stop;
            }
        });
    }

private:
    // Calls run(begin, end) for each run of two or more members with one key.
    template <typename Run>
    static void for_each_run(const Members& members, Run&& run) {
        for (std::size_t begin = 0, end; begin < members.size(); begin = end) {
            end = begin + 1;
            while (end < members.size() && members[end].same_key(members[begin])) ++end;
            if (end - begin >= 2) run(begin, end);
        }
    }

    Bytes contents(std::uint64_t position, std::uint64_t bytes) const {
        const Bytes file = values_.source->file;
        return position <= file.size() && bytes <= file.size() - position ? file.subspan(position, bytes) : Bytes{};
    }

    // A member's contents in the file: the sweep reads them in file order from here, not
    // from the member (members lie in hash order: a cache miss each). Its length is its
    // run's (every member of a run has the same).
    struct Visit {
        std::uint64_t position;
        NodeId member, run;
    };
    // A sweep over a slice of the visits, in file order: the first member of each run in the
    // slice, and its contents copied (up to 1 MiB; a larger one is read again where it lies).
    struct Sweep {
        std::vector<std::uint8_t> seen;  // whether the run has a member in the slice
        // Where the first member's contents start: in `copies`, or in the file past kCopyLimit;
        // kNowhere when they were not in the file.
        std::vector<std::uint64_t> copy_at;
        std::string copies;                  // one buffer, not a string (and an allocation) a run
    };
    static constexpr std::uint64_t kCopyLimit = 1u << 20, kNowhere = ~std::uint64_t{0};

    // The contents of a run's first member in the slice: `bytes` long, as every member of a
    // run is.
    Bytes first_contents(const Sweep& s, NodeId run, std::uint64_t bytes) const {
        if (s.copy_at[run] == kNowhere) return {};
        if (bytes > kCopyLimit) return contents(s.copy_at[run], bytes);
        return {reinterpret_cast<const std::uint8_t*>(s.copies.data()) + s.copy_at[run], bytes};
    }

    // Marks each member of `visits` that differs from its run's first member in the slice.
    // The pages behind the sweep are released every `release_step` bytes, as the loader
    // releases them, so a sweep costs the memory of its copies, not of the file; the pages
    // ahead are asked for a window at a time, so that a dump not in the page cache is read in
    // large requests, not fault by fault.
    void sweep(std::span<const Visit> visits, std::span<const std::uint64_t> run_bytes, Sweep& s,
               std::vector<std::uint8_t>& differs, std::uint64_t release_step) const {
        const Bytes file = values_.source->file;
        ReleaseBehind behind(file, values_.source->release_pages, visits.empty() ? 0 : visits.front().position,
                             release_step, release_step);
        for (const Visit& v : visits) {
            behind.at(v.position);
            const std::uint64_t bytes = run_bytes[v.run];
            Bytes here = contents(v.position, bytes);
            if (!s.seen[v.run]) {
                s.seen[v.run] = 1;
                s.copy_at[v.run] = here.size() != bytes ? kNowhere : here.size() <= kCopyLimit ? s.copies.size() : v.position;
                if (here.size() <= kCopyLimit) s.copies.append(reinterpret_cast<const char*>(here.data()), here.size());
            } else {
                Bytes kept = first_contents(s, v.run, bytes);
                differs[v.member] = kept.size() != here.size() || std::memcmp(kept.data(), here.data(), here.size()) != 0;
            }
        }
    }

    // check(): `order` (a visit per member of a run, `members` in all) sorted into file order
    // and swept, a slice per core.
    std::vector<std::uint8_t> check_in_file_order(graph::Column<Visit>& order, std::span<const std::uint64_t> run_bytes,
                                                  std::size_t members) const {
        const NodeId runs = static_cast<NodeId>(run_bytes.size());
        const int width = static_cast<int>(std::bit_width(values_.source->file.size()));
        graph::bucket_sort(
            order, [width](const Visit& v, int bits) { return width <= bits ? v.position : v.position >> (width - bits); },
            [](const Visit& a, const Visit& b) { return a.position != b.position ? a.position < b.position : a.member < b.member; });
        const std::size_t slices = std::clamp<std::size_t>(tbb::this_task_arena::max_concurrency(), 1, 8);
        auto slice = [&](std::size_t k) {
            return std::span<const Visit>(order).subspan(k * order.size() / slices,
                                                         (k + 1) * order.size() / slices - k * order.size() / slices);
        };
        std::vector<std::uint8_t> differs(members, 0);
        std::vector<Sweep> sweeps(slices);
        tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t k) {
            sweeps[k].seen.assign(runs, 0);
            sweeps[k].copy_at.assign(runs, 0);
            sweep(slice(k), run_bytes, sweeps[k], differs, (64u << 20) / slices);  // 64 MB of the file at most in all
        });
        std::vector<std::uint8_t> apart(runs);
        for (std::size_t k = 1; k < slices; ++k) {
            std::fill(apart.begin(), apart.end(), 0);
            for (NodeId r = 0; r < runs; ++r) {
                if (!sweeps[k].seen[r]) continue;
                std::size_t j = 0;
                while (j < k && !sweeps[j].seen[r]) ++j;
                if (j == k) continue;
                const std::uint64_t bytes = run_bytes[r];
                Bytes a = first_contents(sweeps[j], r, bytes), b = first_contents(sweeps[k], r, bytes);
                apart[r] = a.size() != b.size() || std::memcmp(a.data(), b.data(), a.size()) != 0;
            }
            for (const Visit& v : slice(k)) differs[v.member] |= apart[v.run];
        }
        return differs;
    }

    bool equal(const Member& a, const Member& b) const {
        Bytes x = contents(a), y = contents(b);
        return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size()) == 0;
    }

    // A hash collision: order the run by contents (then node), so equal contents lie together.
    template <typename It>
    void split_by_contents(It first, It last) const {
        std::sort(first, last, [&](const Member& a, const Member& b) {
            Bytes x = contents(a), y = contents(b);
            int order = std::memcmp(x.data(), y.data(), std::min(x.size(), y.size()));
            return order != 0 ? order < 0 : a.node < b.node;
        });
    }

    const DumpValues& values_;
};

// The strings to group: counted, with a char[] or byte[] value the pass read whole.
Members string_members(const graph::HeapGraph& g, const graph::NodeBits& counted, NodeAddresses addresses,
                       const DumpValues& values, std::span<const NodeId> value_index, std::span<const NodeId> array_nodes) {
    const std::vector<NodeId> nodes = nodes_of(values.strings, addresses);
    Members members;
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
        Member m{a.hash, span->bytes, static_cast<std::uint32_t>(span->chars), nodes[i], static_cast<NodeId>(at),
                 g.shallow_bytes.word(nodes[i]), a.data_offset + span->from,
                 array_node == kNoNode ? 0 : g.shallow_bytes.word(array_node)};
        if (span->bytes != whole.size()) m.hash = content_hash(whole.subspan(span->from, span->bytes));  // a JDK 6 slice
        members.push_back(m);
    }
    return members;
}

// Arrays that back a String are counted with the strings, not again here.
Members array_members(const graph::HeapGraph& g, const graph::NodeBits& counted, std::span<const NodeId> nodes,
                      const DumpValues& values, std::span<const NodeId> value_index) {
    std::vector<std::uint8_t> string_value(values.arrays.size(), 0);
    for (NodeId at : value_index)
        if (at != kNoArray) string_value[at] = 1;
    Members members;
    for (std::size_t i = 0; i < values.arrays.size(); ++i) {
        const ArrayObject& a = values.arrays[i];
        if (nodes[i] == kNoNode || !counted.test(nodes[i]) || string_value[i] || a.data_offset == ArrayObject::kSplit) continue;
        const std::uint64_t bytes = std::uint64_t{a.length} * basic_type_size(a.type, 4);
        members.push_back({a.hash, bytes, a.type, nodes[i], static_cast<NodeId>(i), g.shallow_bytes.word(nodes[i]), a.data_offset});
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
    const Grouper grouper(values);
    const std::vector<NodeId> array_nodes = nodes_of(values.arrays, addresses);
    // A member's value array's size, from its word (Member).
    auto array_bytes = [&](const Member& m) { return g.shallow_bytes.size_of(m.value, array_nodes[m.array]); };
    const std::vector<NodeId> value_index = value_arrays(values);
    Members strings = string_members(g, counted, addresses, values, value_index, array_nodes);
    sort_members(strings);
    Members arrays = array_members(g, counted, array_nodes, values, value_index);
    sort_members(arrays);
    const std::vector<std::uint8_t> differs = grouper.check({&strings, &arrays});
    const std::size_t string_count = strings.size();
    // Values are decoded for the rows kept only: decoding every group would read the file
    // again in random order.
    TopRows<std::pair<DuplicateString, Member>, decltype(&most_wasted<DuplicateString>)> string_rows(
        top, most_wasted<DuplicateString>);
    std::vector<std::pair<NodeId, std::uint64_t>> group_arrays;  // of a group: reused, not allocated per group
    grouper.for_each_group(strings, std::span(differs).first(string_count), [&](auto first, auto last) {
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
        d.length = static_cast<JavaChars>(first->kind) == JavaChars::latin1 ? first->bytes : first->bytes / 2;
        d.example = first->node;
        out.string_wasted_bytes += d.wasted_bytes;
        ++out.string_groups;
        string_rows.add({d, *first});
    });
    strings = {};
    for (auto& [d, first] : string_rows.take()) {
        d.value = utf8_from_java_chars(grouper.contents(first), static_cast<JavaChars>(first.kind), kValueChars, &d.value_cut);
        out.duplicate_strings.push_back(std::move(d));
    }

    TopRows<std::pair<DuplicateArray, Member>, decltype(&most_wasted<DuplicateArray>)> array_rows(
        top, most_wasted<DuplicateArray>);
    grouper.for_each_group(arrays, std::span(differs).subspan(string_count), [&](auto first, auto last) {
        DuplicateArray d;
        d.example = first->node;
        d.count = static_cast<std::uint64_t>(last - first);
        d.length = values.arrays[first->array].length;
        for (auto m = first + 1; m != last; ++m) d.wasted_bytes += m->own_bytes(g);
        out.array_wasted_bytes += d.wasted_bytes;
        ++out.array_groups;
        array_rows.add({d, *first});
    });
    for (auto& [d, first] : array_rows.take()) {
        d.first_elements = first_elements(grouper.contents(first), static_cast<std::uint8_t>(first.kind), d.length);
        out.duplicate_arrays.push_back(std::move(d));
    }
    out.split_arrays = values.split_arrays;
}

}  // namespace heapgraph::analysis
