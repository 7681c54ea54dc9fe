// The column backings (column.h): the process-wide budget, heap blocks, file blocks.
#include "column.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace heapgraph::graph {

namespace {

struct Budget {
    std::mutex mutex;
    bool configured = false;
    StorageOptions options;
    std::uint64_t heap_bytes = 0, file_bytes = 0;
    StorageUse use;
};

Budget& budget() {
    static Budget b;
    return b;
}

std::uint64_t mem_available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kb = 0;
    std::string unit;
    while (meminfo >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb * 1024;
    return 0;
}

// Called with the mutex held.
void settle(Budget& b) {
    if (b.configured && b.options.memory_limit) return;
    b.configured = true;
    if (!b.options.memory_limit) {
        const std::uint64_t available = mem_available_bytes();
        b.options.memory_limit = available ? available / 5 * 4 : UINT64_MAX;
    }
    if (b.options.temp_dir.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        b.options.temp_dir = tmp && *tmp ? tmp : "/tmp";
    }
    b.use.memory_limit = b.options.memory_limit;
    b.use.temp_dir = b.options.temp_dir;
}

std::string errno_text(const char* what, std::size_t bytes, const std::string& dir) {
    return std::string("cannot ") + what + " a " + std::to_string(bytes) + "-byte column file in " + dir + ": " +
           std::strerror(errno);
}

// An unnamed file of `bytes` in `dir`, reserved and mapped shared.
std::byte* map_file(std::size_t bytes, const std::string& dir) {
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {  // a file system without O_TMPFILE: a named file, unlinked at once
        std::string path = dir + "/heapgraph-column-XXXXXX";
        fd = ::mkstemp(path.data());
        if (fd < 0) throw StorageError(errno_text("create", bytes, dir));
        ::unlink(path.c_str());
    }
    // fallocate reserves the blocks: a full disk is this error, not a SIGBUS on a later write.
    if (int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
        ::close(fd);
        errno = error;
        throw StorageError(errno_text("reserve", bytes, dir));
    }
    void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (at == MAP_FAILED) throw StorageError(errno_text("map", bytes, dir));
    return static_cast<std::byte*>(at);
}

}  // namespace

void configure_storage(const StorageOptions& options) {
    Budget& b = budget();
    std::lock_guard lock(b.mutex);
    b.options = options;
    b.configured = false;
    settle(b);
}

StorageUse storage_use() {
    Budget& b = budget();
    std::lock_guard lock(b.mutex);
    settle(b);
    return b.use;
}

std::string storage_summary() {
    const StorageUse use = storage_use();
    auto gb = [](std::uint64_t bytes) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
        return std::string(text);
    };
    const std::string limit = use.memory_limit == UINT64_MAX ? "no limit" : "limit " + gb(use.memory_limit);
    std::string text = use.file_columns ? "files under " + use.temp_dir + " (" + std::to_string(use.file_columns) +
                                              " columns, peak " + gb(use.file_bytes_peak) + "); memory"
                                        : "memory";
    return text + " (" + limit + ", peak " + gb(use.heap_bytes_peak) + ")";
}

ColumnBlock::ColumnBlock(std::size_t bytes) {
    if (bytes == 0) return;
    Budget& b = budget();
    std::string dir;
    {
        std::lock_guard lock(b.mutex);
        settle(b);
        in_file_ = b.heap_bytes + bytes > b.options.memory_limit;
        if (in_file_) {
            b.file_bytes += bytes;
            b.use.file_bytes_peak = std::max(b.use.file_bytes_peak, b.file_bytes);
            ++b.use.file_columns;
            dir = b.options.temp_dir;
        } else {
            b.heap_bytes += bytes;
            b.use.heap_bytes_peak = std::max(b.use.heap_bytes_peak, b.heap_bytes);
        }
    }
    bytes_ = bytes;  // counted: give_back() returns them if what follows throws
    try {
        if (in_file_) {
            data_ = map_file(bytes, dir);
        } else {
            data_ = static_cast<std::byte*>(std::calloc(bytes, 1));  // big blocks: zero pages, untouched
            if (!data_) throw std::bad_alloc();
        }
    } catch (...) {
        give_back();
        throw;
    }
}

ColumnBlock::~ColumnBlock() { give_back(); }

void ColumnBlock::give_back() noexcept {
    if (bytes_ == 0) return;
    if (data_) {
        if (in_file_) ::munmap(data_, bytes_);
        else std::free(data_);
    }
    Budget& b = budget();
    std::lock_guard lock(b.mutex);
    (in_file_ ? b.file_bytes : b.heap_bytes) -= bytes_;
    data_ = nullptr, bytes_ = 0;
}

void ColumnBlock::release_pages() const {
    // Shared file pages dropped from this process stay in the page cache (or go to disk
    // under pressure); the next touch maps them back with the same bytes.
    if (in_file_ && bytes_) ::madvise(data_, bytes_, MADV_DONTNEED);
}

}  // namespace heapgraph::graph
