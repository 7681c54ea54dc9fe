// Unwraps a decoder result inside the pipeline: the value, or a DumpError naming the file.
#pragma once

#include <variant>

#include "pipeline.h"

namespace heapgraph {

template <typename T>
T take(const DumpInfo& info, std::variant<T, DecodeError>&& result) {
    if (auto* error = std::get_if<DecodeError>(&result)) throw DumpError(info.path, std::move(*error));
    return std::move(std::get<T>(result));
}

}  // namespace heapgraph
