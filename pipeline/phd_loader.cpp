// PHD -> heap graph:
//   1. header, then one cheap pass that cuts the body into runs carrying the decoder state;
//   2. runs decode in parallel through the flow graph every format uses (ordered_flow.h),
//      each run's records fed to a BlockSink; results come back in run order, so any thread
//      count agrees;
//   3. the one builder makes the heap graph, with the class loaders and GC roots PHD does
//      not record worked out as DTFJ and Eclipse MAT do (inferred_roots.cpp).
#include "phd_loader.h"

#include "ibm_sink.h"
#include "loader_steps.h"
#include "mapped_file.h"

namespace heapgraph {

namespace {

constexpr std::uint64_t kRunBytes = 4u << 20;

// --allow-truncated: the record the end of the file cut, and what was lost with it.
Warning phd_truncation_warning(const DecodeError& cut, std::uint64_t read_up_to, std::uint64_t file_end) {
    return {"truncated", 1,
            "the dump is cut short: " + cut.record + " at " + hex_offset(cut.offset) + " " + cut.message +
                "; read up to the last whole record, which ends at " + hex_offset(read_up_to) + ": " +
                std::to_string(file_end - read_up_to) + " bytes after it ignored; " + kLostToCut};
}

HeapClass heap_class(PhdClass& c) {
    HeapClass out{c.address, c.super_address, 0, java_class_name(c.name), align8(c.instance_size),
                  c.class_bytes, c.file_offset, {}, 0};
    if (c.super_address) out.refs.push_back(c.super_address);
    out.refs.insert(out.refs.end(), c.static_refs.begin(), c.static_refs.end());
    return out;
}

// The PHD sink driver: a run's records into the sink's form.
IbmChunk phd_chunk(PhdRecords& records, std::uint32_t word_bytes) {
    IbmChunk chunk;
    BlockSink sink(chunk.block, nullptr);
    for (const PhdObject& o : records.objects) {
        std::span<const ObjectId> refs(records.refs.data() + o.first_ref, o.ref_count);
        sink.add_object({o.address, o.kind, o.class_address, o.element_type, o.length,
                         ibm_object_bytes(o.kind, o.instance_size, o.length, o.element_type, word_bytes), o.file_offset},
                        refs);
    }
    sink.finish();
    for (PhdClass& c : records.classes) {
        chunk.classes.push_back(heap_class(c));
        chunk.raw_names.push_back(std::move(c.name));
    }
    return chunk;
}

struct DecodedRun {
    std::variant<IbmChunk, DecodeError> chunk;
    std::uint64_t class_refs_dropped = 0;
    std::uint64_t counts_by_kind[16] = {};
};

DecodedRun decode_run(Bytes file, const PhdHeader& header, const PhdRun& run) {
    DecodedRun out;
    auto records = decode_phd_run(file, header, run);
    if (auto* error = std::get_if<DecodeError>(&records)) {
        out.chunk = std::move(*error);
        return out;
    }
    PhdRecords& r = std::get<PhdRecords>(records);
    out.class_refs_dropped = r.class_refs_dropped;
    std::copy(std::begin(r.counts_by_kind), std::end(r.counts_by_kind), out.counts_by_kind);
    out.chunk = phd_chunk(r, header.word_bytes());
    return out;
}

}  // namespace

LoadedDump load_phd(Bytes file, DumpInfo info, const LoadOptions& options, bool file_mapping) {
    LoaderFrame frame(info, options);
    PhdHeader header = take(info, read_phd_header(file));
    if (info.format.empty()) info.format = "phd";
    info.format_version = "PHD " + std::to_string(header.version) + (header.j9 ? " (J9)" : "");
    info.id_size = header.word_bytes();
    frame.check_single_dump("a PHD file");
    std::optional<DecodeError> cut;  // the record the end of the file cuts, if one does
    std::vector<PhdRun> runs = take(info, scan_phd_runs(file, header, kRunBytes, &cut));
    if (cut && !options.allow_truncated) throw DumpError(info.path, with_truncation_hint(std::move(*cut)));
    frame.start("decode");
    IbmHeap heap{{}, read_javacore_option(options), std::make_unique<IbmClassNamer>(), "PHD record", 0, options.progress, options.limits};
    frame.decode_in_order<PhdRun, DecodedRun>(
        runs, kRunBytes, [&](const PhdRun& run) { return decode_run(file, header, run); },
        [&](const PhdRun& run, DecodedRun& result) -> std::optional<DecodeError> {
            if (auto* error = std::get_if<DecodeError>(&result.chunk)) return std::move(*error);
            heap.chunks.push_back(std::move(std::get<IbmChunk>(result.chunk)));
            // The run's records are in the chunk: its pages of a mapped file go back.
            if (file_mapping) release_pages(file.subspan(run.start.offset, run.end - run.start.offset));
            heap.class_refs_dropped += result.class_refs_dropped;
            for (std::size_t k = 0; k < static_cast<std::size_t>(PhdRecordKind::count_); ++k)
                if (result.counts_by_kind[k]) info.sub_records[phd_record_name(static_cast<PhdRecordKind>(k))] += result.counts_by_kind[k];
            frame.progress(run.end, file.size());
            return std::nullopt;
        });
    frame.stop();
    LoadedDump loaded = build_ibm_heap(std::move(heap), info);
    if (cut) loaded.warnings.push_back(phd_truncation_warning(*cut, runs.empty() ? header.body_offset : runs.back().end, file.size()));
    return frame.finish(std::move(loaded));
}

}  // namespace heapgraph
