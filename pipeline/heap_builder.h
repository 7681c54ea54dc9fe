// The one heap builder: what every format's decoder hands over (HeapParts: the class records,
// the chunks' EdgeBlocks filled through BlockSink, and what the format says about itself)
// becomes a LoadedDump: dense node ids in address order, the class table, shallow sizes,
// the outgoing CSR and the GC roots.
//
// Format differences are steps the builder runs when the parts ask for them, not code paths:
//   hprof set        HPROF records no sizes: the size model is chosen from address gaps
//                    (hprof_steps.cpp), and field names and weak edges are read from layouts;
//   inferred set     PHD and classic text record no GC roots and no class loaders: both are
//                    worked out as DTFJ and Eclipse MAT do (inferred_roots.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "edge_blocks.h"
#include "formats.h"
#include "pipeline.h"

namespace heapgraph {

// A class record as a decoder reports it, in any format. Its out row is the edge to
// java.lang.Class, then `refs` in order.
struct HeapClass {
    ObjectId id = 0;           // the class object's address (0: none)
    ObjectId super_id = 0, loader_id = 0;  // as the record gives them (0: none)
    std::string name;          // Java form: "java.lang.String[]"
    std::uint64_t instance_bytes = 0;  // shallow size of an instance, when the format gives it
    std::uint64_t shallow_bytes = 0;   // of the class object, when the format gives it
    std::uint64_t file_offset = 0;
    std::vector<ObjectId> refs;        // null ids are skipped
    // The first refs that are structural links (HPROF: super class and loader): a missing
    // target is skipped without counting it as a dangling reference.
    std::uint32_t links = 0;
};

class Warnings;

// Names, for the objects whose class has no record, that class (a format's own rule:
// HPROF's LOAD CLASS name, classic text's type name, "<unknown class 0x..>").
class ClassNamer {
public:
    virtual ~ClassNamer() = default;
    virtual std::string name_of(ObjectId class_id) = 0;
    virtual void warn(Warnings&) const {}  // what naming met, once the table is made
    // Ids that stand for a class by name (Java form), for classes whose record may come later.
    virtual std::vector<std::pair<ObjectId, std::string>> stand_ins() const { return {}; }
};

// The classes the objects name without a record, in the order they join the class table.
struct ClassKey {
    ObjectKind kind = ObjectKind::instance;  // primitive_array: `id` is the element type
    ObjectId id = 0;
    bool operator==(const ClassKey&) const = default;
};

// Problems counted while building, emitted in one fixed order whatever step found them.
class Warnings {
public:
    void add(std::string code, std::uint64_t count, std::string message);
    std::vector<Warning> in_order() &&;

private:
    std::vector<Warning> found_;
};

struct HprofParts;  // hprof_steps.h
struct InferredParts;  // inferred_roots.h

struct HeapParts {
    std::vector<HeapClass> classes;  // class ordinal i+1 is classes[i]
    std::vector<EdgeBlock> blocks;   // in file order; freed once the CSR is built
    std::vector<ClassKey> class_keys;
    std::unique_ptr<ClassNamer> namer;
    // How objects name their class. HPROF: by an id its decoder already turned into a class
    // ordinal where a class dump has it; ids left are classes without one, each its own
    // class. PHD and classic text (set): by an id the builder looks up among the records
    // (decoders run before all records are known), object arrays by their element class
    // ("<element>[]", the element's loader), and a class is known by its name.
    bool objects_name_records = false;
    // Errors about the records name this ("heap dump", "PHD record", "classic record").
    // The loader's progress callback: the builder draws a bar for each of its steps.
    std::function<void(const ProgressEvent&)> progress;
    std::string record_name = "heap dump";
    std::string null_address = "dumps an object at id 0, which HPROF reserves for null";
    Warnings warnings;
    HprofParts* hprof = nullptr;        // HPROF: sizes from the model, field names, weak edges
    InferredParts* inferred = nullptr;  // PHD, classic: loaders and roots worked out
    DumpLimits limits;  // LoadOptions::limits
};

LoadedDump build_heap(HeapParts& parts, DumpInfo& info);

// The nodes and classes the builder has made so far, for the format steps.
struct BuiltHeap {
    const DumpInfo& info;
    const HeapParts& parts;
    graph::HeapInput& input;
    graph::Csr& out;
    const graph::Column<ObjectId>& addresses;
    const AddressIndex& index;
    std::uint32_t class_of_classes = 0;
    std::uint32_t primitive_class[12] = {};  // by element type

    graph::NodeId node_of(ObjectId address) const {
        graph::NodeId node = address ? index.node_of(address) : AddressIndex::kMissing;
        return node == AddressIndex::kMissing ? graph::kNoNode : node;
    }
};

// Runs `body(block_index)` over all blocks in parallel.
void for_each_block(std::size_t blocks, const std::function<void(std::size_t)>& body);

}  // namespace heapgraph
