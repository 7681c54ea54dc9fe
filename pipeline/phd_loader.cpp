// PHD -> heap graph:
//   1. header, then one cheap pass that cuts the body into runs carrying the decoder state;
//   2. runs decode in parallel through the HPROF flow graph (ordered_flow.h): results come
//      back in run order, so any thread count agrees;
//   3. the records become the heap graph, with the class loaders and GC roots PHD does not
//      record worked out as DTFJ and Eclipse MAT do (ibm_heap_builder.cpp).
#include "phd_loader.h"

#include "ibm_heap_builder.h"
#include "ordered_flow.h"
#include "take.h"

namespace heapgraph {

namespace {

constexpr std::uint64_t kRunBytes = 4u << 20;

// --allow-truncated: the record the end of the file cut, and what was lost with it.
Warning truncation_warning(const DecodeError& cut, std::uint64_t read_up_to, std::uint64_t file_end) {
    return {"truncated", 1,
            "the dump is cut short: " + cut.record + " at " + hex_offset(cut.offset) + " " + cut.message +
                "; read up to the last whole record, which ends at " + hex_offset(read_up_to) + ": " +
                std::to_string(file_end - read_up_to) + " bytes after it ignored; " + kLostToCut};
}

}  // namespace

LoadedDump load_phd(Bytes file, DumpInfo info, const LoadOptions& options) {
    std::vector<StageTiming> timings;
    StageClock clock(timings);
    clock.start("frame");
    PhdHeader header = take(info, read_phd_header(file));
    if (info.format.empty()) info.format = "phd";
    info.format_version = "PHD " + std::to_string(header.version) + (header.j9 ? " (J9)" : "");
    info.id_size = header.word_bytes();
    info.dumps_in_file = 1;
    if (options.dump_index != 0)
        throw BadRequest(info.path + ": --dump-index " + std::to_string(options.dump_index) +
                         " is out of range: a PHD file holds 1 heap dump, numbered 0");
    std::optional<DecodeError> cut;  // the record the end of the file cuts, if one does
    std::vector<PhdRun> runs = take(info, scan_phd_runs(file, header, kRunBytes, &cut));
    if (cut && !options.allow_truncated) throw DumpError(info.path, with_truncation_hint(std::move(*cut)));
    clock.start("decode");
    // The same flow graph as HPROF: runs in order in, decoded in parallel, collected in order
    // (so the first error collected is the first in the file).
    std::vector<PhdRecords> records;
    std::optional<DecodeError> first_error;
    std::size_t next_run = 0;
    run_ordered_flow<PhdRun, std::variant<PhdRecords, DecodeError>>(
        [&]() -> std::optional<PhdRun> {
            if (next_run == runs.size()) return std::nullopt;
            return runs[next_run++];
        },
        [&](const PhdRun& run) { return decode_phd_run(file, header, run); },
        [&](const PhdRun& run, std::variant<PhdRecords, DecodeError>& result) {
            if (auto* error = std::get_if<DecodeError>(&result)) {
                if (!first_error) first_error = std::move(*error);
                return;
            }
            records.push_back(std::move(std::get<PhdRecords>(result)));
            if (options.progress) options.progress({"decode", run.end, file.size(), "B"});
        },
        std::max<std::uint64_t>(2, options.bytes_in_flight / kRunBytes));
    if (first_error) throw DumpError(info.path, *first_error);
    clock.start("graph");
    LoadedDump loaded = build_ibm_heap({records, header.word_bytes(), read_javacore_option(options, info), {}}, info);
    clock.stop();
    if (cut) loaded.warnings.push_back(truncation_warning(*cut, runs.empty() ? header.body_offset : runs.back().end, file.size()));
    loaded.timings = std::move(timings);
    loaded.info = std::move(info);
    return loaded;
}

}  // namespace heapgraph
