// libFuzzer target: snapshot files (`analyze --save`, read by `diff`). The first input byte
// picks the mode: odd, the rest is a whole snapshot file (magic, header, checksum, deflated
// payload); even, the rest is the JSON payload, which this target deflates and frames with a
// valid header, so that the fuzzer reaches the JSON reader past the checksum. A snapshot
// that reads is then diffed against itself.
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "reports.h"

namespace {

void put_le(std::string& out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

// A file as write_snapshot frames it (reports/snapshot.cpp): magic, version, CRC-32,
// payload and inflated lengths, deflated payload.
std::string framed(const std::uint8_t* json, std::size_t size) {
    uLongf packed_bytes = compressBound(size);
    std::string packed(packed_bytes, '\0');
    compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_bytes, json, size, 1);
    packed.resize(packed_bytes);
    std::string out("\x89HGSNAP\n", 8);
    put_le(out, heapgraph::reports::kSnapshotVersion, 4);
    put_le(out, crc32(0, reinterpret_cast<const Bytef*>(packed.data()), static_cast<uInt>(packed.size())), 4);
    put_le(out, packed.size(), 8);
    put_le(out, size, 8);
    return out + packed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return -1;
    std::string file = data[0] & 1 ? std::string(reinterpret_cast<const char*>(data + 1), size - 1) : framed(data + 1, size - 1);
    // An anonymous in-memory file: read_snapshot takes a path.
    int fd = memfd_create("snapshot", 0);
    if (fd < 0 || ::write(fd, file.data(), file.size()) != static_cast<ssize_t>(file.size())) return 0;
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        heapgraph::reports::Snapshot snapshot = heapgraph::reports::read_snapshot(path);
        auto diff = heapgraph::reports::diff_snapshots({snapshot, snapshot}, {});
        (void)heapgraph::reports::diff_json(diff, "fuzz");
    } catch (const heapgraph::reports::SnapshotError&) {
    }
    ::close(fd);
    return 0;
}
