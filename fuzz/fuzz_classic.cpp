// libFuzzer target: classic text heapdumps (ASCII or EBCDIC) through load_dump_bytes (fuzz_load.h).
#include "fuzz_load.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return heapgraph::fuzz::load_and_analyse(data, size, heapgraph::DumpFormat::classic);
}
