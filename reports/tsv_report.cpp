// One line per node: id (hex address), kind, class, shallow_bytes. Class objects are lines
// too (kind "class", class column naming the class they describe) so later columns such as
// idom can always point at a line of the file.
#include <cstdio>

#include "reports.h"

namespace heapgraph::reports {

namespace {

const char* kind_name(graph::NodeKind kind) {
    switch (kind) {
        case graph::NodeKind::instance: return "instance";
        case graph::NodeKind::object_array: return "object_array";
        case graph::NodeKind::primitive_array: return "primitive_array";
        case graph::NodeKind::class_object: return "class";
    }
    return "?";
}

// Class names come from the dump: tabs or newlines in them would break the columns.
std::string tsv_field(const std::string& text) {
    std::string out = text;
    for (char& c : out)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return out;
}

}  // namespace

void write_objects_tsv(const Analysis& a, std::ostream& out) {
    std::vector<std::uint32_t> described(a.graph.node_count(), 0);
    for (std::uint32_t c = 0; c < a.graph.classes.size(); ++c)
        if (a.graph.classes[c].node != graph::kNoNode) described[a.graph.classes[c].node] = c;
    const graph::DominatorTree& tree = a.retained.tree;
    out << "id\tkind\tclass\tshallow_bytes\tretained_bytes\tretained_objects\tidom\n";
    char id[24];
    for (graph::NodeId v = 0; v < a.graph.node_count(); ++v) {
        bool is_class = a.graph.kind[v] == graph::NodeKind::class_object;
        std::snprintf(id, sizeof id, "0x%llx", static_cast<unsigned long long>(a.addresses[v]));
        out << id << '\t' << kind_name(a.graph.kind[v]) << '\t'
            << tsv_field(a.graph.classes[is_class ? described[v] : a.graph.class_index[v]].name) << '\t'
            << a.graph.shallow_bytes[v] << '\t' << tree.retained_bytes[v] << '\t'
            << tree.retained_objects[v] << '\t';
        graph::NodeId idom = tree.idom[v];
        if (idom == graph::kSuperRoot) {
            out << "root";
        } else if (idom != graph::kUnreached) {
            std::snprintf(id, sizeof id, "0x%llx", static_cast<unsigned long long>(a.addresses[idom]));
            out << id;
        }  // left empty: not in the dominator tree (unreachable)
        out << '\n';
    }
}

}  // namespace heapgraph::reports
