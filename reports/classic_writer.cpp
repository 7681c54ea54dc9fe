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
//
// Every type name is written so that the classic reader (formats/classic.cpp) reads it back,
// and reads back the same kind of object: a name is one token of bytes above 0x20, so blanks
// become '_' and other control bytes and DEL "\xnn" (lower-case hex); a name that starts
// with '[' without being an array type ("[" alone, or an instance's "[I") has that '['
// written as "\x5b", or it would read as an array; an object array whose name would not read
// as one is written "[L<name>;" ("[Lint;" for int[]); a name longer than a class name can be
// (65535 bytes) is cut and ends "~" and 16 hex digits of a hash of the whole, so names stay
// apart. Each class so changed is counted (ClassicWritten) for the caller.
// "// Breakdown" counts by kind as the summary does ("[[I" is an object array).
#include <array>
#include <cstdio>

#include "formats.h"
#include "fnv1a.h"
#include "reports.h"

namespace heapgraph::reports {

namespace {

struct Counts {
    std::uint64_t classes = 0, objects = 0, object_arrays = 0, primitive_arrays = 0;
    std::uint64_t refs = 0, nulls = 0;  // as OpenJ9 counts: refs include the nulls
};

constexpr std::size_t kMaxClassNameBytes = 65535;  // a constant-pool UTF8 entry

// `name` cut to `limit` bytes: its start (not ending inside a UTF-8 sequence), "~", the whole
// name's hash in 16 hex digits, then `tail`.
std::string cut_name(const std::string& name, std::size_t limit, std::string_view tail) {
    char hash[24];
    std::snprintf(hash, sizeof hash, "~%016llx", static_cast<unsigned long long>(fnv1a(name)));
    std::size_t keep = limit - 17 - tail.size();
    while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
    return name.substr(0, keep) + hash + std::string(tail);
}

// A token longer than the reader takes, cut; an array type keeps its '[' and ';'.
std::string fit(std::string token) {
    if (token.size() <= kClassicMaxTypeBytes) return token;
    return cut_name(token, kClassicMaxTypeBytes, token.starts_with('[') ? ";" : "");
}

// A class name without its array dimensions, as one token the reader keeps whole (see the
// file comment); `changed` is set when more than '.' -> '/' was needed.
std::string readable_leaf(std::string_view leaf, bool& changed) {
    std::string out;
    out.reserve(leaf.size());
    for (std::size_t i = 0; i < leaf.size(); ++i) {
        auto c = static_cast<unsigned char>(leaf[i]);
        if (c == '.') {
            out += '/';
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            out += '_', changed = true;
        } else if (c < 0x20 || c == 0x7F || (i == 0 && c == '[')) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
            out += escaped, changed = true;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (out.size() <= kMaxClassNameBytes) return out;
    changed = true;
    return cut_name(out, kMaxClassNameBytes, "");
}

// An array's element as its type writes it: "I" for int, "Ljava/lang/String;" for a class.
std::string element_code(std::string_view name, bool& changed) {
    static const std::array<std::pair<std::string_view, char>, 8> kPrimitives{{
        {"boolean", 'Z'}, {"char", 'C'}, {"float", 'F'}, {"double", 'D'},
        {"byte", 'B'}, {"short", 'S'}, {"int", 'I'}, {"long", 'J'}}};
    for (const auto& [primitive, code] : kPrimitives)
        if (name == primitive) return std::string(1, code);
    std::string code(1, 'L');  // appended, not "L" + ...: gcc 12 warns falsely of an overlap
    code += readable_leaf(name, changed);
    code += ';';
    return code;
}

// "java.lang.String" -> "java/lang/String"; "int[][]" -> "[[I"; "java.lang.String[]" ->
// "[Ljava/lang/String;".
std::string jvm_type(const std::string& java_name, bool& changed) {
    std::string_view name = java_name;
    std::string prefix;
    while (name.ends_with("[]")) {
        prefix += '[';
        name.remove_suffix(2);
    }
    std::string type = prefix.empty() ? readable_leaf(name, changed) : prefix + element_code(name, changed);
    if (type.size() > kClassicMaxTypeBytes) changed = true;  // over 255 dimensions
    return fit(std::move(type));
}

ObjectKind object_kind(graph::NodeKind kind) {
    if (kind == graph::NodeKind::object_array) return ObjectKind::object_array;
    if (kind == graph::NodeKind::primitive_array) return ObjectKind::primitive_array;
    return ObjectKind::instance;
}

// The type of an OBJ of this kind whose class is written `type`, when the reader would take
// `type` for another kind. An object array of a class "int[]" becomes "[Lint;", which reads
// back as of class "int[]" again. Primitive arrays need none: every loader names their
// classes "<primitive>[]".
std::string as_kind(const std::string& java_name, const std::string& type, graph::NodeKind kind) {
    if (kind == graph::NodeKind::instance && type.starts_with('[')) return fit("\\x5b" + type.substr(1));
    if (kind != graph::NodeKind::object_array) return type;
    std::string element = java_name.ends_with("[]") ? java_name.substr(0, java_name.size() - 2) : type;
    return fit("[L" + element + ";");
}

class ClassicWriter {
public:
    ClassicWriter(const ClassicOutput& in, std::ostream& out) : in_(in), out_(out) {}

    ClassicWritten write() {
        out_ << "// Version: " << one_line(in_.version);
        const graph::HeapGraph& g = in_.graph;
        name_classes();
        for (graph::NodeId v = 0; v < g.node_count(); ++v)
            if (g.types.kind(v) != graph::NodeKind::class_object) object(v);
        for (std::uint32_t c = 0; c < g.classes.size(); ++c)
            if (g.classes[c].node != graph::kNoNode) record(g.classes[c].node, "CLS", types_[c], graph::kNoNode);
        out_ << "\n// Breakdown - Classes: " << counts_.classes << ", Objects: " << counts_.objects
             << ", ObjectArrays: " << counts_.object_arrays << ", PrimitiveArrays: " << counts_.primitive_arrays << "\n";
        std::uint64_t total = counts_.classes + counts_.objects + counts_.object_arrays + counts_.primitive_arrays;
        out_ << "// EOF:  Total 'Objects',Refs(null) : " << total << "," << counts_.refs << "(" << counts_.nulls << ")\n";
        if (!out_) throw std::runtime_error("cannot write the classic heapdump");
        return rewritten();
    }

private:
    static std::string one_line(std::string text) {
        for (char& c : text)
            if (c == '\n' || c == '\r') c = ' ';
        return text;
    }

    void name_classes() {
        const graph::HeapGraph& g = in_.graph;
        types_.resize(g.classes.size());
        rewritten_.assign(g.classes.size(), 0);
        for (std::uint32_t c = 0; c < g.classes.size(); ++c) {
            bool changed = false;
            types_[c] = jvm_type(g.classes[c].name, changed);
            rewritten_[c] = changed;
        }
    }

    ClassicWritten rewritten() const {
        ClassicWritten result;
        for (std::uint32_t c = 0; c < rewritten_.size(); ++c) {
            if (!rewritten_[c]) continue;
            ++result.names_rewritten;
            if (result.examples.size() < 3) result.examples.push_back(types_[c].substr(0, 80));
        }
        return result;
    }

    // Counted by kind, as the summary counts: "[[I" is an object array (OpenJ9 counts it by its
    // leaf type as a primitive array; the reader accepts either).
    void object(graph::NodeId v) {
        const graph::HeapGraph& g = in_.graph;
        std::uint32_t c = g.types.class_index(v);
        graph::NodeKind kind = g.types.kind(v);
        if (kind == graph::NodeKind::instance) ++counts_.objects;
        else if (kind == graph::NodeKind::object_array) ++counts_.object_arrays;
        else ++counts_.primitive_arrays;
        if (classic_type_kind(types_[c]) == object_kind(kind)) return record(v, "OBJ", types_[c], g.classes[c].node);
        std::string type = as_kind(g.classes[c].name, types_[c], kind);
        rewritten_[c] |= type != types_[c];
        record(v, "OBJ", type, g.classes[c].node);
    }

    void record(graph::NodeId v, const char* kind, const std::string& type, graph::NodeId class_node) {
        const graph::HeapGraph& g = in_.graph;
        if (kind[0] == 'C') ++counts_.classes;
        out_ << '\n';
        address(in_.addresses[v]);
        out_ << " [" << g.shallow_bytes[v] << "] " << kind << ' ' << type << '\n';
        std::span<const graph::NodeId> refs = g.out.of(v);
        if (!refs.empty() && refs.front() == g.classes[g.types.class_index(v)].node) refs = refs.subspan(1);
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
    std::vector<std::string> types_;         // by class index: CLS records, and OBJ records mostly
    std::vector<std::uint8_t> rewritten_;    // by class index: its name was changed to be read back
};

}  // namespace

ClassicWritten write_classic(const ClassicOutput& in, std::ostream& out) { return ClassicWriter(in, out).write(); }

}  // namespace heapgraph::reports

namespace heapgraph::reports {

std::string rewritten_names_line(const ClassicWritten& written) {
    std::string line = std::to_string(written.names_rewritten) + " class names rewritten for classic text:";
    for (const std::string& name : written.examples) line += " " + name;
    return line + (written.names_rewritten > written.examples.size() ? " ..." : "");
}

}  // namespace heapgraph::reports
