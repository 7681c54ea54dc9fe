// Format detection from content and the shared error type.
// HPROF opens with "JAVA PROFILE 1.0.x\0"; gzip with 1f 8b; PHD with a u2 length 18 and
// "portable heap dump"; the classic text heapdump with "// Version:" (ASCII or, on z/OS,
// EBCDIC code page 1047).
#include "classic.h"
#include "formats.h"

#include <algorithm>
#include <cstdio>

namespace heapgraph {

DumpFormat detect_format(Bytes head) {
    // A file shorter than the magic that matches as far as it goes is a dump cut short:
    // let its reader name the offset where it ends.
    constexpr std::string_view kHprof = "JAVA PROFILE ";
    if (!head.empty() && starts_with(head, kHprof.substr(0, std::min(head.size(), kHprof.size()))))
        return DumpFormat::hprof;
    if (head.size() >= 2 && head[0] == 0x1f && head[1] == 0x8b) return DumpFormat::gzip;
    if (head.size() >= 20 && head[0] == 0 && head[1] == 18 &&
        starts_with(head.subspan(2), "portable heap dump"))
        return DumpFormat::phd;
    Bytes text = head;
    if (starts_with(text, "\xEF\xBB\xBF")) text = text.subspan(3);
    if (starts_with(text, "// Version:")) return DumpFormat::classic;
    if (classic_is_ebcdic(text)) return DumpFormat::classic;
    return DumpFormat::unknown;
}

std::string format_name(DumpFormat format) {
    switch (format) {
        case DumpFormat::hprof: return "hprof";
        case DumpFormat::gzip: return "gzip";
        case DumpFormat::phd: return "phd";
        case DumpFormat::classic: return "classic";
        case DumpFormat::unknown: break;
    }
    return "unknown";
}

std::string hex_offset(std::uint64_t offset) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%08llx", static_cast<unsigned long long>(offset));
    return text;
}

static std::string describe(const std::string& file, const DecodeError& error) {
    std::string text = file + " @" + hex_offset(error.offset) + ": ";
    if (!error.record.empty()) text += error.record + " ";
    return text + error.message;
}

DumpError::DumpError(const std::string& file, const DecodeError& error)
    : std::runtime_error(describe(file, error)), error(error) {}

}  // namespace heapgraph
