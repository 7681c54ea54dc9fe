// Each node's kind and class in one 32-bit word: the class index in the low 30 bits, the
// kind in the top 2. 4 bytes a node where a kind column beside a class column took 5; the
// loaders refuse a dump with more classes than 30 bits number (docs/heap-graph.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "column.h"

namespace heapgraph::graph {

enum class NodeKind : std::uint8_t { instance, object_array, primitive_array, class_object };

class NodeTypes {
public:
    static constexpr std::uint64_t kMaxClasses = std::uint64_t{1} << 30;

    NodeKind kind(std::size_t v) const { return static_cast<NodeKind>(words_[v] >> kKindShift); }
    std::uint32_t class_index(std::size_t v) const { return words_[v] & kClassMask; }
    // Safe from several threads for distinct nodes.
    void set(std::size_t v, NodeKind kind, std::uint32_t class_index) { words_[v] = word(kind, class_index); }
    void assign(std::size_t n, NodeKind kind, std::uint32_t class_index) { words_.assign(n, word(kind, class_index)); }
    void push_back(NodeKind kind, std::uint32_t class_index) { words_.push_back(word(kind, class_index)); }

    std::size_t size() const { return words_.size(); }
    template <typename Archive>
    void keep(Archive& archive) {  // the index's file (pipeline/kept_dump.cpp)
        archive.io(words_);
    }
    void release_pages() const { words_.release_pages(); }
    void release_pages(std::size_t first, std::size_t last) const { words_.release_pages(first, last); }

private:
    static constexpr unsigned kKindShift = 30;
    static constexpr std::uint32_t kClassMask = (std::uint32_t{1} << kKindShift) - 1;
    static std::uint32_t word(NodeKind kind, std::uint32_t class_index) {
        return static_cast<std::uint32_t>(kind) << kKindShift | (class_index & kClassMask);
    }
    Column<std::uint32_t> words_;
};

}  // namespace heapgraph::graph
