// Unwrapping decoder results in tests: the value, or a test failure that shows the error.
#pragma once

#include <doctest/doctest.h>

#include <variant>

#include "formats.h"

namespace heapgraph::test {

template <typename T, typename Result>
T expect_ok(Result&& result) {
    if (auto* error = std::get_if<DecodeError>(&result))
        FAIL(error->record << " @" << hex_offset(error->offset) << ": " << error->message);
    return std::get<T>(std::move(result));
}

template <typename Result>
DecodeError expect_error(Result&& result) {
    REQUIRE(std::holds_alternative<DecodeError>(result));
    return std::get<DecodeError>(std::move(result));
}

}  // namespace heapgraph::test
