// Classic text heapdump -> heap graph:
//   1. the header; an EBCDIC (z/OS) file is translated to ASCII once, byte for byte;
//   2. the body is cut into line blocks at record starts, one block at a time while earlier
//      blocks decode (next_classic_block);
//   3. blocks parse in parallel through the flow graph HPROF and PHD use (ordered_flow.h),
//      each counting its own lines, and join in file order, so any thread count gives the
//      same records;
//   4. the trailers are checked against what was read (a mismatch is a warning naming both
//      numbers; a missing "// EOF" is an error: the file was cut);
//   5. each block's records go through the sink as the block joins (objects name their class
//      by type: types are resolved to class records by name, the builder resolving those whose
//      record comes later), so only the compressed chunks are kept, not the records; the one
//      builder then works out class loaders and GC roots as for PHD (inferred_roots.cpp).
#include "classic_loader.h"

#include <map>

#include "ibm_sink.h"
#include "loader_steps.h"
#include "mapped_file.h"

namespace heapgraph {

namespace {

std::optional<BasicType> primitive_of(char code) {
    switch (code) {
        case 'Z': return BasicType::boolean;
        case 'C': return BasicType::char_;
        case 'F': return BasicType::float_;
        case 'D': return BasicType::double_;
        case 'B': return BasicType::byte;
        case 'S': return BasicType::short_;
        case 'I': return BasicType::int_;
        case 'J': return BasicType::long_;
        default: return std::nullopt;
    }
}

// The element type an array signature names, in the form class records use:
// "[Ljava/lang/String;" -> "java/lang/String", "[[I" -> "[I".
std::string element_type(const std::string& array_type) {
    std::string element = array_type.substr(1);
    if (element.size() > 2 && element.front() == 'L' && element.back() == ';') return element.substr(1, element.size() - 2);
    return element;
}

// The classic sink driver. Classic text names an object's class by type, PHD-style
// formats by address: a type resolves to the class record of that name, else to a stand-in
// class id (odd, so never an object) the namer knows by the type's name; an object array
// names its element class.
class ClassicSink {
public:
    ClassicSink(IbmClassNamer& namer, std::uint32_t word_bytes) : namer_(namer), word_bytes_(word_bytes) {}

    // A block's records in the sink's form, as soon as the block is decoded (its records
    // then go). Types name the class records seen so far; a type whose record comes later
    // gets a stand-in id, which the builder resolves by name to that record all the same.
    IbmChunk chunk(const ClassicRecords& block) {
        for (const ClassicClass& c : block.classes) by_name_.emplace(c.name, c.address);
        IbmChunk out;
        for (const ClassicClass& c : block.classes) {
            out.classes.push_back({c.address, 0, 0, java_class_name(c.name), 0, c.size_bytes, c.file_offset,
                                   {block.refs.begin() + c.first_ref, block.refs.begin() + c.first_ref + c.ref_count}, 0});
            out.raw_names.push_back(c.name);
        }
        // Each type name of a block is resolved once, not once per object.
        std::vector<SinkObject> typed(block.type_names.size());
        for (std::size_t t = 0; t < block.type_names.size(); ++t) typed[t] = typed_object(block.type_names[t]);
        BlockSink sink(out.block, nullptr);
        for (const ClassicObject& o : block.objects) {
            SinkObject object = typed[o.type];
            object.address = o.address;
            object.shallow_bytes = ibm_object_bytes(object.kind, o.size_bytes, 0, object.element_type, word_bytes_);
            object.position = o.file_offset;
            sink.add_object(object, std::span<const ObjectId>(block.refs.data() + o.first_ref, o.ref_count));
        }
        sink.finish();
        return out;
    }

private:
    // An object of this type: its kind and class, the rest left for the caller.
    SinkObject typed_object(const std::string& type) {
        SinkObject out;
        out.kind = classic_type_kind(type);  // the rule the record counts use
        if (out.kind == ObjectKind::primitive_array)
            out.element_type = static_cast<std::uint8_t>(*primitive_of(type[1]));
        else
            out.class_id = class_address(out.kind == ObjectKind::object_array ? element_type(type) : type);
        return out;
    }

    ObjectId class_address(const std::string& name) {
        auto found = by_name_.find(name);
        if (found != by_name_.end()) return found->second;
        ObjectId stand_in = 2 * namer_.without_records.size() + 1;  // odd: never an object
        namer_.without_records.emplace(stand_in, name);
        by_name_.emplace(name, stand_in);
        return stand_in;
    }

    IbmClassNamer& namer_;
    std::uint32_t word_bytes_;
    std::map<std::string, ObjectId> by_name_;
};

struct Parsed {
    std::vector<IbmChunk> chunks;  // in file order
    ClassicCounts counts;
    std::vector<std::string> warnings;
    std::optional<DecodeError> cut;  // --allow-truncated: the missing "// EOF", where the dump ends
};

// A decoded block and its line count. Blocks decode before the lines before them are counted
// (the count is part of the parallel work), so a block's errors are redone in the collector,
// which knows the block's first line.
struct Decoded {
    std::variant<ClassicRecords, DecodeError> records;
    std::uint64_t lines = 0;
};

// An error in the last line of a file that does not end with a newline is most likely a cut
// (a full disk): say where the file ends, and what reads it anyway.
DecodeError cut_hint(Bytes text, DecodeError error) {
    if (text.empty() || text.back() == '\n') return error;
    std::uint64_t last_line = text.size();
    while (last_line > 0 && text[last_line - 1] != '\n') --last_line;
    if (error.offset < last_line) return error;
    return with_truncation_hint(std::move(error), "the file ends at " + hex_offset(text.size()) + " inside this line: ");
}

// `release`: the text is a file mapping; a decoded block's pages go back (its records hold
// copies), or a multi-gigabyte file stays resident through the whole load.
Parsed parse_blocks(Bytes text, const ClassicHeader& header, const DumpInfo& info, LoaderFrame& frame,
                    const LoadOptions& options, bool release, ClassicSink& sink) {
    Parsed parsed;
    ClassicTotals totals;
    std::uint64_t next = header.body_offset, line = header.body_line;
    frame.decode_in_order<ClassicBlock, Decoded>(
        [&]() -> std::optional<ClassicBlock> {  // only finds where blocks end: cheap and serial
            if (next >= text.size()) return std::nullopt;
            ClassicBlock block = next_classic_block(text, next, header.body_line, options.chunk_bytes);
            next = block.end;
            return block;
        },
        options.chunk_bytes,
        [&](const ClassicBlock& block) { return Decoded{decode_classic_block(text, header, block), classic_lines_in(text, block)}; },
        [&](ClassicBlock block, Decoded& result) -> std::optional<DecodeError> {
            block.first_line = line;
            line += result.lines;
            if (std::holds_alternative<DecodeError>(result.records)) {
                auto redone = decode_classic_block(text, header, block);
                return cut_hint(text, std::get<DecodeError>(redone.index() == 1 ? redone : result.records));
            }
            auto& records = std::get<ClassicRecords>(result.records);
            if (auto error = add_classic_block(totals, records)) return cut_hint(text, std::move(*error));
            parsed.chunks.push_back(sink.chunk(records));
            if (release) release_pages(text.subspan(block.begin, block.end - block.begin));
            frame.progress(block.end, text.size());
            return std::nullopt;
        });
    parsed.counts = totals.counts;
    if (options.allow_truncated && !totals.eof) {
        parsed.cut = std::get<DecodeError>(check_classic_trailers(header, totals, text.size()));
        return parsed;
    }
    parsed.warnings = take(info, check_classic_trailers(header, totals, text.size()));
    return parsed;
}

void count_records(DumpInfo& info, const ClassicCounts& counts) {
    info.sub_records["classic CLS"] = counts.classes;
    info.sub_records["classic OBJ"] = counts.objects;
    info.sub_records["classic OBJ object array"] = counts.object_arrays;
    info.sub_records["classic OBJ primitive array"] = counts.primitive_arrays;
}

LoadedDump build(Parsed parsed, std::unique_ptr<IbmClassNamer> namer, DumpInfo& info, const LoadOptions& options) {
    count_records(info, parsed.counts);
    IbmHeap heap{std::move(parsed.chunks), read_javacore_option(options), std::move(namer), "classic record", 0,
                 options.progress, options.limits};
    LoadedDump loaded = build_ibm_heap(std::move(heap), info);
    for (std::string& text : parsed.warnings) loaded.warnings.push_back({"classic_trailer_mismatch", 1, std::move(text)});
    return loaded;
}

// --allow-truncated: what a dump without its "// EOF" lost.
Warning classic_truncation_warning(const DecodeError& cut, std::uint64_t read_up_to, std::uint64_t file_end) {
    std::string text = "the dump is cut short (the file ends at " + hex_offset(file_end) + "): " + cut.record + " " + cut.message;
    if (read_up_to < file_end)
        text += "; the last record or trailer, at " + hex_offset(read_up_to) + ", may have lost lines to the cut and was dropped (" +
                std::to_string(file_end - read_up_to) + " bytes ignored)";
    return {"truncated", 1, text + "; " + kLostToCut};
}

}  // namespace

LoadedDump load_classic(Bytes file, DumpInfo info, const LoadOptions& options, bool file_mapping) {
    LoaderFrame frame(info, options);
    ClassicHeader header = take(info, read_classic_header(file));
    std::vector<std::uint8_t> ascii;
    if (header.ebcdic) ascii = classic_ebcdic_to_ascii(file);
    Bytes text = header.ebcdic ? Bytes(ascii.data(), ascii.size()) : file;
    if (info.format.empty()) info.format = "classic";
    info.format_version = "classic " + std::string(header.variant == ClassicHeader::Variant::sdk ? "sdk" : "openj9") +
                          (header.ebcdic ? " (EBCDIC)" : "") + ": " + header.version;
    info.id_size = static_cast<std::uint32_t>(header.word_bytes);
    frame.check_single_dump("a classic heapdump");
    frame.start("decode");
    // A cut dump is read up to its last whole record (the end of a file that ends with "// EOF").
    const std::uint64_t whole = options.allow_truncated ? classic_whole_records_end(text, header) : text.size();
    auto namer = std::make_unique<IbmClassNamer>();
    ClassicSink sink(*namer, static_cast<std::uint32_t>(header.word_bytes));
    Parsed parsed = parse_blocks(text.first(whole), header, info, frame, options, file_mapping && !header.ebcdic, sink);
    std::optional<DecodeError> cut = parsed.cut;
    frame.stop();
    LoadedDump loaded = build(std::move(parsed), std::move(namer), info, options);
    if (cut) loaded.warnings.push_back(classic_truncation_warning(*cut, whole, text.size()));
    return frame.finish(std::move(loaded));
}

}  // namespace heapgraph
