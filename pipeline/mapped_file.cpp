#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pipeline.h"

namespace heapgraph {

MappedFile::MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw UnreadableDump(path + ": cannot open: " + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        throw UnreadableDump(path + ": not a regular file");
    }
    size_ = static_cast<std::size_t>(info.st_size);
    if (size_ > 0) {
        void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            ::close(fd);
            throw UnreadableDump(path + ": cannot map: " + std::strerror(errno));
        }
        ::madvise(map, size_, MADV_SEQUENTIAL);
        data_ = static_cast<const std::uint8_t*>(map);
    }
    ::close(fd);
}

MappedFile::MappedFile(int fd, const std::string& name) {
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw UnreadableDump(name + ": cannot stat: " + std::strerror(errno));
    size_ = static_cast<std::size_t>(info.st_size);
    if (size_ == 0) return;
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) throw UnreadableDump(name + ": cannot map: " + std::strerror(errno));
    ::madvise(map, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const std::uint8_t*>(map);
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

void release_pages(std::span<const std::uint8_t> bytes) {
    static const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(bytes.data()) + page - 1) / page * page;
    std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size()) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace heapgraph
