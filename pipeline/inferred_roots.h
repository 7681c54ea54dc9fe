// The builder's step for dumps that record no class loaders and no GC roots (PHD, classic
// text): both are worked out as OpenJ9's DTFJ and Eclipse MAT do (inferred_roots.cpp,
// docs/heap-graph.md).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "heap_builder.h"

namespace heapgraph {

struct InferredParts {
    std::optional<Javacore> javacore;   // thread roots and class loaders, when given
    // Of the class records, as written ("java/lang/String"). A record's refs list its super
    // class first when it has one.
    std::vector<std::string> raw_names;
};

class InferredLoaders {
public:
    InferredLoaders(const InferredParts& parts, BuiltHeap heap, const std::unordered_map<ObjectId, std::uint32_t>& records);

    // Step 2: each class record's loader, and the bootstrap loader (before array classes
    // take their element's loader).
    void assign();
    // Step 5: MAT's DTFJ model: a loader references every class it defines, and each class
    // its loader; edges the records already hold are not added twice.
    void link(std::vector<graph::Edge>& extra_edges);
    // After step 6: the bootstrap loader and its classes, the javacore's live threads, and
    // every object nothing else references.
    void add_roots(Warnings& warnings);

private:
    std::vector<std::uint8_t> find_loader_classes() const;
    std::vector<std::uint8_t> extends_class_loader() const;
    std::uint64_t find_loader_objects(const std::vector<std::uint8_t>& is_loader_class,
                                      const std::unordered_set<ObjectId>& javacore_objects);
    std::span<const ObjectId> statics(std::uint32_t record) const;
    ObjectId loader_named_by(std::uint32_t record, bool use_first) const;
    void apply_javacore(const Javacore& core, std::optional<std::uint32_t> jlc);
    std::optional<std::uint32_t> class_of_loader(ObjectId object);
    std::optional<std::uint32_t> record_named(const std::string& java_name) const;
    std::optional<std::uint32_t> record_at(ObjectId address) const;
    bool bootstrap(std::uint32_t record) const;
    ObjectId effective_loader(std::uint32_t record) const;
    bool held(ObjectId from, graph::NodeId to) const;

    const InferredParts& parts_;
    BuiltHeap heap_;
    const std::vector<HeapClass>& records_;
    const std::unordered_map<ObjectId, std::uint32_t>& by_address_;
    std::unordered_map<ObjectId, std::uint32_t> loaders_;  // loader object -> its class record
    std::unordered_map<ObjectId, std::uint32_t> javacore_loader_class_;
    // The references of loader objects (and of the objects a javacore names as loaders).
    std::unordered_map<ObjectId, std::vector<ObjectId>> loader_refs_;
    std::vector<ObjectId> loader_of_;  // per class record; 0: none found
    std::optional<ObjectId> boot_;     // the bootstrap loader's object, when one is found
};

}  // namespace heapgraph
