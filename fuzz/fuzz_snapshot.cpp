// libFuzzer target: snapshot files (`analyze --save`, read by `diff`). The first input byte
// picks the mode: odd, the rest is a whole snapshot file (magic, header, checksum, deflated
// payload); even, the rest is the JSON payload, which this target deflates and frames with a
// valid header, so that the fuzzer reaches the JSON reader past the checksum. A snapshot
// that reads is then diffed against itself.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "reports.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return -1;
    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    std::string file = data[0] & 1 ? std::string(rest) : heapgraph::reports::snapshot_file_bytes(rest);
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
