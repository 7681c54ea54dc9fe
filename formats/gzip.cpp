// Inflates a gzip file, member after member, with zlib's streaming inflater. HotSpot's
// `jcmd GC.heap_dump -gz` writes many members; plain gzip writes one. The pipeline issue
// replaces this serial path with parallel per-member inflation; this one stays as the
// fallback for single-member files.
#include "formats.h"

#include <zlib.h>

#include <memory>

namespace heapgraph {

namespace {

DecodeError gzip_error(std::uint64_t offset, std::string message) {
    return DecodeError{offset, "gzip member", std::move(message)};
}

}  // namespace

std::variant<std::vector<std::uint8_t>, DecodeError> gunzip(Bytes compressed,
                                                            std::uint64_t max_bytes) {
    std::vector<std::uint8_t> out;
    z_stream stream{};
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return gzip_error(0, "zlib init failed");
    std::unique_ptr<z_stream, decltype(&inflateEnd)> guard(&stream, inflateEnd);
    std::uint64_t in_pos = 0, member_start = 0;
    std::vector<std::uint8_t> window(1 << 20);
    while (in_pos < compressed.size()) {
        std::uint64_t in_chunk = std::min<std::uint64_t>(compressed.size() - in_pos, 1u << 30);
        stream.next_in = const_cast<Bytef*>(compressed.data() + in_pos);
        stream.avail_in = static_cast<uInt>(in_chunk);
        stream.next_out = window.data();
        stream.avail_out = static_cast<uInt>(window.size());
        int rc = inflate(&stream, Z_NO_FLUSH);
        std::uint64_t used = in_chunk - stream.avail_in;
        std::uint64_t produced = window.size() - stream.avail_out;
        if (out.size() + produced > max_bytes)
            return gzip_error(member_start, "inflates past the limit of " +
                                                std::to_string(max_bytes) + " bytes");
        out.insert(out.end(), window.begin(), window.begin() + produced);
        in_pos += used;
        if (rc == Z_STREAM_END) {
            member_start = in_pos;
            if (inflateReset(&stream) != Z_OK) return gzip_error(in_pos, "zlib reset failed");
            continue;
        }
        if (rc == Z_BUF_ERROR && stream.avail_in == 0)
            return gzip_error(in_pos, "compressed data ends inside a member (truncated file)");
        if (rc != Z_OK)
            return gzip_error(in_pos, std::string("is corrupt: ") +
                                          (stream.msg ? stream.msg : "inflate failed"));
    }
    if (member_start != compressed.size())
        return gzip_error(compressed.size(), "compressed data ends inside a member (truncated file)");
    return out;
}

}  // namespace heapgraph
