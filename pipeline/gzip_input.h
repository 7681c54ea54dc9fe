// gzip dumps are inflated into an unlinked temporary file that is then memory-mapped, so the
// rest of the pipeline reads them like a plain dump and may drop decoded pages: the
// process's memory never holds the inflated dump (the disk holds it, briefly).
//   HotSpot's `jcmd GC.heap_dump -gz=N` writes many members of at most BLOCKSIZE raw bytes
//   (its first member's comment says "HPROF BLOCKSIZE=1048576"). Members inflate
//   independently, so workers inflate them in parallel with libdeflate, in rounds over a
//   window of the compressed file; each worker finds its first member by its header and
//   CRC, and the chain of members is checked before the round is written out in order.
//   A round holds at most 32 MiB of inflated bytes, whatever the members' count or ratio:
//   its compressed window follows the ratio the last round showed.
//   Any other gzip (one member, as `gzip` writes, or a BLOCKSIZE claim past 4 MiB) is
//   streamed through zlib.
//   The first 64 KiB of the content go to a head check before more is written, so a file
//   that is no heap dump (a gzip bomb of zeros) stops there instead of filling the disk.
#pragma once

#include <functional>
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
    const MappedFile& mapping() const { return *map_; }
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

// Called once with the first kInflateHeadBytes of the content (not for a smaller content),
// before more of it is inflated or written; throws to stop.
using HeadCheck = std::function<void(Bytes head)>;
constexpr std::uint64_t kInflateHeadBytes = 64u << 10;

// Throws DumpError (offsets in the compressed file) or UnreadableDump (temp file problems),
// or what `head_check` throws.
// `file_mapping`: gz is a read-only file mapping whose pages may be dropped once inflated.
InflatedFile inflate_to_temp_file(Bytes gz, bool file_mapping, const std::string& name, const LoadOptions& options,
                                  const HeadCheck& head_check = {});

// The BLOCKSIZE of a HotSpot chunked gzip, or 0 when the first member has no such comment
// or claims more than 4 MiB (HotSpot writes 1 MiB; such a file streams through zlib).
std::uint64_t hotspot_gzip_block_size(Bytes gz);

}  // namespace heapgraph
