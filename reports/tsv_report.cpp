// One line per node: id (hex address), kind, class, shallow_bytes. Class objects are lines
// too (kind "class", class column naming the class they describe) so later columns such as
// idom can always point at a line of the file.
#include <cstdio>
#include <string_view>

#include "reports.h"

namespace heapgraph::reports {

namespace {

// Length of the well-formed UTF-8 sequence at text[at] (RFC 3629: no overlongs, no
// surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_sequence(std::string_view text, std::size_t at) {
    auto byte = [&](std::size_t i) { return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0u; };
    auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) { return byte(i) >= lo && byte(i) <= hi; };
    unsigned b = byte(0);
    if (b >= 0xC2 && b <= 0xDF) return cont(1) ? 2 : 0;
    if (b >= 0xE0 && b <= 0xEF) {
        unsigned lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
        return cont(1, lo, hi) && cont(2) ? 3 : 0;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        unsigned lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
        return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
    }
    return 0;
}

// Class names come from the dump: a tab, a newline or any control character would break the
// columns (it becomes a space), and bytes that are not UTF-8 become U+FFFD, so every line is
// valid UTF-8 text for the tools that read it.
std::string tsv_field(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        unsigned char c = static_cast<unsigned char>(text[at]);
        if (c < 0x80) {
            out += c < 0x20 || c == 0x7F ? ' ' : static_cast<char>(c);
            ++at;
        } else if (std::size_t n = utf8_sequence(text, at)) {
            out.append(text.substr(at, n));
            at += n;
        } else {
            out += "\xEF\xBF\xBD";
            ++at;
        }
    }
    return out;
}

}  // namespace

void write_objects_tsv(const analysis::Findings& a, std::ostream& out) {
    std::vector<std::uint32_t> described(a.graph.node_count(), 0);
    for (std::uint32_t c = 0; c < a.graph.classes.size(); ++c)
        if (a.graph.classes[c].node != graph::kNoNode) described[a.graph.classes[c].node] = c;
    std::vector<std::string> names;  // escaped once per class, not once per object
    for (const graph::ClassInfo& c : a.graph.classes) names.push_back(tsv_field(c.name));
    const graph::DominatorTree& tree = a.retained.tree;
    const graph::Column<std::uint64_t> addresses = a.addresses.column();
    out << "id\tkind\tclass\tshallow_bytes\tretained_bytes\tretained_objects\tidom\n";
    char id[24];
    for (graph::NodeId v = 0; v < a.graph.node_count(); ++v) {
        bool is_class = a.graph.types.kind(v) == graph::NodeKind::class_object;
        std::snprintf(id, sizeof id, "0x%llx", static_cast<unsigned long long>(addresses[v]));
        out << id << '\t' << graph::node_kind_name(a.graph.types.kind(v)) << '\t'
            << names[is_class ? described[v] : a.graph.types.class_index(v)] << '\t'
            << a.graph.shallow_bytes[v] << '\t' << tree.retained_bytes[v] << '\t'
            << tree.retained_objects[v] << '\t';
        graph::NodeId idom = tree.idom[v];
        if (idom == graph::kSuperRoot) {
            out << "root";
        } else if (idom != graph::kUnreached) {
            std::snprintf(id, sizeof id, "0x%llx", static_cast<unsigned long long>(addresses[idom]));
            out << id;
        }  // left empty: not in the dominator tree (unreachable)
        out << '\n';
    }
}

}  // namespace heapgraph::reports
