// An address as the reports write it: "0x" and lower-case hex (internal to reports/).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace heapgraph::reports {

inline std::string hex_id(std::uint64_t address) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    return text;
}

}  // namespace heapgraph::reports
