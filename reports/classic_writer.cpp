// Any loaded heap as an IBM classic text heapdump, in the layout of OpenJ9's writer
// (runtime/rasdump/heapdump_classic.c, read for facts, not copied) or of the IBM SDK 6
// document (../shared/specs/ibm-classic-heapdump.txt):
//
//   // Version: <text>                          no newline: each record starts with one
//   0x00000000E0000AF0 [16] OBJ java/lang/String
//   \t0x00000000E0000B00                         openj9: a tab, then "0x<ref> " per reference
//   0x00000000E00174F0 [80] CLS java/util/Date
//   \t0x00000000FFF1BB60 0x00000000FFF29630
//   // Breakdown - Classes: 1, Objects: 1, ObjectArrays: 0, PrimitiveArrays: 0
//   // EOF:  Total 'Objects',Refs(null) : 2,3(0)
//
// Objects come first in address order, then classes in the graph's class order (the dump's
// own order, which IBM loaders depend on), as OpenJ9 writes them. Addresses are upper-case
// hex padded to the word size. The sdk variant puts the class first among an object's
// references on a line of its own, without the tab. The graph keeps no null references, so
// none are written (but an sdk class block we lack); every reference the graph holds is
// written, except an object's edge to its own class, which the type name already says.
#include <array>
#include <cstdio>

#include "reports.h"

namespace heapgraph::reports {

namespace {

struct Counts {
    std::uint64_t classes = 0, objects = 0, object_arrays = 0, primitive_arrays = 0;
    std::uint64_t refs = 0, nulls = 0;  // as OpenJ9 counts: refs include the nulls
};

// "java.lang.String" -> "java/lang/String"; "int[][]" -> "[[I"; "java.lang.String[]" ->
// "[Ljava/lang/String;". Blanks (only in names we made up) would split the record's tokens.
std::string jvm_type(const std::string& java_name) {
    static const std::array<std::pair<std::string_view, char>, 8> kPrimitives{{
        {"boolean", 'Z'}, {"char", 'C'}, {"float", 'F'}, {"double", 'D'},
        {"byte", 'B'}, {"short", 'S'}, {"int", 'I'}, {"long", 'J'}}};
    std::string_view name = java_name;
    std::string prefix;
    while (name.ends_with("[]")) {
        prefix += '[';
        name.remove_suffix(2);
    }
    std::string leaf(name);
    for (char& c : leaf)
        if (c == '.') c = '/';
        else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
    if (prefix.empty()) return leaf;
    for (const auto& [primitive, code] : kPrimitives)
        if (name == primitive) return prefix + code;
    return prefix + "L" + leaf + ";";
}

class ClassicWriter {
public:
    ClassicWriter(const ClassicOutput& in, std::ostream& out) : in_(in), out_(out) {}

    void write() {
        out_ << "// Version: " << in_.version;
        const graph::HeapGraph& g = in_.graph;
        for (graph::NodeId v = 0; v < g.node_count(); ++v)
            if (g.kind[v] != graph::NodeKind::class_object) object(v);
        for (const graph::ClassInfo& c : g.classes)
            if (c.node != graph::kNoNode) record(c.node, "CLS", c.name, graph::kNoNode);
        out_ << "\n// Breakdown - Classes: " << counts_.classes << ", Objects: " << counts_.objects
             << ", ObjectArrays: " << counts_.object_arrays << ", PrimitiveArrays: " << counts_.primitive_arrays << "\n";
        std::uint64_t total = counts_.classes + counts_.objects + counts_.object_arrays + counts_.primitive_arrays;
        out_ << "// EOF:  Total 'Objects',Refs(null) : " << total << "," << counts_.refs << "(" << counts_.nulls << ")\n";
        if (!out_) throw std::runtime_error("cannot write the classic heapdump");
    }

private:
    void object(graph::NodeId v) {
        const graph::HeapGraph& g = in_.graph;
        const graph::ClassInfo& cls = g.classes[g.class_index[v]];
        std::string type = jvm_type(cls.name);
        // OpenJ9 counts by the leaf type: "[[I" is a primitive array.
        if (g.kind[v] == graph::NodeKind::instance) ++counts_.objects;
        else if (type.find('L') == type.find_first_not_of('[')) ++counts_.object_arrays;
        else ++counts_.primitive_arrays;
        record(v, "OBJ", cls.name, cls.node);
    }

    void record(graph::NodeId v, const char* kind, const std::string& java_name, graph::NodeId class_node) {
        const graph::HeapGraph& g = in_.graph;
        if (kind[0] == 'C') ++counts_.classes;
        out_ << '\n';
        address(in_.addresses[v]);
        out_ << " [" << g.shallow_bytes[v] << "] " << kind << ' ' << jvm_type(java_name) << '\n';
        std::span<const graph::NodeId> refs = g.out.of(v);
        if (!refs.empty() && refs.front() == g.classes[g.class_index[v]].node) refs = refs.subspan(1);
        if (in_.sdk) {
            if (kind[0] == 'O') reference(class_node == graph::kNoNode ? 0 : in_.addresses[class_node]);
        } else {
            out_ << '\t';
        }
        for (graph::NodeId to : refs) reference(in_.addresses[to]);
    }

    // sdk: a class with no class object in the dump (PHD array classes) is written as null.
    void reference(std::uint64_t address_value) {
        address(address_value);
        out_ << ' ';
        ++counts_.refs;
        counts_.nulls += address_value == 0;
    }

    void address(std::uint64_t value) {
        char text[24];
        std::snprintf(text, sizeof text, "0x%0*llX", in_.word_bytes == 4 ? 8 : 16, static_cast<unsigned long long>(value));
        out_ << text;
    }

    const ClassicOutput& in_;
    std::ostream& out_;
    Counts counts_;
};

}  // namespace

void write_classic(const ClassicOutput& in, std::ostream& out) { ClassicWriter(in, out).write(); }

}  // namespace heapgraph::reports
