// libFuzzer target: the javacore reader (`--javacore`), which takes any text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    (void)heapgraph::read_javacore(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
