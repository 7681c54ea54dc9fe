// The column backings (column.h): the process-wide budget, heap blocks, file blocks.
#include "column.h"
#include "huge_vector.h"

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace heapgraph::graph {

std::uint64_t mem_available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    for (std::string key; meminfo >> key;) {
        std::uint64_t kib = 0;
        meminfo >> kib;
        if (key == "MemAvailable:") return kib * 1024;
        meminfo.ignore(64, '\n');
    }
    return 0;
}

std::uint64_t cgroup_memory_max_bytes() {
    std::ifstream cgroup("/sys/fs/cgroup/memory.max");
    std::string max;
    return cgroup >> max && max != "max" ? std::strtoull(max.c_str(), nullptr, 10) : 0;
}

std::uint64_t memory_available_bytes() {
    const std::uint64_t available = mem_available_bytes(), cgroup = cgroup_memory_max_bytes();
    return available && cgroup ? std::min(available, cgroup) : std::max(available, cgroup);
}

namespace {

using Pieces = std::vector<std::pair<std::byte*, std::size_t>>;  // address ranges

std::size_t page_bytes() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// The process's resident file-backed pages (/proc/self/statm's "shared"), in bytes.
std::uint64_t resident_file_bytes() {
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0, shared = 0;
    if (statm) {
        if (std::fscanf(statm, "%llu %llu %llu", &size, &resident, &shared) != 3) shared = 0;
        std::fclose(statm);
    }
    return shared * page_bytes();
}

// The process-wide budget, the column files it made, and the pager: a thread that reads the
// process's resident file pages every 1-20 ms (PagerClock: sooner as they near the allowance
// fast) and, past what the budget leaves beside the heap-backed columns, drops every column
// file's pages (the kernel keeps them in its page cache, or writes them out under pressure,
// and maps them back on the next touch). Without it a pass over file columns keeps all it
// touched until the next stage boundary.
struct Budget {
    std::mutex mutex;
    bool settled = false;
    StorageOptions options;
    std::uint64_t heap_bytes = 0, file_bytes = 0;
    StorageUse use;
    std::unordered_map<std::byte*, std::size_t> files;  // mapped column files and their sizes
    // Anonymous mappings given back, kept for the next large heap block (take_mapping):
    // pieces of what was mapped, their bytes, and the mapped bytes in use and at their peak.
    Pieces pool;
    std::uint64_t pool_bytes = 0, mapped_bytes = 0, mapped_peak = 0;
    bool keep_blocks = true;  // keep_heap_blocks()
    std::thread pager;
    std::condition_variable wake;
    bool stopping = false;

    ~Budget() {
        {
            std::lock_guard lock(mutex);
            stopping = true;
        }
        wake.notify_all();
        if (pager.joinable()) pager.join();
    }

    // Called with the mutex held, as is everything below.
    void count_mapped(std::int64_t change) {
        mapped_bytes += static_cast<std::uint64_t>(change);
        mapped_peak = std::max(mapped_peak, mapped_bytes);
    }
    // What to unmap so that the pool and the blocks in use together are at most the peak of
    // the blocks in use: the pool never raises the process's memory past what it had mapped.
    // Everything once columns live in files (`all`), whose pages need the room.
    Pieces trim_pool(bool all = false) {
        Pieces cut_off;
        while (!pool.empty() && (all || mapped_bytes + pool_bytes > mapped_peak)) {
            auto& [at, bytes] = pool.back();
            const std::size_t cut = all ? bytes : std::min<std::size_t>(bytes, mapped_bytes + pool_bytes - mapped_peak);
            cut_off.emplace_back(at + (bytes - cut), cut);
            pool_bytes -= cut;
            if ((bytes -= cut) == 0) pool.pop_back();
        }
        return cut_off;
    }
    void drop_file_pages() {
        for (const auto& [data, bytes] : files) ::madvise(data, bytes, MADV_DONTNEED);
    }
    // Heap-backed columns take at most half the limit, so that once columns go to files
    // their pages keep the other half. When the heap columns could fill it, the pager let
    // the file pages be at its floor alone and a pass at random over them faulted nearly
    // every page back: the 8x replica took 753 s at --memory-limit 3G against 420 s at 2G
    // (17,353 drops against 3,732); with the heap held to half of 3G, 316 s and 132 drops.
    std::uint64_t heap_cap() const { return heap_columns_cap(options.memory_limit); }
    std::uint64_t file_allowance() const { return file_pages_allowance(options.memory_limit, heap_bytes); }
    void watch(std::byte* data, std::size_t bytes) {
        files[data] = bytes;
        if (!pager.joinable()) pager = std::thread([this] { run_pager(); });
    }
    void run_pager() {
        using Clock = std::chrono::steady_clock;
        std::unique_lock lock(mutex);
        PagerClock clock;
        while (!wake.wait_for(lock, clock.wait(), [this] { return stopping; })) {
            lock.unlock();
            const std::uint64_t seen = resident_file_bytes();
            lock.lock();
            const std::uint64_t allowance = file_allowance();
            if (seen <= allowance) {
                clock.looked(seen, allowance, Clock::now());
                continue;
            }
            drop_file_pages(), ++use.page_releases;
            lock.unlock();
            const std::uint64_t left = resident_file_bytes();  // the dump's pages, the program's own
            lock.lock();
            clock.dropped(left, Clock::now());
        }
    }
};

Budget& budget() {
    static Budget b;
    return b;
}

// Called with the mutex held.
void settle(Budget& b) {
    if (b.settled) return;
    b.settled = true;
    if (!b.options.memory_limit) {
        const std::uint64_t available = memory_available_bytes();
        b.options.memory_limit = available ? available : UINT64_MAX;
    }
    if (b.options.temp_dir.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        b.options.temp_dir = tmp && *tmp ? tmp : "/tmp";
    }
    b.use.memory_limit = b.options.memory_limit;
    b.use.temp_dir = b.options.temp_dir;
}

std::string errno_text(const char* what, std::size_t bytes, const std::string& dir, const char* kind = "column") {
    return std::string("cannot ") + what + " a " + std::to_string(bytes) + "-byte " + kind + " file in " + dir + ": " +
           std::strerror(errno);
}

// An unnamed file in `dir` (for the error: `bytes` it is to hold, and what kind of file).
int open_temp_file(const std::string& dir, std::size_t bytes, const char* kind) {
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {  // a file system without O_TMPFILE: a named file, unlinked at once
        std::string path = dir + "/heapgraph-" + kind + "-XXXXXX";
        fd = ::mkstemp(path.data());
        if (fd < 0) throw StorageError(errno_text("create", bytes, dir, kind));
        ::unlink(path.c_str());
    }
    return fd;
}

// An unnamed file of `bytes` in `dir`, reserved and mapped shared.
std::byte* map_file(std::size_t bytes, const std::string& dir) {
    const int fd = open_temp_file(dir, bytes, "column");
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

// Heap blocks from this size on get an anonymous mapping of their own, which can grow and
// shrink in place (resize_in_place); smaller ones come from malloc.
constexpr std::size_t kMappedBytes = std::size_t{1} << 20;

std::size_t page_round(std::size_t bytes) {
    const std::size_t page = page_bytes();
    return (bytes + page - 1) / page * page;
}

void unmap(const Pieces& pieces) {
    for (const auto& [at, bytes] : pieces) ::munmap(at, bytes);
}

// Zeroes the pages of [at, at + bytes) that are resident (whole pages); the others read as
// zeros when touched. A pool piece's pages were in use only where a column wrote them (room
// reserved and never used stays unmapped), and zeroing it whole would map them all.
void zero_resident(std::byte* at, std::size_t bytes) {
    const std::size_t page = page_bytes();
    std::vector<unsigned char> resident(bytes / page);
    if (::mincore(at, bytes, resident.data()) != 0) return std::memset(at, 0, bytes), void();
    auto in = [](unsigned char flags) { return (flags & 1) != 0; };
    for (auto run = resident.begin(); run != resident.end();) {
        const auto end = std::find_if(run, resident.end(), [&](unsigned char f) { return in(f) != in(*run); });
        if (in(*run)) std::memset(at + (run - resident.begin()) * page, 0, static_cast<std::size_t>(end - run) * page);
        run = end;
    }
}

// A zeroed anonymous mapping of `length` bytes (whole pages): from the pool, the smallest
// piece that holds it, else its largest piece grown where it lies (mremap); a fresh mapping
// when the pool is empty. On a virtual machine whose host takes free memory back within
// seconds (free page reporting, as here), pages given back and faulted in again a stage later
// cost 0.7-1.8 s a GB, and zeroing pages kept 0.04 s a GB (docs/pipeline.md, "Stop 51").
std::byte* take_mapping(std::size_t length) {
    Budget& b = budget();
    std::byte* at = nullptr;
    std::size_t old = 0;  // bytes of `at` that were in use before
    Pieces dead;
    {
        std::lock_guard lock(b.mutex);
        auto holds = [&](const auto& piece) { return piece.second >= length; };
        const auto best = std::min_element(b.pool.begin(), b.pool.end(), [&](const auto& x, const auto& y) {
            if (holds(x) != holds(y)) return holds(x);
            return holds(x) ? x.second < y.second : x.second > y.second;
        });
        if (best != b.pool.end()) {
            std::tie(at, old) = *best;
            if (old > length) {  // the rest stays in the pool
                *best = {at + length, old - length};
                b.pool_bytes -= length, old = length;
            } else {
                b.pool_bytes -= old;
                b.pool.erase(best);
            }
        }
        b.count_mapped(static_cast<std::int64_t>(length));
        dead = b.trim_pool();
    }
    unmap(dead);
    if (at && old < length) {
        void* grown = ::mremap(at, old, length, MREMAP_MAYMOVE);  // the new room comes zeroed
        if (grown == MAP_FAILED) ::munmap(at, old), at = nullptr;
        else at = static_cast<std::byte*>(grown);
    }
    if (at) {
        zero_resident(at, old);
        return at;
    }
    void* fresh = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) {
        std::lock_guard lock(b.mutex);
        b.count_mapped(-static_cast<std::int64_t>(length));
        throw std::bad_alloc();
    }
    // Transparent huge pages, where the system leaves them to madvise (Debian's default): a
    // fault then maps 2 MB, not 4 KB, and the random passes (the dominator step's) miss the
    // TLB far less. 2 GB dump: 1.35M faults to 0.25M, 24.8 s to 15.6 s on a machine whose
    // faults cost about 10 us each. mremap and the pool keep the advice.
    ::madvise(fresh, length, MADV_HUGEPAGE);
    return static_cast<std::byte*>(fresh);
}

// Back to the pool when it may keep the block (below), else to the system.
void give_mapping(std::byte* at, std::size_t length) noexcept {
    Budget& b = budget();
    {
        std::lock_guard lock(b.mutex);
        b.count_mapped(-static_cast<std::int64_t>(length));
        try {
            // Not once columns live in files, whose pages need the room; and within half the
            // budget, as the heap columns are (`heap_bytes` counts this block still).
            if (b.keep_blocks && b.file_bytes == 0 && b.heap_bytes + b.pool_bytes <= b.heap_cap()) {
                b.pool.emplace_back(at, length);
                b.pool_bytes += length;
                return;
            }
        } catch (const std::bad_alloc&) {  // no room to note it: unmapped instead
        }
    }
    ::munmap(at, length);
}

// Zeroed heap memory of `bytes`; `mapped` says which of the two kinds it is.
std::byte* allocate_heap(std::size_t bytes, bool& mapped) {
    mapped = bytes >= kMappedBytes;
    if (mapped) return take_mapping(page_round(bytes));
    void* at = std::calloc(bytes, 1);
    if (!at) throw std::bad_alloc();
    return static_cast<std::byte*>(at);
}

// Gives back what allocate_heap gave.
void free_heap(void* at, std::size_t bytes, bool mapped) {
    if (mapped) give_mapping(static_cast<std::byte*>(at), page_round(bytes));
    else std::free(at);
}

}  // namespace

void* allocate_huge(std::size_t bytes) {
    bool mapped = false;
    return allocate_heap(bytes ? bytes : 1, mapped);  // calloc may give no block for 0 bytes
}

void free_huge(void* at, std::size_t bytes) noexcept {
    if (at) free_heap(at, bytes, bytes >= kMappedBytes);
}

void PagerClock::looked(std::uint64_t resident, std::uint64_t allowance, std::chrono::steady_clock::time_point at) {
    const double micros = std::chrono::duration<double, std::micro>(at - last_at_).count();
    const double rate =
        seen_before_ && resident > last_ && micros > 0 ? static_cast<double>(resident - last_) / micros : 0;
    const double room = allowance > resident ? static_cast<double>(allowance - resident) : 0;
    wait_ = rate > 0 ? std::clamp(Micros(static_cast<std::int64_t>(std::min(room / rate / 2, 1e9))), kShortest, kLongest)
                     : kLongest;
    last_ = resident, last_at_ = at, seen_before_ = true;
}

// No sooner than before: a pass whose working set is past the allowance maps it back within
// milliseconds, and dropping it every few took the 2 GB dump at --memory-limit 64M from 1,146
// drops and 49.6 s to 10,308 drops and 61.5 s.
void PagerClock::dropped(std::uint64_t left, std::chrono::steady_clock::time_point at) {
    wait_ = kLongest;
    last_ = left, last_at_ = at, seen_before_ = true;
}

void configure_storage(const StorageOptions& options) {
    Budget& b = budget();
    std::lock_guard lock(b.mutex);
    b.options = options;
    b.settled = false;
    settle(b);
}

void release_column_files() {
    Budget& b = budget();
    std::lock_guard lock(b.mutex);
    b.drop_file_pages();
}

void keep_heap_blocks(bool keep) {
    Budget& b = budget();
    Pieces dead;
    {
        std::lock_guard lock(b.mutex);
        b.keep_blocks = keep;
        if (!keep) dead = b.trim_pool(true);
    }
    unmap(dead);
}

StorageUse storage_use() {
    Budget& b = budget();
    std::lock_guard lock(b.mutex);
    settle(b);
    return b.use;
}

bool fits_memory_budget(std::uint64_t bytes) {
    Budget& b = budget();
    std::lock_guard lock(b.mutex);
    settle(b);
    return b.heap_bytes + bytes <= b.heap_cap();
}

std::size_t scatter_passes(std::uint64_t bytes, bool in_file) {
    if (!in_file) return 1;
    const std::uint64_t room = std::max<std::uint64_t>(storage_use().memory_limit / 4, 1);
    return static_cast<std::size_t>(std::clamp<std::uint64_t>((bytes + room - 1) / room, 1, 8));
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
                                              " columns, peak " + gb(use.file_bytes_peak) + ", pages dropped " +
                                              std::to_string(use.page_releases) + " times); memory"
                                        : "memory";
    return text + " (" + limit + ", peak " + gb(use.heap_bytes_peak) + ")";
}

ColumnBlock::ColumnBlock(std::size_t bytes) {
    if (bytes == 0) return;
    Budget& b = budget();
    std::string dir;
    Pieces dead;
    {
        std::lock_guard lock(b.mutex);
        settle(b);
        in_file_ = b.heap_bytes + bytes > b.heap_cap();
        if (in_file_) {
            dead = b.trim_pool(true);  // the file's pages need the room
            b.file_bytes += bytes;
            b.use.file_bytes_peak = std::max(b.use.file_bytes_peak, b.file_bytes);
            ++b.use.file_columns;
            dir = b.options.temp_dir;
        } else {
            b.heap_bytes += bytes;
            b.use.heap_bytes_peak = std::max(b.use.heap_bytes_peak, b.heap_bytes);
        }
    }
    unmap(dead);
    bytes_ = bytes;  // counted: give_back() returns them if what follows throws
    try {
        if (in_file_) {
            data_ = map_file(bytes, dir);
            std::lock_guard lock(b.mutex);
            b.watch(data_, bytes_);
        } else {
            data_ = allocate_heap(bytes, mapped_);
        }
    } catch (...) {
        give_back();
        throw;
    }
}

ColumnBlock::~ColumnBlock() { give_back(); }

void ColumnBlock::give_back() noexcept {
    if (bytes_ == 0) return;
    Budget& b = budget();
    if (data_ && in_file_) {
        std::lock_guard lock(b.mutex);
        b.files.erase(data_);  // the pager no longer touches the block
    }
    // Unmapped outside the lock: the last mapping of a column file takes the file with it, its
    // pages and its blocks, which took up to a second on the 8x replica; the pager, waiting
    // for the lock all that time, let the dominator step map gigabytes of file pages (a peak
    // of 7.9 GB where the pager holds 5 GB).
    if (data_) {
        if (in_file_) ::munmap(data_, bytes_);
        else free_heap(data_, bytes_, mapped_);
    }
    std::lock_guard lock(b.mutex);
    (in_file_ ? b.file_bytes : b.heap_bytes) -= bytes_;  // free once it is: the budget never runs ahead
    data_ = nullptr, bytes_ = 0;
}

// Shared file pages dropped from this process stay in the page cache (or go to disk under
// pressure); the next touch maps them back with the same bytes.
void ColumnBlock::release_pages(std::size_t from, std::size_t to) const {
    if (!in_file_ || from >= to) return;
    const std::size_t page = page_bytes();
    from = from / page * page;
    to = std::min(page_round(to), page_round(bytes_));
    ::madvise(data_ + from, to - from, MADV_DONTNEED);
}

bool ColumnBlock::resize_in_place(std::size_t bytes) {
    if (!mapped_ || bytes < kMappedBytes) return false;
    Budget& b = budget();
    Pieces dead;  // unmapped once the lock is let go, as everywhere
    {
        std::lock_guard lock(b.mutex);  // the budget and the block change together
        if (bytes > bytes_ && b.heap_bytes + (bytes - bytes_) > b.heap_cap()) return false;
        void* moved = ::mremap(data_, page_round(bytes_), page_round(bytes), MREMAP_MAYMOVE);
        if (moved == MAP_FAILED) return false;
        // The last page of an earlier shrink may hold old bytes past its end: new bytes are zero.
        if (bytes > bytes_)
            std::memset(static_cast<std::byte*>(moved) + bytes_, 0, std::min(bytes, page_round(bytes_)) - bytes_);
        b.heap_bytes = b.heap_bytes - bytes_ + bytes;
        b.use.heap_bytes_peak = std::max(b.use.heap_bytes_peak, b.heap_bytes);
        b.count_mapped(static_cast<std::int64_t>(page_round(bytes)) - static_cast<std::int64_t>(page_round(bytes_)));
        dead = b.trim_pool();
        data_ = static_cast<std::byte*>(moved), bytes_ = bytes;
    }
    unmap(dead);
    return true;
}

void ColumnBlock::release_pages() const { release_pages(0, bytes_); }

SpillFile::~SpillFile() {
    if (fd_ >= 0) ::close(fd_);
}

void SpillFile::append(const void* data, std::size_t bytes) {
    if (fd_ < 0) {
        Budget& b = budget();
        std::string dir;
        {
            std::lock_guard lock(b.mutex);
            settle(b);
            dir = b.options.temp_dir;
        }
        fd_ = open_temp_file(dir, bytes, "spill");
        dir_ = std::move(dir);
    }
    const auto* at = static_cast<const char*>(data);
    for (std::size_t left = bytes; left > 0;) {
        const ssize_t wrote = ::write(fd_, at, left);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
            if (wrote == 0) errno = ENOSPC;
            throw StorageError(errno_text("write", bytes_ + bytes, dir_, "spill"));
        }
        at += wrote, left -= static_cast<std::size_t>(wrote);
    }
    bytes_ += bytes;
}

void SpillFile::read(std::uint64_t from, void* to, std::size_t bytes) const {
    auto* at = static_cast<char*>(to);
    for (std::size_t left = bytes; left > 0;) {
        const ssize_t got = ::pread(fd_, at, left, static_cast<off_t>(from));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            if (got == 0) errno = EIO;  // shorter than what was appended: never, unless it was cut
            throw StorageError(errno_text("read", bytes_, dir_, "spill"));
        }
        at += got, left -= static_cast<std::size_t>(got), from += static_cast<std::uint64_t>(got);
    }
}

}  // namespace heapgraph::graph
