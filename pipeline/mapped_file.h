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

// Asks the kernel to read the pages of `bytes` (a file mapping) into its page cache now, in
// large requests, without waiting for them or mapping them (MADV_WILLNEED). Nothing where the
// mapping reads ahead in huge folios itself (mapped_file.cpp).
void read_ahead(std::span<const std::uint8_t> bytes);

// A walk forward through a file mapping that drops what it has passed every `every` bytes
// (64 MiB unless told). Even a walk that touches little (one header per record) needs it: a
// page cache of large folios maps 2 MB a touch (Linux 6.18), and an HPROF scan that kept
// what it passed mapped a 17 GB dump whole. Given `ahead`, it also keeps between `ahead` and
// twice that asked for past where it is (read_ahead): a walk that skips about the file
// otherwise waits on the disk for each fault the kernel's own read-ahead did not foresee. Does nothing when `enabled` is false (the bytes are not a file
// mapping).
class ReleaseBehind {
public:
    static constexpr std::uint64_t kEvery = std::uint64_t{64} << 20;
    ReleaseBehind(std::span<const std::uint8_t> file, bool enabled, std::uint64_t from = 0,
                  std::uint64_t every = kEvery, std::uint64_t ahead = 0)
        : file_(file), enabled_(enabled), released_(from), every_(every), ahead_(ahead), asked_(from) {}
    // The walk has reached `offset`.
    void at(std::uint64_t offset) {
        if (!enabled_) return;
        if (ahead_ && offset + ahead_ > asked_ && asked_ < file_.size()) ask_ahead(offset);
        if (offset - released_ < every_) return;
        release_pages(file_.subspan(released_, offset - released_));
        released_ = offset;
    }
    // The walk is over: the rest of the file goes too.
    void finish() {
        if (enabled_ && released_ < file_.size()) release_pages(file_.subspan(released_));
    }

private:
    void ask_ahead(std::uint64_t offset) {
        const std::uint64_t from = std::max(asked_, offset), to = std::min<std::uint64_t>(file_.size(), offset + 2 * ahead_);
        if (from < to) read_ahead(file_.subspan(from, to - from));
        asked_ = to;
    }

    std::span<const std::uint8_t> file_;
    bool enabled_;
    std::uint64_t released_, every_, ahead_, asked_;
};

}  // namespace heapgraph
