// Entry point of the pipeline: map the file, recognise the format from its content, inflate
// gzip, and hand HPROF to the HPROF loader. PHD and classic text are recognised but not read
// yet: they raise UnsupportedFormat with one line naming them.
#include <oneapi/tbb/task_arena.h>

#include <cctype>

#include "hprof_loader.h"
#include "mapped_file.h"
#include "pipeline.h"

namespace heapgraph {

namespace {

std::string first_bytes(Bytes bytes) {
    std::string text;
    for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 16); ++i) {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%02x ", bytes[i]);
        text += hex;
    }
    text += "\"";
    for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 16); ++i)
        text += std::isprint(bytes[i]) ? static_cast<char>(bytes[i]) : '.';
    return text + "\"";
}

LoadedDump load_bytes(Bytes bytes, DumpInfo info, const LoadOptions& options, bool inflated);

LoadedDump load_gzip(Bytes compressed, DumpInfo info, const LoadOptions& options) {
    auto inflated = gunzip(compressed, options.max_inflated_bytes);
    if (auto* error = std::get_if<DecodeError>(&inflated)) throw DumpError(info.path, *error);
    const auto& bytes = std::get<std::vector<std::uint8_t>>(inflated);
    info.inflated_bytes = bytes.size();
    return load_bytes(bytes, std::move(info), options, true);
}

LoadedDump load_bytes(Bytes bytes, DumpInfo info, const LoadOptions& options, bool inflated) {
    if (bytes.empty()) throw DumpError(info.path, {0, "file", inflated ? "inflates to nothing" : "is empty"});
    DumpFormat format = detect_format(bytes.first(std::min<std::size_t>(bytes.size(), 64)));
    switch (format) {
        case DumpFormat::hprof:
            info.format = inflated ? "hprof-gz" : "hprof";
            return load_hprof(bytes, std::move(info), options);
        case DumpFormat::gzip:
            if (inflated) break;
            return load_gzip(bytes, std::move(info), options);
        case DumpFormat::phd:
            throw UnsupportedFormat(info.path + ": IBM Portable Heap Dump (PHD) is recognised but not supported yet");
        case DumpFormat::classic:
            throw UnsupportedFormat(info.path + ": IBM classic text heapdump is recognised but not supported yet");
        case DumpFormat::unknown:
            break;
    }
    throw UnreadableDump(info.path + (inflated ? ": gzip content" : "") +
                         " is not a heap dump we recognise; first bytes: " + first_bytes(bytes));
}

}  // namespace

LoadedDump load_dump_bytes(Bytes bytes, const std::string& name, const LoadOptions& options) {
    DumpInfo info;
    info.path = name;
    info.bytes = bytes.size();
    tbb::task_arena arena(options.threads ? static_cast<int>(options.threads)
                                          : tbb::task_arena::automatic);
    return arena.execute([&] { return load_bytes(bytes, std::move(info), options, false); });
}

LoadedDump load_dump(const std::string& path, const LoadOptions& options) {
    MappedFile file(path);
    return load_dump_bytes(file.bytes(), path, options);
}

}  // namespace heapgraph
