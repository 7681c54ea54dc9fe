// gzip files built in the tests: single members, HotSpot's chunked form (`jcmd -gz`), and
// bombs that inflate to gigabytes from a few megabytes, made by repeating one deflated block.
#pragma once

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace heapgraph::test {

// `raw` as one gzip member (zlib's gzip wrapper), `comment` in its header when not empty.
inline std::vector<std::uint8_t> gzip_member(const std::vector<std::uint8_t>& raw, const std::string& comment = "",
                                             int level = 9) {
    z_stream s{};
    REQUIRE(deflateInit2(&s, level, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) == Z_OK);
    gz_header header{};
    std::string comment_z = comment;
    if (!comment.empty()) {
        header.comment = reinterpret_cast<Bytef*>(comment_z.data());
        REQUIRE(deflateSetHeader(&s, &header) == Z_OK);
    }
    std::vector<std::uint8_t> out(deflateBound(&s, raw.size()) + 64 + comment.size());
    s.next_in = const_cast<Bytef*>(raw.data());
    s.avail_in = static_cast<uInt>(raw.size());
    s.next_out = out.data();
    s.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
    out.resize(s.total_out);
    deflateEnd(&s);
    return out;
}

inline const std::string kHotspotComment = "HPROF BLOCKSIZE=1048576";

// HotSpot's chunked form: a member holding `first` (with HotSpot's BLOCKSIZE comment), then
// `copies` members each holding `rest`.
inline std::vector<std::uint8_t> chunked_gzip(const std::vector<std::uint8_t>& first, const std::vector<std::uint8_t>& rest,
                                              std::size_t copies) {
    std::vector<std::uint8_t> out = gzip_member(first, kHotspotComment);
    const std::vector<std::uint8_t> member = gzip_member(rest);
    out.reserve(out.size() + copies * member.size());
    for (std::size_t i = 0; i < copies; ++i) out.insert(out.end(), member.begin(), member.end());
    return out;
}

// Deflates `raw` as a run of non-final blocks that refer to nothing before them (a full
// flush), so the run can be repeated inside one deflate stream.
inline std::vector<std::uint8_t> deflate_run(z_stream& s, const std::vector<std::uint8_t>& raw, int flush) {
    std::vector<std::uint8_t> out(deflateBound(&s, raw.size()) + 64);
    s.next_in = const_cast<Bytef*>(raw.data());
    s.avail_in = static_cast<uInt>(raw.size());
    s.next_out = out.data();
    s.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&s, flush);
    REQUIRE((rc == Z_OK || rc == Z_STREAM_END));
    REQUIRE(s.avail_in == 0);
    out.resize(out.size() - s.avail_out);
    return out;
}

// One gzip member (as `gzip` writes) of `prefix` then `mebibytes` MiB of zeros: 1 MiB of
// zeros deflated once (about 1 KB) and repeated, so 4 GiB of content take 4 MB.
inline std::vector<std::uint8_t> gzip_bomb(const std::vector<std::uint8_t>& prefix, std::uint32_t mebibytes) {
    z_stream s{};
    REQUIRE(deflateInit2(&s, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY) == Z_OK);
    const std::vector<std::uint8_t> zeros(1u << 20);
    std::vector<std::uint8_t> out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};  // header: deflate, no flags, Unix
    std::vector<std::uint8_t> head = deflate_run(s, prefix, Z_FULL_FLUSH), run = deflate_run(s, zeros, Z_FULL_FLUSH);
    std::vector<std::uint8_t> end = deflate_run(s, {}, Z_FINISH);
    deflateEnd(&s);
    out.insert(out.end(), head.begin(), head.end());
    uLong crc = crc32(0, prefix.data(), static_cast<uInt>(prefix.size()));
    const uLong zeros_crc = crc32(0, zeros.data(), static_cast<uInt>(zeros.size()));
    for (std::uint32_t i = 0; i < mebibytes; ++i) {
        out.insert(out.end(), run.begin(), run.end());
        crc = crc32_combine(crc, zeros_crc, static_cast<z_off_t>(zeros.size()));
    }
    out.insert(out.end(), end.begin(), end.end());
    const std::uint32_t size = static_cast<std::uint32_t>(prefix.size() + (std::uint64_t{mebibytes} << 20));
    for (std::uint32_t value : {static_cast<std::uint32_t>(crc), size})  // trailer: CRC-32, size mod 2^32
        for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
    return out;
}

}  // namespace heapgraph::test
