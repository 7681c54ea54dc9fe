// gzip dumps are inflated into an unlinked temporary file that is then memory-mapped, so the
// rest of the pipeline reads them like a plain dump and may drop decoded pages: the
// process's memory never holds the inflated dump (the disk holds it, briefly).
//   HotSpot's `jcmd GC.heap_dump -gz=N` writes many members of at most BLOCKSIZE raw bytes
//   (its first member's comment says "HPROF BLOCKSIZE=1048576"). Members inflate
//   independently, so workers inflate them in parallel with libdeflate, in rounds over a
//   window of the compressed file; each worker finds its first member by its header and
//   CRC, and the chain of members is checked before the round is written out in order.
//   Any other gzip (one member, as `gzip` writes) is streamed through zlib.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "formats.h"
#include "mapped_file.h"
#include "pipeline.h"

namespace heapgraph {

class InflatedFile {
public:
    InflatedFile(int fd, const std::string& name, std::uint64_t members, std::optional<std::uint64_t> cut_member);
    ~InflatedFile();
    InflatedFile(const InflatedFile&) = delete;
    InflatedFile& operator=(const InflatedFile&) = delete;

    Bytes bytes() const { return map_->bytes(); }
    std::uint64_t members() const { return members_; }
    // --allow-truncated: where the member the end of the file cuts starts (its bytes up to
    // the cut are inflated), if one does.
    std::optional<std::uint64_t> cut_member() const { return cut_member_; }

private:
    int fd_;
    std::unique_ptr<MappedFile> map_;
    std::uint64_t members_;
    std::optional<std::uint64_t> cut_member_;
};

// Throws DumpError (offsets in the compressed file) or UnreadableDump (temp file problems).
// `file_mapping`: gz is a read-only file mapping whose pages may be dropped once inflated.
InflatedFile inflate_to_temp_file(Bytes gz, bool file_mapping, const std::string& name, const LoadOptions& options);

// The BLOCKSIZE of a HotSpot chunked gzip, or 0 when the first member has no such comment.
std::uint64_t hotspot_gzip_block_size(Bytes gz);

}  // namespace heapgraph
