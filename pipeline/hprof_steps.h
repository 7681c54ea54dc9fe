// The builder's HPROF steps (heap_builder.h): HPROF names classes through LOAD CLASS and
// STRING records, records no sizes (the size model is chosen from address gaps), and its
// layouts name fields and find Reference.referent for leak-suspect paths.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "heap_builder.h"

namespace heapgraph {

// A class's name as its LOAD CLASS record gives it: a string id, and where the record lies.
struct ClassNameRef {
    ObjectId name_id = 0;
    std::uint64_t record_offset = 0;
};

// A STRING record's text as UTF-8, and the Java name of a class by its LOAD CLASS record
// ("" when the dump gives none): the decode asks them of the top-level records, the steps
// of HprofParts.
std::string hprof_string(const std::unordered_map<ObjectId, std::string_view>& strings, ObjectId id);
std::string hprof_class_name(const std::unordered_map<ObjectId, std::string_view>& strings,
                             const std::unordered_map<ObjectId, ClassNameRef>& class_names, ObjectId class_id);

struct HprofParts {
    const std::unordered_map<ObjectId, std::string_view>& strings;  // modified UTF-8, as dumped
    const std::unordered_map<ObjectId, ClassNameRef>& class_names;  // by class id
    std::vector<ClassDump> classes;  // in file order: class ordinal i+1 is classes[i]
    Bytes file = {};                 // the whole file: referents are read back from it
    std::uint32_t id_size = 8;
    ClassLayouts layouts = {};
    // Instances kept without their fields (a cut dump lost their class dumps), and how many
    // classes they belong to.
    std::uint64_t unreadable_instances = 0, unreadable_classes = 0;
};

// The HPROF sink driver's second half: class dumps become class records, the blocks' sub-record
// counts go to info.sub_records, and the classes without a class dump get their keys.
HeapParts hprof_heap_parts(HprofParts& hprof, std::vector<EdgeBlock> blocks, DumpInfo& info);

// Step 4: the size model whose sizes match the most address gaps; sets every node's
// shallow size, info.compressed_oops and info.size_model.
void set_hprof_sizes(const BuiltHeap& heap, const HprofParts& hprof, DumpInfo& info);

// Step 7: field names per class, and the weak edges ((Reference, referent) read back from
// the file, Finalizer.unfinalized), sorted.
graph::FieldNames hprof_field_names(const BuiltHeap& heap, const HprofParts& hprof);
std::vector<graph::Edge> hprof_weak_edges(const BuiltHeap& heap, const HprofParts& hprof, Warnings& warnings);

}  // namespace heapgraph
