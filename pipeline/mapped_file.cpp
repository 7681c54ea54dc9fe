#include "mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

#include "pipeline.h"
#include "regular_file.h"

namespace heapgraph {

namespace {

// ---- SIGBUS guard --------------------------------------------------------------------------
// The handler reads a fixed table of mappings with lock-free atomics only (a signal may
// arrive on any thread, at any time); registering takes a mutex the handler never touches.

constexpr std::uint64_t kNoFault = ~std::uint64_t{0};

struct GuardedMapping {
    std::atomic<std::uintptr_t> begin{0}, end{0};  // begin 0: a free slot
    std::atomic<std::uint64_t> fault_offset{kNoFault};
};

constexpr int kGuardSlots = 256;  // mappings alive at once; past that a mapping is unguarded
GuardedMapping g_guards[kGuardSlots];
std::mutex g_guard_mutex;
struct sigaction g_previous_action {};
// Read once, before main: the SIGBUS handler reads it too, where nothing may be initialized.
const std::uintptr_t g_page_size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));

// How a dump's mapping is advised (SparseReader advises otherwise while it reads, then this again).
constexpr int kMappingAdvice = MADV_SEQUENTIAL;
// O_DIRECT's alignment for SparseReader: a page covers every block size.
constexpr std::size_t kDirectBlock = 4096;

void lower_to(std::atomic<std::uint64_t>& value, std::uint64_t offset) {
    std::uint64_t seen = value.load();
    while (offset < seen && !value.compare_exchange_weak(seen, offset)) {
    }
}

// A fault in a guarded mapping is a page past the end of a file that shrank: zero pages go
// over it and the rest of the mapping (all past the new end too), and reading goes on.
// Any other SIGBUS gets the action there was before ours.
void on_sigbus(int signal, siginfo_t* info, void*) {
    const int saved_errno = errno;
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (GuardedMapping& guard : g_guards) {
        const std::uintptr_t begin = guard.begin.load(), end = guard.end.load();
        if (begin == 0 || address < begin || address >= end) continue;
        const std::uintptr_t page = address & ~(g_page_size - 1);
        void* zeros = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                             MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (zeros == MAP_FAILED) break;
        lower_to(guard.fault_offset, address - begin);
        errno = saved_errno;
        return;
    }
    ::sigaction(SIGBUS, &g_previous_action, nullptr);
    if (info->si_code <= 0) ::raise(signal);  // sent, not a fault: returning would not repeat it
    errno = saved_errno;  // a fault repeats on return, under the previous action
}

void install_sigbus_handler() {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous_action);
}

int guard(const std::uint8_t* data, std::size_t size) {
    static std::once_flag installed;
    std::call_once(installed, install_sigbus_handler);
    std::lock_guard lock(g_guard_mutex);
    for (int slot = 0; slot < kGuardSlots; ++slot) {
        GuardedMapping& g = g_guards[slot];
        if (g.begin.load() != 0) continue;
        g.fault_offset.store(kNoFault);
        g.end.store(reinterpret_cast<std::uintptr_t>(data) + size);
        g.begin.store(reinterpret_cast<std::uintptr_t>(data));
        return slot;
    }
    return -1;
}

void unguard(int slot) {
    if (slot < 0) return;
    std::lock_guard lock(g_guard_mutex);
    g_guards[slot].begin.store(0);
    g_guards[slot].end.store(0);
}

// Whether the kernel may put a file's pages in the page cache as huge folios (2 MB) for a
// mapping advised MADV_HUGEPAGE: transparent huge pages not turned off.
bool huge_file_pages() {
    static const bool on = [] {
        std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
        std::string line;
        return std::getline(setting, line) && line.find("[never]") == std::string::npos;
    }();
    return on;
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : name_(path), fd_(open_regular_file(path)), owns_fd_(true) {
    try {
        map(fd_, MAP_PRIVATE, path);
    } catch (...) {
        ::close(fd_);
        throw;
    }
}

MappedFile::MappedFile(int fd, const std::string& name) : name_(name), fd_(fd) { map(fd, MAP_SHARED, name); }

void MappedFile::map(int fd, int flags, const std::string& name) {
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw UnreadableDump(name + ": cannot stat: " + std::strerror(errno));
    size_ = static_cast<std::size_t>(info.st_size);
    if (size_ == 0) return;
    void* map = ::mmap(nullptr, size_, PROT_READ, flags, fd, 0);
    if (map == MAP_FAILED) throw UnreadableDump(name + ": cannot map: " + std::strerror(errno));
    ::madvise(map, size_, kMappingAdvice);
    // Pages the kernel reads for this mapping (a dump not in the page cache) then come in
    // 2 MB folios, and a fault maps a whole one: every later pass over the dump takes about
    // 1K faults a GB, not 16K (64 KB each: the fault-around of small folios). On a machine
    // whose faults cost about 15 us that is 0.2 s a pass on the 2 GB dump. Pages already
    // cached keep the folios they have (a dump just written is in small ones).
    if (huge_file_pages()) ::madvise(map, size_, MADV_HUGEPAGE);
    data_ = static_cast<const std::uint8_t*>(map);
    guard_slot_ = guard(data_, size_);
}

MappedFile::~MappedFile() {
    unguard(guard_slot_);
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
    if (owns_fd_) ::close(fd_);
}

void MappedFile::check_intact() const {
    if (guard_slot_ < 0) return;
    const std::uint64_t failed_at = g_guards[guard_slot_].fault_offset.load();
    if (failed_at == kNoFault) return;
    struct stat info {};
    const std::string now = ::fstat(fd_, &info) == 0 ? std::to_string(info.st_size) : "fewer";
    throw DumpError(name_, {failed_at, "file", "shrank from " + std::to_string(size_) + " to " + now +
                                                   " bytes while it was being read (truncated by another "
                                                   "process?): reading failed here"});
}

void release_pages(std::span<const std::uint8_t> bytes) {
    const std::uintptr_t page = g_page_size;
    std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(bytes.data()) + page - 1) / page * page;
    std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size()) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

SparseReader::SparseReader(std::span<const std::uint8_t> file, int fd) : file_(file) {
    if (fd < 0) return;
    direct_ = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (direct_ < 0) return;
    buffer_ = static_cast<std::uint8_t*>(std::aligned_alloc(kDirectBlock, 2 * kDirectBlock));
    if (!buffer_) {  // the mapping, then
        ::close(direct_), direct_ = -1;
        return;
    }
    // A piece read from a cached page goes through the mapping. Under MADV_SEQUENTIAL such a
    // touch of a page the kernel's read-ahead marked reads the next window, and the scan's
    // touches, one a record, kept that going: 1.7 GB of the 2 GB dump read in the scan.
    advise(MADV_RANDOM);
}

SparseReader::~SparseReader() {
    if (buffer_) advise(kMappingAdvice);
    if (direct_ >= 0) ::close(direct_);
    std::free(buffer_);
}

void SparseReader::advise(int advice) const {
    ::madvise(const_cast<std::uint8_t*>(file_.data()), file_.size(), advice);
}

bool SparseReader::cached(std::uint64_t offset) const {
    const std::uintptr_t page = (reinterpret_cast<std::uintptr_t>(file_.data()) + offset) & ~(g_page_size - 1);
    unsigned char resident = 0;
    return ::mincore(reinterpret_cast<void*>(page), 1, &resident) != 0 || (resident & 1);
}

std::span<const std::uint8_t> SparseReader::read(std::uint64_t offset, std::size_t n) {
    if (offset >= file_.size()) return {};
    n = std::min<std::uint64_t>({n, kDirectBlock, file_.size() - offset});
    if (direct_ >= 0 && !cached(offset)) {
        const std::uint64_t from = offset / kDirectBlock * kDirectBlock;
        const ssize_t got = ::pread(direct_, buffer_, 2 * kDirectBlock, static_cast<off_t>(from));
        if (got >= 0 && static_cast<std::uint64_t>(got) >= offset - from + n) return {buffer_ + (offset - from), n};
        if (got < 0) ::close(direct_), direct_ = -1;  // refused: the mapping from now on
    }
    return file_.subspan(offset, n);
}

}  // namespace heapgraph
