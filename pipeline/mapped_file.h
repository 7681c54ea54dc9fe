// Read-only memory map of a whole file (RAII). Pages come in as decoders touch them.
// A file another process truncates while we read it would kill the process with SIGBUS at
// the first page past its new end: a process-wide handler maps zero pages there instead and
// notes the offset, and check_intact() turns that into an error once reading is done.
#pragma once

#include <algorithm>
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
    int fd() const { return fd_; }

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

// A walk forward through a file mapping that drops what it has passed every `every` bytes
// (64 MiB unless told). Even a walk that touches little (one header per record) needs it: a
// page cache of large folios maps 2 MB a touch (Linux 6.18), and an HPROF scan that kept
// what it passed mapped a 17 GB dump whole. Does nothing when `enabled` is false (the bytes
// are not a file mapping).
class ReleaseBehind {
public:
    static constexpr std::uint64_t kEvery = std::uint64_t{64} << 20;
    ReleaseBehind(std::span<const std::uint8_t> file, bool enabled, std::uint64_t from = 0,
                  std::uint64_t every = kEvery)
        : file_(file), enabled_(enabled), released_(from), every_(every) {}
    // The walk has reached `offset`.
    void at(std::uint64_t offset) {
        if (!enabled_ || offset - released_ < every_) return;
        release_pages(file_.subspan(released_, offset - released_));
        released_ = offset;
    }
    // The walk is over: the rest of the file goes too.
    void finish() {
        if (enabled_ && released_ < file_.size()) release_pages(file_.subspan(released_));
    }

private:
    std::span<const std::uint8_t> file_;
    bool enabled_;
    std::uint64_t released_, every_;
};

// Reads small pieces of a file mapping that lie far apart (the headers of records whose
// bodies a scan skips) without the kernel reading what lies around them: a piece whose page
// is not in the page cache is read from the disk past the cache (O_DIRECT), since a fault
// there would read megabytes (a huge folio and its read-ahead) and even a buffered read
// would leave a small folio that splits the 2 MB ones a later pass reads in. On a dump
// not in the page cache, the HPROF scan so reads a few MB instead of the whole file. While
// it lives the mapping is advised MADV_RANDOM (a read of a cached page starts no read-ahead),
// then again as MappedFile maps (MADV_SEQUENTIAL). With `fd` < 0, or where O_DIRECT is refused
// (tmpfs), it reads the mapping and leaves the advice alone.
class SparseReader {
public:
    SparseReader(std::span<const std::uint8_t> file, int fd);
    ~SparseReader();
    SparseReader(const SparseReader&) = delete;
    SparseReader& operator=(const SparseReader&) = delete;
    // Up to `n` (at most a page) bytes at `offset`, fewer where the file ends; valid until the
    // next call.
    std::span<const std::uint8_t> read(std::uint64_t offset, std::size_t n);

private:
    bool cached(std::uint64_t offset) const;
    void advise(int advice) const;
    std::span<const std::uint8_t> file_;
    int direct_ = -1;
    std::uint8_t* buffer_ = nullptr;
};

}  // namespace heapgraph
