// Reads the thread objects out of an IBM/OpenJ9 javacore (a text thread dump written beside
// a PHD). Only "3XMTHREADINFO" lines matter, and in them only "java/lang/Thread:0x<hex>".
#include <charconv>

#include "formats.h"

namespace heapgraph {

std::vector<ObjectId> javacore_thread_objects(std::string_view text) {
    constexpr std::string_view kLine = "3XMTHREADINFO ";
    constexpr std::string_view kThread = "java/lang/Thread:0x";
    std::vector<ObjectId> threads;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (!line.starts_with(kLine)) continue;
        std::size_t found = line.find(kThread);
        if (found == std::string_view::npos) continue;
        std::string_view hex = line.substr(found + kThread.size());
        ObjectId address = 0;
        auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), address, 16);
        if (ec == std::errc() && address) threads.push_back(address);
    }
    return threads;
}

}  // namespace heapgraph
