// Vectors whose large blocks come from huge pages.
#pragma once

#include <cstddef>
#include <vector>

namespace heapgraph::graph {

// A block of 1 MB or more is an anonymous mapping of its own advised MADV_HUGEPAGE, as a heap
// column's is (column.cpp); a smaller one comes from malloc. For vectors that stay in memory
// whatever the budget (bits every edge tests, a search's queue): from malloc their 4 KB pages
// cost a fault each, about 15 us on a machine of this kind. Both kinds come zeroed, as a heap
// column's block does (one allocator for both).
void* allocate_huge(std::size_t bytes);
void free_huge(void* at, std::size_t bytes) noexcept;

template <typename T>
struct HugeAllocator {
    using value_type = T;
    HugeAllocator() = default;
    template <typename U>
    HugeAllocator(const HugeAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(allocate_huge(n * sizeof(T))); }
    void deallocate(T* at, std::size_t n) noexcept { free_huge(at, n * sizeof(T)); }
    template <typename U>
    bool operator==(const HugeAllocator<U>&) const noexcept {
        return true;
    }
};

template <typename T>
using HugeVector = std::vector<T, HugeAllocator<T>>;

}  // namespace heapgraph::graph
