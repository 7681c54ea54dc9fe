// FNV-1a, shared inside reports/: the same on every platform, so what it names (a cut class
// name in classic text, an index entry's directory) is the same everywhere.
#pragma once

#include <cstdint>
#include <string_view>

namespace heapgraph::reports {

inline std::uint64_t fnv1a(std::string_view text) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return hash;
}

}  // namespace heapgraph::reports
