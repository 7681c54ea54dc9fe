#include "gzip_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zlib.h>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace heapgraph {

namespace {

constexpr std::uint64_t kRoundBytes = 32u << 20;     // compressed bytes per parallel round, at most
constexpr std::uint64_t kInflightBytes = 32u << 20;  // inflated bytes the workers of a round hold
// Each worker buffers whole members, so BLOCKSIZE bounds them; HotSpot writes 1 MiB, and a
// claim past this streams through zlib in its 4 MiB window instead.
constexpr std::uint64_t kMaxParallelBlock = 4u << 20;

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

// Appends the inflated content to the temporary file in order. It enforces
// max_inflated_bytes, and hands the head to the head check before writing past it.
class ContentWriter {
public:
    ContentWriter(int fd, const std::string& name, const LoadOptions& options, const HeadCheck& head_check)
        : fd_(fd), name_(name), options_(options), head_check_(head_check) {}

    // `member_start`: the compressed offset the bytes come from, for the limit's message.
    void write(const std::uint8_t* data, std::size_t size, std::uint64_t member_start) {
        if (head_check_ && head_.size() < kInflateHeadBytes) {  // the head's error first: it names a record
            head_.insert(head_.end(), data, data + std::min<std::uint64_t>(size, kInflateHeadBytes - head_.size()));
            if (head_.size() == kInflateHeadBytes) head_check_(head_);
        }
        produced_ += size;
        if (produced_ > options_.max_inflated_bytes)
            throw DumpError(name_, gzip_error(member_start, "inflates past the limit of " +
                                                                std::to_string(options_.max_inflated_bytes) + " bytes"));
        write_all(fd_, data, size, name_);
    }
    std::uint64_t produced() const { return produced_; }

private:
    int fd_;
    const std::string& name_;
    const LoadOptions& options_;
    const HeadCheck& head_check_;
    std::vector<std::uint8_t> head_;
    std::uint64_t produced_ = 0;
};

// ---- zlib: any gzip, serially -------------------------------------------------------------

// What inflating found: members, and where a cut file's last member starts.
struct Inflation {
    std::uint64_t members = 0;
    std::optional<std::uint64_t> cut_member;  // --allow-truncated
};

// Members from `from` on. With --allow-truncated a member the end of the file cuts gives
// what it holds up to the cut.
Inflation stream_with_zlib(Bytes gz, std::uint64_t from, bool file_mapping, ContentWriter& out,
                           const std::string& name, const LoadOptions& options) {
    z_stream stream{};
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) throw DumpError(name, gzip_error(0, "zlib init failed"));
    std::unique_ptr<z_stream, decltype(&inflateEnd)> guard(&stream, inflateEnd);
    // Not zero-filled: zlib writes what it produces, and filling 4 MiB per call was most of
    // the time of a small file (fuzzing).
    const std::size_t window_size = 4u << 20;
    auto window = std::make_unique_for_overwrite<std::uint8_t[]>(window_size);
    std::uint64_t in_pos = from, member_start = from, members = 0;
    ReleaseBehind behind(gz, file_mapping, from);
    while (in_pos < gz.size()) {
        std::uint64_t in_chunk = std::min<std::uint64_t>(gz.size() - in_pos, 1u << 30);
        stream.next_in = const_cast<Bytef*>(gz.data() + in_pos);
        stream.avail_in = static_cast<uInt>(in_chunk);
        stream.next_out = window.get();
        stream.avail_out = static_cast<uInt>(window_size);
        int rc = inflate(&stream, Z_NO_FLUSH);
        in_pos += in_chunk - stream.avail_in;
        out.write(window.get(), window_size - stream.avail_out, member_start);
        behind.at(in_pos);
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
    std::uint64_t start = 0, end = 0;            // in the compressed file
    std::uint64_t out_offset = 0, out_size = 0;  // in the worker's buffer
    bool over_block = false;  // inflates to more than the BLOCKSIZE the file declares
};

bool looks_like_member(Bytes gz, std::uint64_t at) {
    return at + 10 <= gz.size() && gz[at] == 0x1f && gz[at + 1] == 0x8b && gz[at + 2] == 8 && gz[at + 3] < 0x20;
}

// One worker's share of a round: the members it inflates, back to back in one buffer of
// `budget` bytes, allocated once and not zero-filled (libdeflate writes what it produces).
class PartInflater {
public:
    PartInflater(std::uint64_t block, std::uint64_t budget)
        : d_(libdeflate_alloc_decompressor(), libdeflate_free_decompressor), block_(block), budget_(budget) {}

    // Members from the first one at or after `from` (found by header and a successful
    // inflate, which checks the CRC; `from_is_member`: the one at `from`) while they start
    // before `until` and the buffer has room for one more block.
    void run(Bytes gz, std::uint64_t from, std::uint64_t until, bool from_is_member) {
        members_.clear();
        used_ = 0;
        if (from >= until) return;
        if (!buffer_) buffer_ = std::make_unique_for_overwrite<std::uint8_t[]>(budget_);
        std::uint64_t at = from_is_member ? from : first_member(gz, from, until);
        while (at < until && at < gz.size() && used_ + block_ <= budget_) {
            auto m = inflate(gz, at);
            if (!m) break;  // the caller finds the chain broken and reports it
            keep(*m);
            if (m->over_block) break;
            at = m->end;
        }
    }
    const std::vector<Member>& members() const { return members_; }
    const std::uint8_t* data() const { return buffer_.get(); }

private:
    // Keeps the first member found and returns where it ends (`until` when none is found).
    std::uint64_t first_member(Bytes gz, std::uint64_t from, std::uint64_t until) {
        for (std::uint64_t at = from; at < until; ++at) {
            if (!looks_like_member(gz, at)) continue;
            auto m = inflate(gz, at);
            if (!m || m->over_block) continue;  // a false start: a real first member is checked by the chain
            keep(*m);
            return m->end;
        }
        return until;
    }

    // The member at `start`, or nullopt when no valid member starts there. HotSpot never
    // writes a member of more than BLOCKSIZE raw bytes, so it gets that much room and no
    // more: a member that needs more is flagged (a bomb cannot make us allocate).
    std::optional<Member> inflate(Bytes gz, std::uint64_t start) {
        std::size_t in_used = 0, out_used = 0;
        auto rc = libdeflate_gzip_decompress_ex(d_.get(), gz.data() + start, gz.size() - start, buffer_.get() + used_,
                                                block_, &in_used, &out_used);
        if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) return Member{start, start, used_, 0, true};
        if (rc != LIBDEFLATE_SUCCESS) return std::nullopt;
        return Member{start, start + in_used, used_, out_used, false};
    }
    void keep(const Member& m) {
        members_.push_back(m);
        used_ += m.out_size;
    }

    std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d_;
    std::uint64_t block_, budget_;
    std::unique_ptr<std::uint8_t[]> buffer_;
    std::uint64_t used_ = 0;
    std::vector<Member> members_;
};

// Writes the members that chain on from `at` (each starts where the one before ended), in
// order, straight from the workers' buffers; returns where the chain ends (`at`: none).
std::uint64_t write_chain(const std::vector<PartInflater>& parts, std::uint64_t at, std::uint64_t& members,
                          ContentWriter& out, std::uint64_t block, const std::string& name) {
    for (const PartInflater& part : parts)
        for (const Member& m : part.members()) {
            if (m.start != at) return at;
            if (m.over_block)
                throw DumpError(name, gzip_error(m.start, "inflates to more than the HPROF BLOCKSIZE=" +
                                                              std::to_string(block) + " the first member declares"));
            out.write(part.data() + m.out_offset, m.out_size, m.start);
            at = m.end;
            ++members;
        }
    return at;
}

// Compressed bytes per worker for the next round, from the ratio the last one showed, with
// a quarter of the budget spare: a worker whose budget runs out early breaks the chain, and
// the work of the workers after it is done again.
std::uint64_t next_span(std::uint64_t compressed, std::uint64_t inflated, std::uint64_t budget, int parts) {
    const std::uint64_t most = kRoundBytes / static_cast<std::uint64_t>(parts);
    if (inflated == 0) return most;
    const double span = static_cast<double>(budget) * 0.75 * static_cast<double>(compressed) / static_cast<double>(inflated);
    return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(span), 1, most);
}

Inflation inflate_in_parallel(Bytes gz, bool file_mapping, std::uint64_t block, ContentWriter& out,
                              const std::string& name, const LoadOptions& options) {
    // Each worker holds kInflightBytes / parts, room for two blocks at least.
    const int parts = static_cast<int>(std::clamp<std::uint64_t>(
        static_cast<std::uint64_t>(tbb::this_task_arena::max_concurrency()), 1, kInflightBytes / (2 * block)));
    const std::uint64_t budget = kInflightBytes / static_cast<std::uint64_t>(parts);
    std::vector<PartInflater> workers;
    for (int p = 0; p < parts; ++p) workers.emplace_back(block, budget);
    // The first round inflates the first member alone: the head check comes after a block.
    std::uint64_t at = 0, members = 0, span = 1;
    int active = 1;
    while (at < gz.size()) {
        const std::uint64_t produced_before = out.produced();
        tbb::parallel_for(0, parts, [&](int p) {
            const std::uint64_t from = at + static_cast<std::uint64_t>(p) * span;
            workers[p].run(gz, from, p < active ? std::min(gz.size(), from + span) : from, p == 0);
        });
        const std::uint64_t end = write_chain(workers, at, members, out, block, name);
        if (end == at) {
            // A cut member: zlib streams what it holds, up to the cut (or names the damage).
            if (!options.allow_truncated)
                throw DumpError(name, gzip_error(at, "is not a valid gzip member (corrupt, or a truncated file ending at " +
                                                         hex_offset(gz.size()) + ": --allow-truncated reads what it holds)"));
            Inflation tail = stream_with_zlib(gz, at, file_mapping, out, name, options);
            return {members + tail.members, tail.cut_member};
        }
        if (file_mapping) release_pages(gz.subspan(at, end - at));
        span = next_span(end - at, out.produced() - produced_before, budget, parts);
        active = parts;
        at = end;
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
    // Workers buffer members of this size: a larger claim is no HotSpot file (it writes
    // 1 MiB), so such a file streams through zlib in bounded memory.
    return block <= kMaxParallelBlock ? block : 0;
}

InflatedFile::InflatedFile(int fd, const std::string& name, std::uint64_t members, std::optional<std::uint64_t> cut_member)
    : fd_(fd), map_(std::make_unique<MappedFile>(fd, name)), members_(members), cut_member_(cut_member) {}

InflatedFile::~InflatedFile() {
    map_.reset();
    ::close(fd_);
}

InflatedFile inflate_to_temp_file(Bytes gz, bool file_mapping, const std::string& name, const LoadOptions& options,
                                  const HeadCheck& head_check) {
    int fd = open_temp_file(name, options);
    try {
        ContentWriter out(fd, name, options, head_check);
        std::uint64_t block = hotspot_gzip_block_size(gz);
        Inflation inflation = block ? inflate_in_parallel(gz, file_mapping, block, out, name, options)
                                    : stream_with_zlib(gz, 0, file_mapping, out, name, options);
        return InflatedFile(fd, name, inflation.members, inflation.cut_member);
    } catch (...) {
        ::close(fd);
        throw;
    }
}

}  // namespace heapgraph
