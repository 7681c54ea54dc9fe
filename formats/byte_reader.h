// A bounds-checked big-endian cursor over a byte span. Every read says whether the bytes were
// there; callers turn a short read into a DecodeError naming the record. HPROF is big-endian.
#pragma once

#include <cstdint>
#include <span>

namespace heapgraph {

class ByteReader {
public:
    ByteReader(std::span<const std::uint8_t> bytes, std::uint64_t pos = 0)
        : bytes_(bytes), pos_(pos) {}

    std::uint64_t pos() const { return pos_; }
    std::uint64_t remaining() const { return pos_ <= bytes_.size() ? bytes_.size() - pos_ : 0; }
    bool has(std::uint64_t n) const { return remaining() >= n; }
    void skip(std::uint64_t n) { pos_ += n; }

    // Unchecked reads: call has() first.
    std::uint64_t u(std::uint32_t width) {
        std::uint64_t value = 0;
        for (std::uint32_t i = 0; i < width; ++i) value = (value << 8) | bytes_[pos_ + i];
        pos_ += width;
        return value;
    }
    std::uint8_t u1() { return bytes_[pos_++]; }
    std::uint16_t u2() { return static_cast<std::uint16_t>(u(2)); }
    std::uint32_t u4() { return static_cast<std::uint32_t>(u(4)); }
    std::uint64_t u8() { return u(8); }

    const std::uint8_t* here() const { return bytes_.data() + pos_; }

private:
    std::span<const std::uint8_t> bytes_;
    std::uint64_t pos_;
};

}  // namespace heapgraph
