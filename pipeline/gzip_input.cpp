#include "gzip_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zlib.h>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace heapgraph {

namespace {

constexpr std::uint64_t kRoundBytes = 32u << 20;  // compressed bytes per parallel round
constexpr std::uint64_t kMaxDeflateRatio = 1032;  // deflate never inflates more than this per input byte

DecodeError gzip_error(std::uint64_t offset, std::string message) {
    return DecodeError{offset, "gzip member", std::move(message)};
}

// ---- the temporary file ------------------------------------------------------------------

int open_temp_file(const std::string& name, const LoadOptions& options) {
    std::string dir = options.temp_dir;
    if (dir.empty()) dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    std::string path = dir + "/heapgraph-inflate-XXXXXX";
    int fd = ::mkstemp(path.data());
    if (fd < 0) throw UnreadableDump(name + ": cannot create a temporary file in " + dir + ": " + std::strerror(errno));
    ::unlink(path.c_str());  // gone when closed, whatever happens
    return fd;
}

void write_all(int fd, const std::uint8_t* data, std::size_t size, const std::string& name) {
    while (size > 0) {
        ssize_t written = ::write(fd, data, size);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0)
            throw UnreadableDump(name + ": cannot write the inflated dump to the temporary file: " +
                                 std::strerror(errno) + " (disk full? set TMPDIR)");
        data += written;
        size -= static_cast<std::size_t>(written);
    }
}

// ---- zlib: any gzip, serially -------------------------------------------------------------

// What inflating found: members, and where a cut file's last member starts.
struct Inflation {
    std::uint64_t members = 0;
    std::optional<std::uint64_t> cut_member;  // --allow-truncated
};

// Members from `from` on; `produced_before` counts toward max_inflated_bytes. With
// --allow-truncated a member the end of the file cuts gives what it holds up to the cut.
Inflation stream_with_zlib(Bytes gz, std::uint64_t from, std::uint64_t produced_before, bool file_mapping, int fd,
                           const std::string& name, const LoadOptions& options) {
    z_stream stream{};
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) throw DumpError(name, gzip_error(0, "zlib init failed"));
    std::unique_ptr<z_stream, decltype(&inflateEnd)> guard(&stream, inflateEnd);
    // Not zero-filled: zlib writes what it produces, and filling 4 MiB per call was most of
    // the time of a small file (fuzzing).
    const std::size_t window_size = 4u << 20;
    auto window = std::make_unique_for_overwrite<std::uint8_t[]>(window_size);
    std::uint64_t in_pos = from, member_start = from, produced_total = produced_before, members = 0, released = from;
    while (in_pos < gz.size()) {
        std::uint64_t in_chunk = std::min<std::uint64_t>(gz.size() - in_pos, 1u << 30);
        stream.next_in = const_cast<Bytef*>(gz.data() + in_pos);
        stream.avail_in = static_cast<uInt>(in_chunk);
        stream.next_out = window.get();
        stream.avail_out = static_cast<uInt>(window_size);
        int rc = inflate(&stream, Z_NO_FLUSH);
        std::uint64_t produced = window_size - stream.avail_out;
        in_pos += in_chunk - stream.avail_in;
        produced_total += produced;
        if (produced_total > options.max_inflated_bytes)
            throw DumpError(name, gzip_error(member_start, "inflates past the limit of " +
                                                               std::to_string(options.max_inflated_bytes) + " bytes"));
        write_all(fd, window.get(), produced, name);
        if (file_mapping && in_pos - released >= (64u << 20)) {
            release_pages(gz.subspan(released, in_pos - released));
            released = in_pos;
        }
        if (options.progress) options.progress({"inflate", in_pos, gz.size(), "B"});
        if (rc == Z_STREAM_END) {
            ++members;
            member_start = in_pos;
            if (inflateReset(&stream) != Z_OK) throw DumpError(name, gzip_error(in_pos, "zlib reset failed"));
            continue;
        }
        if (rc == Z_BUF_ERROR && stream.avail_in == 0) break;
        if (rc != Z_OK)
            throw DumpError(name, gzip_error(in_pos, std::string("is corrupt: ") + (stream.msg ? stream.msg : "inflate failed")));
    }
    if (member_start != gz.size()) {
        if (options.allow_truncated) return {members, member_start};
        throw DumpError(name, gzip_error(gz.size(), "compressed data ends inside the member at " + hex_offset(member_start) +
                                                        " (truncated file? --allow-truncated reads what it holds)"));
    }
    return {members, std::nullopt};
}

// ---- libdeflate: HotSpot's chunked gzip, in parallel --------------------------------------

struct Member {
    std::uint64_t start = 0, end = 0;
    std::vector<std::uint8_t> data;
    bool over_block = false;  // inflates to more than the BLOCKSIZE the file declares
};

class MemberInflater {
public:
    explicit MemberInflater(std::uint64_t block) : d_(libdeflate_alloc_decompressor(), libdeflate_free_decompressor), block_(block) {}

    // The member starting at `start`, or nullopt when no valid member starts there. HotSpot
    // never writes a member of more than BLOCKSIZE raw bytes, so the buffer is that big and
    // no bigger: a member that needs more is flagged (a bomb cannot make us allocate). Nor
    // bigger than what the bytes left can inflate to (deflate expands at most 1032:1): a
    // short file whose comment claims a 1 GiB BLOCKSIZE must not make us allocate 1 GiB.
    std::optional<Member> inflate(Bytes gz, std::uint64_t start) {
        Member m;
        m.start = start;
        reserve(std::min(block_, (gz.size() - start) * kMaxDeflateRatio) + 64);
        std::size_t in_used = 0, out_used = 0;
        auto rc = libdeflate_gzip_decompress_ex(d_.get(), gz.data() + start, gz.size() - start, scratch_.get(),
                                                scratch_size_, &in_used, &out_used);
        if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {
            m.over_block = true;
            return m;
        }
        if (rc != LIBDEFLATE_SUCCESS) return std::nullopt;
        m.data.assign(scratch_.get(), scratch_.get() + out_used);
        m.end = start + in_used;
        return m;
    }

private:
    // One buffer for all the members a worker inflates, grown when a member may need more,
    // and not zero-filled (libdeflate writes what it produces).
    void reserve(std::uint64_t bytes) {
        if (bytes <= scratch_size_) return;
        scratch_ = std::make_unique_for_overwrite<std::uint8_t[]>(bytes);
        scratch_size_ = bytes;
    }

    std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d_;
    std::uint64_t block_;
    std::unique_ptr<std::uint8_t[]> scratch_;
    std::uint64_t scratch_size_ = 0;
};

bool looks_like_member(Bytes gz, std::uint64_t at) {
    return at + 10 <= gz.size() && gz[at] == 0x1f && gz[at + 1] == 0x8b && gz[at + 2] == 8 && gz[at + 3] < 0x20;
}

// Members from the first one at or after `from` (found by header and a successful inflate,
// which checks the CRC) while they start before `until`.
std::vector<Member> inflate_part(Bytes gz, std::uint64_t from, std::uint64_t until, std::uint64_t block,
                                 bool from_is_member) {
    MemberInflater inflater(block);
    std::vector<Member> out;
    std::uint64_t at = from;
    if (!from_is_member) {
        for (; at < until; ++at) {
            if (!looks_like_member(gz, at)) continue;
            auto m = inflater.inflate(gz, at);
            if (!m || m->over_block) continue;  // a false start: a real first member is checked by the chain
            at = m->end;
            out.push_back(std::move(*m));
            break;
        }
        if (out.empty()) return out;
    }
    while (at < until && at < gz.size()) {
        auto m = inflater.inflate(gz, at);
        if (!m) break;  // the caller finds the chain broken and reports it
        bool over_block = m->over_block;
        at = m->end;
        out.push_back(std::move(*m));
        if (over_block) break;
    }
    return out;
}

Inflation inflate_in_parallel(Bytes gz, bool file_mapping, std::uint64_t block, int fd,
                              const std::string& name, const LoadOptions& options) {
    const int parts = std::max(1, tbb::this_task_arena::max_concurrency());
    std::uint64_t at = 0, members = 0, produced = 0;
    while (at < gz.size()) {
        const std::uint64_t round_end = std::min<std::uint64_t>(gz.size(), at + kRoundBytes);
        const std::uint64_t span = (round_end - at + parts - 1) / parts;
        std::vector<std::vector<Member>> found(parts);
        tbb::parallel_for(0, parts, [&](int p) {
            std::uint64_t from = at + p * span, until = std::min(round_end, from + span);
            if (from < until) found[p] = inflate_part(gz, from, until, block, p == 0);
        });
        // Check the chain: each member must start where the previous one ended.
        std::vector<Member> chain;
        for (auto& part : found)
            for (auto& m : part) {
                std::uint64_t expected = chain.empty() ? at : chain.back().end;
                if (m.start != expected) break;
                chain.push_back(std::move(m));
            }
        if (!chain.empty() && chain.back().over_block)
            throw DumpError(name, gzip_error(chain.back().start, "inflates to more than the HPROF BLOCKSIZE=" +
                                                                     std::to_string(block) + " the first member declares"));
        if (chain.empty()) {
            // A cut member: zlib streams what it holds, up to the cut (or names the damage).
            if (!options.allow_truncated)
                throw DumpError(name, gzip_error(at, "is not a valid gzip member (corrupt, or a truncated file ending at " +
                                                         hex_offset(gz.size()) + ": --allow-truncated reads what it holds)"));
            Inflation tail = stream_with_zlib(gz, at, produced, file_mapping, fd, name, options);
            return {members + tail.members, tail.cut_member};
        }
        for (const Member& m : chain) {
            produced += m.data.size();
            if (produced > options.max_inflated_bytes)
                throw DumpError(name, gzip_error(m.start, "inflates past the limit of " +
                                                              std::to_string(options.max_inflated_bytes) + " bytes"));
            write_all(fd, m.data.data(), m.data.size(), name);
        }
        members += chain.size();
        if (file_mapping) release_pages(gz.subspan(at, chain.back().end - at));
        at = chain.back().end;
        if (options.progress) options.progress({"inflate", at, gz.size(), "B"});
    }
    return {members, std::nullopt};
}

}  // namespace

std::uint64_t hotspot_gzip_block_size(Bytes gz) {
    // Header: magic, CM, FLG, MTIME(4), XFL, OS; then FEXTRA, FNAME, FCOMMENT as flagged.
    if (gz.size() < 10 || gz[0] != 0x1f || gz[1] != 0x8b) return 0;
    std::uint8_t flags = gz[3];
    std::size_t at = 10;
    if (flags & 4) {
        if (at + 2 > gz.size()) return 0;
        at += 2 + (gz[at] | (gz[at + 1] << 8));
    }
    auto skip_text = [&] {
        while (at < gz.size() && gz[at] != 0) ++at;
        ++at;
    };
    if (flags & 8) skip_text();
    if (!(flags & 16) || at >= gz.size()) return 0;
    std::size_t begin = at;
    skip_text();
    std::string comment(reinterpret_cast<const char*>(gz.data() + begin), std::min(at, gz.size()) - begin - 1);
    const std::string key = "HPROF BLOCKSIZE=";
    if (comment.rfind(key, 0) != 0) return 0;
    std::uint64_t block = std::strtoull(comment.c_str() + key.size(), nullptr, 10);
    // Each parallel worker holds one member of this size: a claim past 1 GiB is no HotSpot
    // file (it writes 1 MiB), so such a file streams through zlib in bounded memory.
    return block <= (std::uint64_t{1} << 30) ? block : 0;
}

InflatedFile::InflatedFile(int fd, const std::string& name, std::uint64_t members, std::optional<std::uint64_t> cut_member)
    : fd_(fd), map_(std::make_unique<MappedFile>(fd, name)), members_(members), cut_member_(cut_member) {}

InflatedFile::~InflatedFile() {
    map_.reset();
    ::close(fd_);
}

InflatedFile inflate_to_temp_file(Bytes gz, bool file_mapping, const std::string& name, const LoadOptions& options) {
    int fd = open_temp_file(name, options);
    try {
        std::uint64_t block = hotspot_gzip_block_size(gz);
        Inflation inflation = block ? inflate_in_parallel(gz, file_mapping, block, fd, name, options)
                                    : stream_with_zlib(gz, 0, 0, file_mapping, fd, name, options);
        return InflatedFile(fd, name, inflation.members, inflation.cut_member);
    } catch (...) {
        ::close(fd);
        throw;
    }
}

}  // namespace heapgraph
