// Entry point of the pipeline: map the file, recognise the format from its content, inflate
// gzip, and hand each format to its loader. A file that shrinks while it is read is an error
// once the loader is done (MappedFile::check_intact), whatever the loader made of the zeros.
#include <oneapi/tbb/task_arena.h>

#include <cctype>

#include "edge_names.h"
#include "gzip_input.h"
#include "hprof_loader.h"
#include "kept_dump.h"
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

UnreadableDump unrecognised(const std::string& path, bool inflated, Bytes bytes) {
    return UnreadableDump(path + (inflated ? ": gzip content" : "") +
                          " is not a heap dump we recognise; first bytes: " + first_bytes(bytes));
}

// `read`'s dump, unless `file` shrank while it was read: then that is the error, not what
// the loader made of the zeros read past the new end.
template <typename Read>
LoadedDump read_intact(const MappedFile& file, Read&& read) {
    LoadedDump loaded = [&] {
        try {
            return read();
        } catch (...) {
            file.check_intact();
            throw;
        }
    }();
    file.check_intact();
    return loaded;
}

// The head of an HPROF's content: its header, and its first record's header as far as the
// head holds the record (a valid tag, and a length the content may inflate to).
void check_hprof_head(Bytes head, const std::string& name, const LoadOptions& options) {
    auto header = read_hprof_header(head);
    if (auto* error = std::get_if<DecodeError>(&header)) throw DumpError(name, *error);
    const std::uint64_t first = std::get<HprofHeader>(header).records_offset;
    auto frame = read_record_frame(head, first);
    auto* error = std::get_if<DecodeError>(&frame);
    if (!error) return;
    auto longer = hprof_cut_record(head, first);  // whole but for the end of the head?
    if (!longer) throw DumpError(name, *error);
    const RecordFrame& claim = longer->frame;
    if (!options.allow_truncated && claim.body_offset + claim.body_length > options.max_inflated_bytes)
        throw DumpError(name, {first, hprof_tag_name(claim.tag),
                               "needs " + std::to_string(claim.body_length) + " bytes, past the limit of " +
                                   std::to_string(options.max_inflated_bytes) + " bytes the content may inflate to"});
}

// Run on the first 64 KiB a gzip dump inflates to, before it inflates further: content that
// is no heap dump, or an HPROF that breaks at its first record, fails at once with the error
// the whole content would give (a gzip bomb of zeros must not fill the disk first).
HeadCheck head_check(const std::string& name, const LoadOptions& options) {
    return [&name, &options](Bytes head) {
        DumpFormat format = detect_format(head.first(64));
        if (format == DumpFormat::unknown || format == DumpFormat::gzip) throw unrecognised(name, true, head);
        if (format == DumpFormat::hprof) check_hprof_head(head, name, options);
    };
}

// Where the bytes come from: a file mapping may drop decoded pages; memory may not.
struct Source {
    Bytes bytes;
    bool inflated = false;       // the content of a gzip file
    bool file_mapping = false;
    int fd = -1;  // the dump file's, when `bytes` are its mapping as it is on disk
};

LoadedDump load_source(Source source, DumpInfo info, const LoadOptions& options);

LoadedDump load_gzip(Bytes compressed, bool file_mapping, DumpInfo info, const LoadOptions& options) {
    std::vector<StageTiming> inflate_timing;
    StageClock clock(inflate_timing);
    clock.start("inflate");
    // Shared with the loaded dump, whose paths are named from the inflated records later.
    std::shared_ptr<const InflatedFile> kept(new InflatedFile(
        inflate_to_temp_file(compressed, file_mapping, info.path, options, head_check(info.path, options))));
    const InflatedFile& inflated = *kept;
    clock.stop();
    info.inflated_bytes = inflated.bytes().size();
    info.gzip_members = inflated.members();
    LoadedDump loaded = read_intact(inflated.mapping(), [&] {
        return load_source({inflated.bytes(), true, true}, std::move(info), options);
    });
    if (loaded.source) {
        loaded.source->owner = kept;
        loaded.source->mapping = &inflated.mapping();
    }
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
            return load_hprof(bytes, std::move(info), options, source.file_mapping, source.fd);
        case DumpFormat::gzip:
            if (source.inflated) break;
            return load_gzip(bytes, source.file_mapping, std::move(info), options);
        case DumpFormat::phd:
            if (source.inflated) info.format = "phd-gz";
            return load_phd(bytes, std::move(info), options, source.file_mapping);
        case DumpFormat::classic:
            if (source.inflated) info.format = "classic-gz";
            return load_classic(bytes, std::move(info), options, source.file_mapping);
        case DumpFormat::unknown:
            break;
    }
    throw unrecognised(info.path, source.inflated, bytes);
}

LoadedDump run_in_arena(Source source, const std::string& name, const LoadOptions& options) {
    DumpInfo info;
    info.path = name;
    info.bytes = source.bytes.size();
    tbb::task_arena arena(options.threads ? static_cast<int>(options.threads) : tbb::task_arena::automatic);
    LoadedDump loaded = arena.execute([&] { return load_source(source, std::move(info), options); });
    if (options.scan_only && loaded.info.format.rfind("hprof", 0) != 0)  // loaded whole
        loaded.scan = {loaded.graph.node_count(), loaded.graph.edges, 0, true};
    cut_long_names(loaded);
    return loaded;
}

}  // namespace

LoadedDump load_dump_bytes(Bytes bytes, const std::string& name, const LoadOptions& options) {
    return run_in_arena({bytes, false, false}, name, options);
}

LoadedDump load_dump(const std::string& path, const LoadOptions& options) {
    auto file = std::make_shared<const MappedFile>(path);
    LoadedDump loaded =
        read_intact(*file, [&] { return run_in_arena({file->bytes(), false, true, file->fd()}, path, options); });
    if (loaded.source && !loaded.source->owner) {  // gzip: the inflated file
        loaded.source->owner = file;
        loaded.source->mapping = file.get();
    }
    return loaded;
}

// A reopened dump's source reads the same bytes the load read: the file as mapped, or the
// gzip file's content inflated again (the first run's inflated file went with it).
void attach_dump_bytes(LoadedDump& dump, const std::string& path, const LoadOptions& options) {
    auto file = std::make_shared<const MappedFile>(path);
    if (file->bytes().size() != dump.info.bytes) throw KeptDumpError(path + ": the dump changed since it was kept");
    if (dump.info.format != "hprof-gz") {
        dump.source->file = file->bytes();
        dump.source->owner = file;
        dump.source->mapping = file.get();
        return;
    }
    std::shared_ptr<const InflatedFile> inflated(
        new InflatedFile(inflate_to_temp_file(file->bytes(), true, path, options, head_check(path, options))));
    if (inflated->bytes().size() != dump.info.inflated_bytes)
        throw KeptDumpError(path + ": the dump inflates to other bytes than when it was kept");
    dump.source->file = inflated->bytes();
    dump.source->owner = inflated;
    dump.source->mapping = &inflated->mapping();
}

}  // namespace heapgraph
