// Entry point of the pipeline: map the file, recognise the format from its content, inflate
// gzip, and hand each format to its loader.
#include <oneapi/tbb/task_arena.h>

#include <cctype>

#include "edge_names.h"
#include "gzip_input.h"
#include "hprof_loader.h"
#include "phd_loader.h"
#include "classic_loader.h"
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

// Where the bytes come from: a file mapping may drop decoded pages; memory may not.
struct Source {
    Bytes bytes;
    bool inflated = false;       // the content of a gzip file
    bool file_mapping = false;
};

LoadedDump load_source(Source source, DumpInfo info, const LoadOptions& options);

LoadedDump load_gzip(Bytes compressed, bool file_mapping, DumpInfo info, const LoadOptions& options) {
    std::vector<StageTiming> inflate_timing;
    StageClock clock(inflate_timing);
    clock.start("inflate");
    // Shared with the loaded dump, whose paths are named from the inflated records later.
    std::shared_ptr<const InflatedFile> kept(new InflatedFile(inflate_to_temp_file(compressed, file_mapping, info.path, options)));
    const InflatedFile& inflated = *kept;
    clock.stop();
    info.inflated_bytes = inflated.bytes().size();
    info.gzip_members = inflated.members();
    LoadedDump loaded = load_source({inflated.bytes(), true, true}, std::move(info), options);
    if (loaded.source) loaded.source->owner = kept;
    loaded.timings.insert(loaded.timings.begin(), inflate_timing.begin(), inflate_timing.end());
    if (auto cut = inflated.cut_member())
        loaded.warnings.insert(loaded.warnings.begin(),
                               {"truncated", 1, "the gzip file is cut short: it ends at " + hex_offset(compressed.size()) +
                                                    " inside the member that starts at " + hex_offset(*cut) + "; " +
                                                    std::to_string(loaded.info.inflated_bytes) +
                                                    " bytes inflated up to the cut (offsets in the other warnings are in them)"});
    return loaded;
}

LoadedDump load_source(Source source, DumpInfo info, const LoadOptions& options) {
    Bytes bytes = source.bytes;
    if (bytes.empty()) throw DumpError(info.path, {0, "file", source.inflated ? "inflates to nothing" : "is empty"});
    DumpFormat format = detect_format(bytes.first(std::min<std::size_t>(bytes.size(), 64)));
    switch (format) {
        case DumpFormat::hprof:
            info.format = source.inflated ? "hprof-gz" : "hprof";
            return load_hprof(bytes, std::move(info), options, source.file_mapping);
        case DumpFormat::gzip:
            if (source.inflated) break;
            return load_gzip(bytes, source.file_mapping, std::move(info), options);
        case DumpFormat::phd:
            if (source.inflated) info.format = "phd-gz";
            return load_phd(bytes, std::move(info), options);
        case DumpFormat::classic:
            if (source.inflated) info.format = "classic-gz";
            return load_classic(bytes, std::move(info), options);
        case DumpFormat::unknown:
            break;
    }
    throw UnreadableDump(info.path + (source.inflated ? ": gzip content" : "") +
                         " is not a heap dump we recognise; first bytes: " + first_bytes(bytes));
}

LoadedDump run_in_arena(Source source, const std::string& name, const LoadOptions& options) {
    DumpInfo info;
    info.path = name;
    info.bytes = source.bytes.size();
    tbb::task_arena arena(options.threads ? static_cast<int>(options.threads) : tbb::task_arena::automatic);
    LoadedDump loaded = arena.execute([&] { return load_source(source, std::move(info), options); });
    cut_long_names(loaded);
    return loaded;
}

}  // namespace

LoadedDump load_dump_bytes(Bytes bytes, const std::string& name, const LoadOptions& options) {
    return run_in_arena({bytes, false, false}, name, options);
}

LoadedDump load_dump(const std::string& path, const LoadOptions& options) {
    auto file = std::make_shared<const MappedFile>(path);
    LoadedDump loaded = run_in_arena({file->bytes(), false, true}, path, options);
    if (loaded.source && !loaded.source->owner) loaded.source->owner = file;  // gzip: the inflated file
    return loaded;
}

}  // namespace heapgraph
