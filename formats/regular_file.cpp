#include "regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace heapgraph {

namespace {

std::string file_type(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "of an unknown type";
}

[[noreturn]] void fail(int fd, const std::string& what) {
    ::close(fd);
    throw UnreadableDump(what);
}

}  // namespace

int open_regular_file(const std::string& path, const std::string& label) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw UnreadableDump(label + path + ": cannot open: " + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0) fail(fd, label + path + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(info.st_mode)) fail(fd, label + path + ": is " + file_type(info.st_mode) + ", not a regular file");
    return fd;
}

std::string read_regular_file(const std::string& path, const std::string& label, std::uint64_t limit) {
    const int fd = open_regular_file(path, label);
    struct stat info {};
    if (::fstat(fd, &info) == 0 && static_cast<std::uint64_t>(info.st_size) > limit)
        fail(fd, label + path + ": " + std::to_string(info.st_size) + " bytes, more than the " + std::to_string(limit) +
                     " such a file can hold");
    std::string text;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail(fd, label + path + ": cannot read: " + std::strerror(errno));
        if (got == 0 || text.size() + static_cast<std::size_t>(got) > limit) break;  // a file that grew stops at the limit
        text.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(fd);
    return text;
}

}  // namespace heapgraph
