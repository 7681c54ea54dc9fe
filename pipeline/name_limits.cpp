// Dump strings shown in reports are cut to kMaxNameBytes: a 2 MB dump can name a class with
// 20,000 characters and put it on every step of a 20,000-link path, and the report would
// hold that name 20,000 times. Java's own limit (65,535 bytes of modified UTF-8 in a class
// file) is no help: real class and field names stay far below 1 KiB.
#include "pipeline.h"

namespace heapgraph {

namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

}  // namespace

bool cut_name(std::string& name) {
    if (name.size() <= kMaxNameBytes) return false;
    std::size_t end = kMaxNameBytes - kEllipsis.size();
    while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;
    name.resize(end);
    name += kEllipsis;
    return true;
}

void cut_long_names(LoadedDump& dump) {
    std::uint64_t cut = 0;
    for (auto& edges : dump.field_names.class_edges)
        for (std::string& name : edges) cut += cut_name(name);
    for (auto& fields : dump.field_names.instance_fields)
        for (std::string& name : fields.own) cut += cut_name(name);
    for (graph::ClassInfo& c : dump.graph.classes) cut += cut_name(c.name);
    if (cut == 0) return;
    dump.warnings.push_back({"truncated_output", cut,
                             std::to_string(cut) + " class or field names longer than " + std::to_string(kMaxNameBytes) +
                                 " bytes are cut to that length, ending in U+2026, in every report"});
}

}  // namespace heapgraph
