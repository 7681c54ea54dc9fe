// Read-only memory map of a whole file (RAII). Pages come in as decoders touch them.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace heapgraph {

class MappedFile {
public:
    explicit MappedFile(const std::string& path);  // throws UnreadableDump
    MappedFile(int fd, const std::string& name);    // maps an open file; does not close fd
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

// Drops the resident pages fully inside `bytes`, which must lie in a read-only, file-backed
// mapping: a later read faults them in again from the page cache (on anonymous memory this
// would zero them). Keeps the peak RSS off the dump size.
void release_pages(std::span<const std::uint8_t> bytes);

}  // namespace heapgraph
