// Read-only memory map of a whole file (RAII). Pages come in as decoders touch them.
// A file another process truncates while we read it would kill the process with SIGBUS at
// the first page past its new end: a process-wide handler maps zero pages there instead and
// notes the offset, and check_intact() turns that into an error once reading is done.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "regular_file.h"

namespace heapgraph {

class MappedFile {
public:
    explicit MappedFile(const std::string& path);  // throws UnreadableDump
    MappedFile(int fd, const std::string& name);    // maps an open file; does not close fd
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

    // Throws DumpError at the lowest offset a read failed at when the file shrank while it
    // was mapped (what was read from there on was zeros, not the file).
    void check_intact() const;

private:
    void map(int fd, int flags, const std::string& name);

    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    std::string name_;
    int fd_ = -1;
    bool owns_fd_ = false;
    int guard_slot_ = -1;  // in the SIGBUS handler's table; -1: not guarded
};

// Drops the resident pages fully inside `bytes`, which must lie in a read-only, file-backed
// mapping: a later read faults them in again from the page cache (on anonymous memory this
// would zero them). Keeps the peak RSS off the dump size.
void release_pages(std::span<const std::uint8_t> bytes);

}  // namespace heapgraph
