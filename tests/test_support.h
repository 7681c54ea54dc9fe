// Helpers shared by the tests: paths into data/, building HPROF byte arrays, loading files.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace heapgraph::test {

inline std::string data_path(const std::string& relative) {
    return std::string(HEAPGRAPH_DATA_DIR) + "/" + relative;
}

// A scratch directory for this test run, created on first use.
inline std::string temp_dir() {
    static const std::string dir = [] {
        auto path = std::filesystem::temp_directory_path() / ("heapgraph-tests-" + std::to_string(::getpid()));
        std::filesystem::create_directories(path);
        return path.string();
    }();
    return dir;
}

inline std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Big-endian byte builder for fixtures: b.u4(7).id(0x1000)...
struct ByteBuilder {
    std::vector<std::uint8_t> bytes;
    std::uint32_t id_size = 8;

    ByteBuilder& u(std::uint64_t value, int width) {
        for (int i = width - 1; i >= 0; --i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
        return *this;
    }
    ByteBuilder& u1(std::uint64_t v) { return u(v, 1); }
    ByteBuilder& u2(std::uint64_t v) { return u(v, 2); }
    ByteBuilder& u4(std::uint64_t v) { return u(v, 4); }
    ByteBuilder& u8(std::uint64_t v) { return u(v, 8); }
    ByteBuilder& id(std::uint64_t v) { return u(v, static_cast<int>(id_size)); }
    ByteBuilder& text(const std::string& s) {
        bytes.insert(bytes.end(), s.begin(), s.end());
        return *this;
    }
    std::size_t size() const { return bytes.size(); }
};

}  // namespace heapgraph::test
