// Inside the pipeline: unwrapping a decoder result into a DumpError naming the file, and the
// words every reader uses for a dump cut short.
#pragma once

#include <variant>

#include "pipeline.h"

namespace heapgraph {

// A decoder error where the file ends: says what reads such a dump anyway. `where` opens
// the note (for instance where the file ends, when the error is not about that).
inline DecodeError with_truncation_hint(DecodeError error, const std::string& where = "") {
    error.message += " (" + where + "cut short? --allow-truncated reads it up to its last whole record)";
    return error;
}

// What every `truncated` warning says of the objects a cut took.
inline constexpr const char* kLostToCut =
    "objects written after the cut are missing (references to them are counted as dangling)";

template <typename T>
T take(const DumpInfo& info, std::variant<T, DecodeError>&& result) {
    if (auto* error = std::get_if<DecodeError>(&result)) throw DumpError(info.path, std::move(*error));
    return std::move(std::get<T>(result));
}

}  // namespace heapgraph
