// The shallow-size model for HPROF (docs/size-model.md). HPROF records no object sizes, so
// they are computed the way the producing HotSpot VM lays objects out: an object header,
// field values with the VM's reference size, and 8-byte alignment; arrays add a length word.
// Class-name conversion from the dump's spellings to Java form lives here too.
#include "formats.h"

namespace heapgraph {

namespace {

std::uint64_t align_up(std::uint64_t value, std::uint32_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

SizeModel make_size_model(std::uint32_t id_size, bool compressed_oops, bool compressed_klass,
                          bool packed_fields, std::uint32_t alignment) {
    SizeModel model;
    model.id_size = id_size;
    model.alignment = alignment;
    model.packed_fields = packed_fields;
    model.compressed_oops = id_size == 8 && compressed_oops;
    model.compressed_klass = id_size == 8 && (compressed_klass || compressed_oops);
    model.reference_bytes = model.compressed_oops ? 4 : id_size;
    model.klass_bytes = model.compressed_klass ? 4 : id_size;
    model.object_header_bytes = id_size + model.klass_bytes;
    // Arrays add a 4-byte length; elements start at the next reference boundary.
    model.array_header_bytes = static_cast<std::uint32_t>(
        align_up(model.object_header_bytes + 4, model.reference_bytes));
    return model;
}

std::string describe(const SizeModel& m) {
    if (m.id_size == 4) return "32-bit";
    std::string text = "64-bit";
    text += m.compressed_oops ? ", compressed oops" : ", uncompressed oops";
    text += m.compressed_klass ? ", compressed class pointers" : ", uncompressed class pointers";
    text += m.packed_fields ? ", packed field layout (JDK 15+)" : ", per-class field layout (JDK 6-14)";
    if (m.alignment != 8) text += ", " + std::to_string(m.alignment) + "-byte alignment";
    return text;
}

// Legacy layout (JDK 6-14, and Eclipse MAT's model): each class level's fields start where
// its super class's fields end, rounded up to the reference size. Packed layout (JDK 15+
// fills super-class gaps): header plus all field bytes. Only the total is aligned.
std::uint64_t level_end(std::uint64_t super_end, ClassLayout::Level own, const SizeModel& model) {
    std::uint64_t own_bytes = own.primitive_bytes + std::uint64_t{own.references} * model.reference_bytes;
    std::uint64_t end = super_end + own_bytes;
    return own_bytes && !model.packed_fields ? align_up(end, model.reference_bytes) : end;
}

// Injected fields are added to the total: exact for the packed layout, where the order of the
// fields does not change it (the builder uses them with that layout only).
std::uint64_t instance_shallow_bytes(std::uint64_t fields_end, const SizeModel& model,
                                     ClassLayout::Level injected) {
    fields_end += injected.primitive_bytes + std::uint64_t{injected.references} * model.reference_bytes;
    return align_up(fields_end, model.alignment);
}

// Here injected fields count first, just after the header.
std::uint64_t instance_shallow_bytes(std::span<const ClassLayout::Level> levels, const SizeModel& model,
                                     ClassLayout::Level injected) {
    std::uint64_t bytes = model.object_header_bytes + injected.primitive_bytes +
                          std::uint64_t{injected.references} * model.reference_bytes;
    for (auto level = levels.rbegin(); level != levels.rend(); ++level) bytes = level_end(bytes, *level, model);
    return align_up(bytes, model.alignment);
}

// From HotSpot's javaClasses.hpp (*_INJECTED_FIELDS, JDK 15-17): intptr fields are 8
// bytes on a 64-bit VM, the others as declared. Subclasses inherit them (the caller walks
// the super classes).
ClassLayout::Level hotspot_injected_fields(std::string_view name) {
    if (name == "java.lang.ClassLoader") return {8, 0};                   // loader_data
    if (name == "java.lang.invoke.MemberName") return {8, 0};             // vmindex
    if (name == "java.lang.invoke.ResolvedMethodName") return {8, 1};     // vmtarget, vmholder
    if (name == "java.lang.invoke.MethodHandleNatives$CallSiteContext") return {16, 0};  // vmdependencies, last_cleanup
    if (name == "java.lang.Module") return {8, 0};                        // module_entry
    if (name == "java.lang.StackTraceElement") return {0, 1};             // declaringClassObject
    if (name == "java.lang.InternalError") return {1, 0};                 // during_unsafe_access
    return {};
}

// Object arrays: header + length + references, unpadded before the elements (MAT's rule;
// the same totals as HotSpot after alignment).
std::uint64_t array_shallow_bytes(std::uint64_t length, std::uint32_t element_bytes,
                                  const SizeModel& model) {
    return align_up(model.array_header_bytes + length * element_bytes, model.alignment);
}

// A class object's own memory is its static fields (as MAT counts it); the java.lang.Class
// mirror's instance fields are not in the dump.
std::uint64_t class_shallow_bytes(const ClassDump& dump, const SizeModel& model) {
    std::uint64_t bytes = 0;
    for (const StaticField& field : dump.statics)
        bytes += field.type == 2 ? model.reference_bytes : basic_type_size(field.type, model.id_size);
    return align_up(bytes, model.alignment);
}

namespace {

std::string_view primitive_from_code(char code) {
    switch (code) {
        case 'Z': return "boolean";
        case 'C': return "char";
        case 'F': return "float";
        case 'D': return "double";
        case 'B': return "byte";
        case 'S': return "short";
        case 'I': return "int";
        case 'J': return "long";
        default: return {};
    }
}

}  // namespace

std::string java_class_name(std::string_view name) {
    std::size_t dims = 0;
    while (dims < name.size() && name[dims] == '[') ++dims;
    std::string base;
    if (dims == 0) {
        base = name;
    } else if (name.size() == dims + 1 && !primitive_from_code(name[dims]).empty()) {
        base = primitive_from_code(name[dims]);
    } else if (name.size() > dims + 2 && name[dims] == 'L' && name.back() == ';') {
        base = name.substr(dims + 1, name.size() - dims - 2);
    } else {
        base = name;  // not a signature after all: keep what the dump says
        dims = 0;
    }
    for (char& c : base)
        if (c == '/') c = '.';
    for (std::size_t i = 0; i < dims; ++i) base += "[]";
    return base;
}

}  // namespace heapgraph
