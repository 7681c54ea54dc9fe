// SparseReader: record headers far apart, read past the page cache, and the HPROF scan that
// uses it. What they leave in the page cache is their behaviour, so the cases look at it
// (mincore) on a file dropped from the cache first.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mapped_file.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr const char* kNotDropped = "the scratch directory's file system keeps dropped pages (tmpfs?)";

std::uint8_t byte_at(std::size_t i) { return static_cast<std::uint8_t>((i * 2654435761u) >> 13); }

// `content` written to a file and dropped from the page cache. The cases need a file system
// with a page cache the kernel can drop (not tmpfs).
std::string cold_file(const std::string& name, const std::vector<std::uint8_t>& content) {
    const std::size_t bytes = content.size();
    const std::string path = test::temp_dir() + "/" + name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(bytes));
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::fdatasync(fd) == 0);
    REQUIRE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
    ::close(fd);
    return path;
}

// A file of `bytes` whose byte i is byte_at(i), dropped from the page cache.
std::string cold_file(const std::string& name, std::size_t bytes) {
    std::vector<std::uint8_t> content(bytes);
    for (std::size_t i = 0; i < bytes; ++i) content[i] = byte_at(i);
    return cold_file(name, content);
}

// Bytes of [from, to) of the mapping in the page cache.
std::size_t cached_bytes(const MappedFile& file, std::size_t from, std::size_t to) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    from = from / page * page;
    std::vector<unsigned char> resident((to - from + page - 1) / page);
    REQUIRE(::mincore(const_cast<std::uint8_t*>(file.bytes().data()) + from, to - from, resident.data()) == 0);
    std::size_t count = 0;
    for (unsigned char r : resident) count += r & 1;
    return count * page;
}

}  // namespace

TEST_CASE("mapped file: SparseReader reads headers far apart with the bytes between left on the disk") {
    const std::size_t size = 64 * kMiB + 123;
    MappedFile file(cold_file("sparse.bin", size));
    REQUIRE_MESSAGE(cached_bytes(file, 0, size) == 0, kNotDropped);
    std::vector<std::size_t> offsets;
    for (std::size_t at = 4090; at < size; at += 8 * kMiB + 4093) offsets.push_back(at);  // some straddle a 4 KB block
    {
        SparseReader reader(file.bytes(), file.fd());
        for (std::size_t at : offsets) {
            const auto piece = reader.read(at, 9);
            REQUIRE(piece.size() == 9);
            for (std::size_t i = 0; i < 9; ++i) CHECK(piece[i] == byte_at(at + i));
        }
        CHECK(reader.read(size - 4, 9).size() == 4);  // where the file ends
        CHECK(reader.read(size, 9).empty());
    }
    // A fault at each offset would have read 2 MB or more around it (8 reads: 16 MB at least).
    CHECK(cached_bytes(file, 0, size) < kMiB);

    // Without the descriptor it reads the mapping: the same bytes.
    SparseReader mapped(file.bytes(), -1);
    for (std::size_t at : offsets) CHECK(mapped.read(at, 9)[8] == byte_at(at + 8));
}

TEST_CASE("mapped file: the HPROF scan leaves a cold dump's heap dump bodies for the decode to read") {
    // 16 HEAP DUMP SEGMENTs of 4 MB, each one byte[] (8-byte ids), then HEAP DUMP END.
    test::ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0);
    const std::uint32_t elements = 4 * kMiB - 64;
    for (std::uint64_t i = 0; i < 16; ++i) {
        b.u1(0x1c).u4(0).u4(1 + 8 + 4 + 4 + 1 + elements);
        b.u1(0x23).id(0x1000 + i).u4(0).u4(elements).u1(8);
        b.bytes.resize(b.bytes.size() + elements, static_cast<std::uint8_t>(i));
    }
    b.u1(0x2c).u4(0).u4(0);
    const std::string path = cold_file("segments.hprof", b.bytes);
    MappedFile file(path);
    REQUIRE_MESSAGE(cached_bytes(file, 0, b.size()) == 0, kNotDropped);
    LoadOptions options;
    options.chunk_bytes = 64u << 10;
    options.bytes_in_flight = 256u << 10;
    std::size_t cached_at_decode = 0;
    bool decoding = false;
    options.progress = [&](const ProgressEvent& event) {
        if (decoding || std::strcmp(event.stage, "decode") != 0) return;
        decoding = true;
        cached_at_decode = cached_bytes(file, 0, b.size());
    };
    const LoadedDump dump = load_dump(path, options);
    CHECK(dump.graph.node_count() == 16);
    REQUIRE(decoding);
    // By its first chunk the decode has read a few MB ahead (the kernel's read-ahead: 6 MB
    // here); the scan before it read no body. Headers read through the mapping left 38 MB
    // cached by then. (Without MADV_RANDOM it was 16 MB, too close to what another kernel's
    // read-ahead may take at the decode's start for this check to tell.)
    CHECK(cached_at_decode < 24 * kMiB);
}
