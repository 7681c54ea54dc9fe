// HPROF -> heap graph, in these stages:
//   1. frame: walk the top-level records; keep strings and LOAD CLASS names; group HEAP
//      DUMP / HEAP DUMP SEGMENT records into heap dumps.
//   2. decode: one tbb::flow::graph. An input_node cuts the chosen dump into chunks of whole
//      sub-records (reading class dumps on the way); a limiter_node bounds the chunks in
//      flight; an unlimited function_node decodes each chunk into a compressed edge block;
//      a sequencer_node restores file order; a serial node collects the blocks and drops the
//      decoded pages of the file. Chunks that met a class not yet seen decode again at the end.
//   3. graph: the one builder (heap_builder.cpp) turns the blocks into nodes, CSR and roots,
//      with its HPROF steps (hprof_steps.cpp).
#include "hprof_loader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "edge_blocks.h"
#include "edge_names.h"
#include "hprof_chunker.h"
#include "hprof_steps.h"
#include "loader_steps.h"
#include "mapped_file.h"
#include "values.h"

namespace heapgraph {

namespace {

struct TopLevel {
    HprofHeader header;
    std::unordered_map<ObjectId, std::string_view> strings;
    std::unordered_map<ObjectId, ClassNameRef> class_names;  // by class id
    std::unordered_map<std::uint32_t, ObjectId> class_of_serial;  // LOAD CLASS: serial -> class id
    std::vector<StackTraceRecord> traces;
    std::unordered_map<ObjectId, StackFrameRecord> frames;  // by frame id
    std::vector<std::vector<SegmentSpan>> dumps;
    std::uint64_t unterminated_segment_runs = 0;
    std::uint64_t stray_dump_ends = 0;
    std::optional<CutRecord> cut;  // --allow-truncated: the record the end of the file cuts
};

[[noreturn]] void fail(const DumpInfo& info, DecodeError error) {
    throw DumpError(info.path, error);
}

void keep_top_record(TopLevel& top, const TopRecord& record, std::uint64_t record_offset) {
    if (auto* s = std::get_if<StringRecord>(&record)) top.strings[s->id] = s->text;
    if (auto* c = std::get_if<LoadClassRecord>(&record)) {
        top.class_names[c->class_id] = {c->name_id, record_offset};
        top.class_of_serial[c->serial] = c->class_id;
    }
    if (auto* t = std::get_if<StackTraceRecord>(&record)) top.traces.push_back(*t);
    if (auto* f = std::get_if<StackFrameRecord>(&record)) top.frames[f->frame_id] = *f;
}

// Heap dumps: one HEAP DUMP record each, or a run of segments closed by HEAP DUMP END.
void group_heap_record(TopLevel& top, const RecordFrame& frame, bool& in_segments) {
    if (frame.tag == HprofTag::heap_dump) {
        in_segments = false;
        top.dumps.push_back({{frame.body_offset, frame.body_length}});
    } else if (frame.tag == HprofTag::heap_dump_segment) {
        if (!in_segments) top.dumps.emplace_back();
        in_segments = true;
        top.dumps.back().push_back({frame.body_offset, frame.body_length});
    } else if (frame.tag == HprofTag::heap_dump_end) {
        if (!in_segments) ++top.stray_dump_ends;
        in_segments = false;
    }
}

// --allow-truncated: a cut heap dump record keeps the bytes that are there (the chunker stops
// at its last whole sub-record); any other cut record is dropped.
bool keep_cut_record(TopLevel& top, Bytes file, const CutRecord& cut, bool& in_segments) {
    top.cut = cut;
    if (cut.header_cut || !is_heap_dump_record(cut.frame.tag)) return false;
    RecordFrame present = cut.frame;
    present.body_length = static_cast<std::uint32_t>(file.size() - present.body_offset);
    group_heap_record(top, present, in_segments);
    return true;
}

// `fd`: the file's when `file` is its mapping, else -1.
TopLevel scan_top_level(Bytes file, int fd, DumpInfo& info, bool allow_truncated, bool release_behind) {
    TopLevel top;
    top.header = take(info, read_hprof_header(file));
    bool in_segments = false;
    // The heap dump records' bodies are most of the file, and the decode reads them in order.
    // The header after each is read alone (SparseReader), so that the disk reads a dump not in
    // the page cache once, beside the decode, and not all of it here first (the 8x replica:
    // this scan 1.1-2.5 s, and it was 26-42 s). What the scan passed is still dropped: a
    // mapping of huge folios maps 2 MB a touch.
    SparseReader headers(file, fd);
    ReleaseBehind behind(file, release_behind);
    bool skipped = false;  // the record before was a heap dump: its body was not read
    for (std::uint64_t offset = top.header.records_offset; offset < file.size();) {
        behind.at(offset);
        auto framed = skipped ? read_record_frame(headers.read(offset, 9), offset, file.size())
                              : read_record_frame(file, offset);
        if (auto* error = std::get_if<DecodeError>(&framed)) {
            auto cut = hprof_cut_record(file, offset);  // the end of the file, or damage?
            if (!cut) fail(info, std::move(*error));
            if (!allow_truncated) fail(info, with_truncation_hint(std::move(*error)));
            if (keep_cut_record(top, file, *cut, in_segments)) ++info.records[hprof_tag_name(cut->frame.tag)];
            break;
        }
        const RecordFrame& frame = std::get<RecordFrame>(framed);
        ++info.records[hprof_tag_name(frame.tag)];
        Bytes body = file.subspan(frame.body_offset, is_heap_dump_record(frame.tag) ? 0 : frame.body_length);
        skipped = is_heap_dump_record(frame.tag);
        if (is_heap_dump_record(frame.tag) || frame.tag == HprofTag::heap_dump_end) {
            if (frame.tag == HprofTag::heap_dump_end) take(info, decode_top_record(frame, body, top.header.id_size));
            group_heap_record(top, frame, in_segments);
        } else {
            keep_top_record(top, take(info, decode_top_record(frame, body, top.header.id_size)), offset);
        }
        offset = frame.body_offset + frame.body_length;
    }
    if (in_segments) top.unterminated_segment_runs = 1;
    behind.finish();
    return top;
}

// Layouts of every class (an instance of one whose super chain is incomplete cannot be read),
// and class ordinals (1-based).
std::shared_ptr<const ClassTable> make_class_table(const std::vector<ClassDump>& classes,
                                                   std::uint32_t id_size, bool final, bool classes_lost) {
    auto table = std::make_shared<ClassTable>();
    table->context.id_size = id_size;
    table->context.defer_unknown_classes = !final;
    table->context.tolerate_unknown_classes = final && classes_lost;
    for (std::uint32_t i = 0; i < classes.size(); ++i) table->ordinal.emplace(classes[i].class_id, i + 1);
    table->context.layouts = ClassLayouts(classes, id_size);
    return table;
}

struct ChunkTask {
    std::shared_ptr<HeapChunk> chunk;  // shared: a deferred chunk is kept for a second decode
    std::shared_ptr<const ClassTable> classes;
    std::shared_ptr<const ValueCollector> values;  // LoadOptions::values: for the same classes
};

struct DecodedChunk {
    std::variant<EdgeBlock, DecodeError> block;
    ValuePart values;
};

struct DecodedDump {
    std::optional<std::uint64_t> stopped_at;  // a cut dump: its first incomplete sub-record
    std::vector<ClassDump> classes;
    std::vector<EdgeBlock> blocks;
    std::vector<std::shared_ptr<HeapChunk>> deferred;  // parallel to blocks: set when deferred
    std::vector<ChunkCut> cuts;                         // for the later passes (DumpSource::chunks)
    std::shared_ptr<LoadValues> values;                 // LoadOptions::values
};

// The classes the value reader looks for by name (String and the thread classes), by class
// id, from the LOAD CLASS records: the reader is made again whenever class dumps have come,
// and this keeps that to a lookup a class, not a name made for each.
std::unordered_map<ObjectId, std::string> value_class_names(const TopLevel& top) {
    std::vector<std::string> wanted = thread_classes();
    wanted.push_back("java.lang.String");
    std::unordered_map<ObjectId, std::string> out;
    for (const auto& entry : top.class_names) {
        std::string name = hprof_class_name(top.strings, top.class_names, entry.first);
        if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) out.emplace(entry.first, std::move(name));
    }
    return out;
}

// The decode's value reader for the class dumps known so far.
std::shared_ptr<const ValueCollector> value_collector(const TopLevel& top,
                                                      const std::unordered_map<ObjectId, std::string>& names,
                                                      const std::vector<ClassDump>& classes, const ClassTable& table) {
    return std::make_shared<const ValueCollector>(
        table.context.id_size, classes, table.context.layouts,
        [&](std::uint32_t c) {
            auto name = names.find(classes[c].class_id);
            return name == names.end() ? std::string() : name->second;
        },
        [&](ObjectId id) { return hprof_string(top.strings, id); });
}

class DecodeStage {
public:
    // `classes_lost`: the end of the file cuts this dump (--allow-truncated), so class dumps
    // that lay after the cut may be missing.
    DecodeStage(Bytes file, const std::vector<SegmentSpan>& dump, const TopLevel& top, const DumpInfo& info,
                const LoadOptions& options, bool release_pages, bool last_segment_cut, bool classes_lost)
        : chunker_(file, dump, info.id_size, options.chunk_bytes), top_(top), info_(info), options_(options),
          release_pages_(release_pages), classes_lost_(classes_lost) {
        if (last_segment_cut) chunker_.set_last_segment_cut();
        if (options.values && !options.scan_only) {
            out_.values = std::make_shared<LoadValues>();
            value_names_ = value_class_names(top);
        }
    }

    DecodedDump run() {
        std::size_t in_flight = std::max<std::uint64_t>(2, options_.bytes_in_flight / options_.chunk_bytes);
        run_ordered_flow<ChunkTask, DecodedChunk>(
            [this] { return cut(); },
            [](const ChunkTask& task) { return decode(task); },
            [this](const ChunkTask& task, DecodedChunk& decoded) { keep(task, decoded); },
            in_flight);
        if (first_error_) fail(info_, *first_error_);
        out_.classes = chunker_.classes();
        out_.stopped_at = chunker_.stopped_at();
        out_.cuts = chunker_.take_cuts();
        redo_deferred();
        return std::move(out_);
    }

private:
    std::optional<ChunkTask> cut() {
        auto next = chunker_.next();
        if (auto* error = std::get_if<DecodeError>(&next)) {
            note_error(std::move(*error));
            return std::nullopt;
        }
        auto& chunk = std::get<std::optional<HeapChunk>>(next);
        if (!chunk) return std::nullopt;
        if (chunker_.classes().size() != classes_in_table_ || !table_) {
            table_ = make_class_table(chunker_.classes(), info_.id_size, false, classes_lost_);
            classes_in_table_ = chunker_.classes().size();
            if (out_.values) values_ = value_collector(top_, value_names_, chunker_.classes(), *table_);
        }
        return ChunkTask{std::make_shared<HeapChunk>(std::move(*chunk)), table_, values_};
    }

    // The chunk's edge block and its values (of a chunk to be decoded again, keep() takes the
    // thread roots only: they need no class).
    static DecodedChunk decode(const ChunkTask& task) {
        DecodedChunk out{decode_to_block(*task.chunk, *task.classes), {}};
        if (task.values && std::holds_alternative<EdgeBlock>(out.block)) out.values = task.values->read(*task.chunk);
        return out;
    }

    void keep(const ChunkTask& task, DecodedChunk& decoded) {
        if (auto* error = std::get_if<DecodeError>(&decoded.block)) {
            note_error(std::move(*error));
            out_.blocks.emplace_back();
            out_.deferred.emplace_back();
            return;
        }
        EdgeBlock& block = std::get<EdgeBlock>(decoded.block);
        count_objects(task, block);
        // The thread roots stay in file order (the first ROOT THREAD OBJECT of a thread wins):
        // a deferred chunk's are taken now, the rest of its values once it is decoded again.
        if (out_.values && block.deferred_on) {
            ValuePart roots;
            roots.thread_roots = std::move(decoded.values.thread_roots);
            out_.values->add(roots);
        } else if (out_.values) {
            out_.values->add(decoded.values);
        }
        out_.deferred.push_back(block.deferred_on ? task.chunk : nullptr);
        out_.blocks.push_back(std::move(block));
        if (release_pages_ && task.chunk->owned.empty()) release_pages(task.chunk->bytes);  // copies own their bytes
        if (options_.progress)
            options_.progress({"decode", chunker_.done_bytes(), chunker_.total_bytes(), "B"});
    }

    // Past the object limit the count only grows, and heapgraph hands the dump over to
    // heapgraph-wide, which decodes it again: the refusal cancels the flow at once instead of
    // decoding the rest for nothing (cli/run.cpp). An error before it in the file still wins.
    void count_objects(const ChunkTask& task, const EdgeBlock& block) {
        objects_ += block.range.count;
        if (objects_ <= options_.limits.objects) return;
        {
            std::lock_guard lock(error_mutex_);
            if (first_error_) fail(info_, *first_error_);
        }
        const std::uint64_t end = task.chunk->file_offset(task.chunk->bytes.size());
        throw TooManyObjects(info_.path,
                             "holds more than " + std::to_string(options_.limits.objects) + " objects by byte offset " + hex_offset(end),
                             options_.limits.objects);
    }

    // The error first in the file wins, whichever thread met it first.
    void note_error(DecodeError error) {
        std::lock_guard lock(error_mutex_);
        if (!first_error_ || error.offset < first_error_->offset) first_error_ = std::move(error);
    }

    // The chunks decoded again add their values, but the thread roots, after the others'
    // (read_values sorts them by address).
    void redo_deferred() {
        auto final_table = make_class_table(out_.classes, info_.id_size, true, classes_lost_);
        std::shared_ptr<const ValueCollector> final_values;
        if (out_.values) final_values = value_collector(top_, value_names_, out_.classes, *final_table);
        std::vector<ValuePart> values(out_.values ? out_.blocks.size() : 0);
        tbb::parallel_for(std::size_t{0}, out_.blocks.size(), [&](std::size_t i) {
            if (!out_.deferred[i]) return;
            auto redone = decode(ChunkTask{out_.deferred[i], final_table, final_values});
            if (auto* error = std::get_if<DecodeError>(&redone.block)) note_error(std::move(*error));
            else out_.blocks[i] = std::move(std::get<EdgeBlock>(redone.block));
            if (final_values) values[i] = std::move(redone.values), values[i].thread_roots.clear();
        });
        if (first_error_) fail(info_, *first_error_);
        for (ValuePart& part : values) out_.values->add(part);
        out_.deferred.clear();
    }

    HeapChunker chunker_;
    const TopLevel& top_;
    const DumpInfo& info_;
    const LoadOptions& options_;
    bool release_pages_;
    bool classes_lost_;
    std::shared_ptr<const ClassTable> table_;
    std::shared_ptr<const ValueCollector> values_;  // for table_'s classes (LoadOptions::values)
    std::unordered_map<ObjectId, std::string> value_names_;
    std::size_t classes_in_table_ = 0;
    DecodedDump out_;
    std::uint64_t objects_ = 0;  // in the blocks kept so far
    std::mutex error_mutex_;
    std::optional<DecodeError> first_error_;
};

// Each chunk's lowest and highest object address, for the value pass to read only the chunks
// that can hold the records it is asked for.
std::vector<LoadValues::Addresses> chunk_addresses(const std::vector<EdgeBlock>& blocks) {
    std::vector<LoadValues::Addresses> out;
    out.reserve(blocks.size());
    for (const EdgeBlock& b : blocks) out.push_back({b.range.min, b.range.max, b.range.count > 0});
    return out;
}

// What a dump read with --allow-truncated lost, and where it ends.
Warning truncation_warning(Bytes file, const CutRecord& cut, std::optional<std::uint64_t> stopped_at) {
    const std::uint64_t end = file.size();
    std::string text = "the dump is cut short: the file ends at " + hex_offset(end) + ", inside ";
    if (cut.header_cut) {
        text += "the record header at " + hex_offset(cut.offset) + "; read up to there, " +
                std::to_string(end - cut.offset) + " bytes ignored";
        return {"truncated", 1, text};
    }
    const std::uint64_t present = end - cut.frame.body_offset;
    text += hprof_tag_name(cut.frame.tag) + " at " + hex_offset(cut.offset) + ", which claims " +
            std::to_string(cut.frame.body_length) + " bytes of which " + std::to_string(present) +
            " are there (" + std::to_string(cut.frame.body_length - present) + " lost)";
    if (is_heap_dump_record(cut.frame.tag)) {
        std::uint64_t last = stopped_at.value_or(end);
        text += "; read up to its last whole sub-record, which ends at " + hex_offset(last) + ": " +
                std::to_string(end - last) + " bytes of a cut sub-record ignored; " + kLostToCut;
    } else {
        text += "; the record was ignored";
    }
    return {"truncated", 1, text};
}

// LoadOptions::scan_only: the counts, no graph.
LoadedDump scanned(const TopLevel& top, const DecodedDump& decoded) {
    LoadedDump loaded;  // its info comes from the loader's frame
    loaded.scan.objects = decoded.classes.size();
    std::uint64_t arrays = 0, object_arrays = 0;
    for (const EdgeBlock& block : decoded.blocks) {
        loaded.scan.objects += block.objects;
        loaded.scan.references += block.refs;
        arrays += block.counts[HprofSubTag::primitive_array_dump];
        object_arrays += block.counts[HprofSubTag::object_array_dump];
    }
    // A table stays in memory up to graph::kSpillAfterBytes (graph::SpilledRows).
    auto spilled = [](std::uint64_t bytes) { return bytes > graph::kSpillAfterBytes ? bytes : 0; };
    loaded.scan.value_spill_bytes = spilled(arrays * sizeof(ArrayObject)) + spilled(arrays * sizeof(StringObject)) +
                                    spilled(object_arrays * sizeof(ArrayLength));
    loaded.scan.names = top.strings.size() + top.class_names.size();
    return loaded;
}

// DumpSource::field_names: the few strings that name fields, out of all the dump's strings.
std::unordered_map<ObjectId, std::string> field_names(const TopLevel& top, const std::vector<ClassDump>& classes) {
    std::unordered_map<ObjectId, std::string> names;
    auto keep = [&](ObjectId id) {
        if (names.count(id)) return;
        auto text = top.strings.find(id);
        if (text != top.strings.end()) names.emplace(id, utf8_from_modified(text->second));
    };
    for (const ClassDump& c : classes) {
        for (const FieldDecl& f : c.fields) keep(f.name_id);
        for (const StaticField& f : c.statics) keep(f.name_id);
    }
    return names;
}

// DumpSource::stack_traces: every STACK TRACE with its frames' names (a frame the dump does
// not hold keeps empty names), by serial.
std::vector<StackTrace> stack_traces(const TopLevel& top) {
    auto text = [&](ObjectId id) { return hprof_string(top.strings, id); };
    std::vector<StackTrace> out;
    for (const StackTraceRecord& t : top.traces) {
        StackTrace& trace = out.emplace_back(StackTrace{t.serial, t.thread_serial, {}});
        for (ObjectId id : t.frame_ids) {
            StackFrame& frame = trace.frames.emplace_back();
            auto f = top.frames.find(id);
            if (f == top.frames.end()) continue;
            frame = {"", text(f->second.method_name_id), text(f->second.signature_id), text(f->second.source_file_id),
                     f->second.line};
            auto c = top.class_of_serial.find(f->second.class_serial);
            auto name = c == top.class_of_serial.end() ? top.class_names.end() : top.class_names.find(c->second);
            if (name != top.class_names.end()) frame.class_name = java_class_name(text(name->second.name_id));
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const StackTrace& a, const StackTrace& b) { return a.serial < b.serial; });
    return out;
}

}  // namespace

LoadedDump load_hprof(Bytes file, DumpInfo info, const LoadOptions& options, bool release_pages, int fd) {
    if (!options.javacore.empty())
        throw BadRequest(info.path + ": --javacore applies to PHD dumps; HPROF records its own roots");
    LoaderFrame frame(info, options);
    TopLevel top = scan_top_level(file, fd, info, options.allow_truncated, release_pages);
    info.format_version = top.header.version;
    info.id_size = top.header.id_size;
    if (top.dumps.empty() && top.cut)  // --allow-truncated reads what comes before a cut: here, no heap
        fail(info, {file.size(), "end of file", "cuts the record at " + hex_offset(top.cut->offset) +
                                                    ", before any HEAP DUMP or HEAP DUMP SEGMENT record: "
                                                    "no heap dump is left to read"});
    if (top.dumps.empty())
        fail(info, {file.size(), "end of file", "reached with no HEAP DUMP or HEAP DUMP SEGMENT record: "
                                                "the file holds no heap dump (cut short?)"});
    frame.check_dump_index(static_cast<std::uint32_t>(top.dumps.size()));

    frame.start("decode");
    const bool last_dump = options.dump_index + 1 == top.dumps.size();
    bool last_segment_cut = top.cut && !top.cut->header_cut && last_dump &&
                            is_heap_dump_record(top.cut->frame.tag);
    // A cut segment run may have lost segments too; a whole HEAP DUMP record lost nothing.
    bool classes_lost = top.cut && last_dump && (last_segment_cut || top.unterminated_segment_runs);
    DecodedDump decoded = DecodeStage(file, top.dumps[options.dump_index], top, info, options, release_pages,
                                      last_segment_cut, classes_lost)
                              .run();
    if (decoded.values) decoded.values->chunks = chunk_addresses(decoded.blocks);

    frame.stop();
    if (options.scan_only) return frame.finish(scanned(top, decoded));
    HprofParts hprof{top.strings, top.class_names, std::move(decoded.classes), file, info.id_size};
    HeapParts parts = hprof_heap_parts(hprof, std::move(decoded.blocks), info);
    parts.progress = options.progress;
    parts.limits = options.limits;
    LoadedDump loaded = build_heap(parts, info);  // times its own steps
    loaded.source = std::make_shared<DumpSource>(DumpSource{file, top.dumps[options.dump_index], info.id_size,
                                                            std::move(hprof.classes), release_pages, nullptr, nullptr, {}, {},
                                                            std::move(decoded.cuts)});
    loaded.source->field_names = field_names(top, loaded.source->classes);
    loaded.values = std::move(decoded.values);
    loaded.source->stack_traces = stack_traces(top);
    if (top.unterminated_segment_runs)
        loaded.warnings.push_back({"heap_dump_end_missing", top.unterminated_segment_runs,
                                   "the last heap dump segment run has no HEAP DUMP END record: "
                                   "harmless when the file is complete, a sign of truncation otherwise"});
    if (top.cut) {
        loaded.warnings.push_back(truncation_warning(file, *top.cut, decoded.stopped_at));
        if (hprof.unreadable_instances)
            loaded.warnings.back().message += "; " + std::to_string(hprof.unreadable_instances) + " instances of " +
                                              std::to_string(hprof.unreadable_classes) +
                                              " classes whose CLASS DUMP lay after the cut: their references are lost";
    }
    if (top.stray_dump_ends)
        loaded.warnings.push_back({"stray_heap_dump_end", top.stray_dump_ends,
                                   "HEAP DUMP END records with no open segment run: ignored"});
    return frame.finish(std::move(loaded));
}

}  // namespace heapgraph
