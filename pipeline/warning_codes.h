// Every warning a report can carry: its code, what it means, and what it changes in the
// figures. One list: the builder orders warnings by it, Warnings::add refuses a code not on
// it, and a test checks docs/report-schema.md's table against it.
#pragma once

#include <span>
#include <string_view>

namespace heapgraph {

struct WarningCode {
    std::string_view code, meaning, consequence;
};

// In the order reports list them.
std::span<const WarningCode> warning_codes();
// Its place in warning_codes(), or warning_codes().size() for an unknown code.
std::size_t warning_rank(std::string_view code);

}  // namespace heapgraph
