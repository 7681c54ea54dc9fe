// IBM / OpenJ9 Portable Heap Dump decoder (specs: ibm-phd-format.txt and
// openj9-heapdump-phd-and-classic.md; facts the specs leave out come from OpenJ9 DTFJ's
// HeapdumpReader and were checked on every file in data/phd, see ../shared/NOTES.md "PHD").
//
// A PHD body is a stream of records, each packed against the state the records before it
// left: its address is a gap from the previous record's address, and short object records
// name their class by a slot in a round-robin cache of the last 4 classes given in full.
// One RecordWalker reads records for both passes of the pipeline:
//   1. scan_phd_runs() walks the whole body without building anything (references are
//      skipped, not decoded) and cuts it into runs, each starting with a copy of the state;
//   2. decode_phd_run() replays a run from its state and builds plain records.
// Both go through the same code, so a run decodes exactly as it was scanned.
#include "formats.h"

#include <algorithm>
#include <cstdio>

namespace heapgraph {

namespace {

constexpr std::uint8_t kStartOfHeader = 1;
constexpr std::uint8_t kTotals = 1, kEndOfHeader = 2, kHashcodeRandoms = 3, kFullVersion = 4;
constexpr std::uint8_t kStartOfDump = 2, kEndOfDump = 3;
constexpr std::uint32_t kKnownFlags = 1 | 2 | 4;
constexpr std::string_view kMagic = "portable heap dump";

// Big-endian reads that never fail on their own: a read past the end returns 0 and marks
// the cursor, which the caller checks once the record is read. A record cut short is then
// reported once, at its own offset, however many of its fields were missing.
class PhdCursor {
public:
    PhdCursor(Bytes file, std::uint64_t pos) : file_(file), pos_(pos) {}

    std::uint64_t pos() const { return pos_; }
    bool overrun() const { return overrun_; }
    bool has(std::uint64_t n) const { return file_.size() - pos_ >= n; }
    void set_overrun() {
        overrun_ = true;
        pos_ = file_.size();
    }
    void skip(std::uint64_t n) {
        if (has(n)) pos_ += n; else set_overrun();
    }
    std::uint64_t u(std::uint32_t width) {
        if (!has(width)) {
            set_overrun();
            return 0;
        }
        std::uint64_t value = 0;
        for (std::uint32_t i = 0; i < width; ++i) value = (value << 8) | file_[pos_ + i];
        pos_ += width;
        return value;
    }
    // Gaps and references are signed.
    std::int64_t s(std::uint32_t width) {
        std::uint64_t value = u(width);
        std::uint32_t unused = 64 - 8 * width;
        return static_cast<std::int64_t>(value << unused) >> unused;
    }
    std::string_view bytes(std::uint64_t n) {
        if (!has(n)) {
            set_overrun();
            return {};
        }
        std::string_view text(reinterpret_cast<const char*>(file_.data() + pos_), n);
        pos_ += n;
        return text;
    }

private:
    Bytes file_;
    std::uint64_t pos_;
    bool overrun_ = false;
};

// A 2-bit size code of a gap, reference or length field: byte, short, int, long.
std::uint32_t code_bytes(std::uint32_t code) { return 1u << code; }

DecodeError cut_short(std::uint64_t offset, std::string record, Bytes file) {
    return DecodeError{offset, std::move(record), "runs past the end of the file at " + hex_offset(file.size())};
}

std::string tag_name(std::uint8_t tag) {
    char text[32];
    std::snprintf(text, sizeof text, "PHD record tag 0x%02x", tag);
    return text;
}

// ---- records ------------------------------------------------------------------------------

// Reads one record at a time from a state, updating it as the writer did. With `out` set it
// also builds records; without, it only finds where records end (the scan).
class RecordWalker {
public:
    RecordWalker(Bytes file, const PhdHeader& header, const PhdState& state, PhdRecords* out)
        : file_(file), header_(header), state_(state), in_(file, state.offset), out_(out) {}

    const PhdState& state() const { return state_; }
    bool at_end_tag() const { return end_tag_; }
    bool ran_out() const { return in_.overrun(); }  // after an error: the file ended, the record was not damaged
    std::optional<DecodeError> next();

private:
    std::optional<DecodeError> short_object(std::uint8_t tag);
    std::optional<DecodeError> medium_object(std::uint8_t tag);
    std::optional<DecodeError> long_object();
    std::optional<DecodeError> primitive_array(std::uint8_t tag);
    std::optional<DecodeError> long_primitive_array();
    std::optional<DecodeError> object_array(std::uint8_t tag);
    std::optional<DecodeError> class_record();

    std::uint64_t gap(std::uint32_t code) { return relative(state_.address, in_.s(code_bytes(code))); }
    std::uint64_t relative(std::uint64_t base, std::int64_t units) const;
    std::uint64_t word() { return in_.u(header_.word_bytes()); }
    void remember_class(std::uint64_t class_address);
    std::optional<std::uint32_t> hash(bool flagged);
    std::uint64_t instance_size();
    void references(PhdObject& object, std::uint64_t count, std::uint32_t code);
    std::optional<DecodeError> finish(PhdRecordKind kind, std::uint64_t address);
    std::optional<DecodeError> finish_object(PhdRecordKind kind, PhdObject& object);
    std::optional<DecodeError> check_length(PhdRecordKind kind, ObjectKind array, std::uint64_t length) const;

    Bytes file_;
    const PhdHeader& header_;
    PhdState state_;
    PhdCursor in_;
    PhdRecords* out_;
    std::uint64_t record_offset_ = 0;
    bool end_tag_ = false;
};

std::optional<DecodeError> RecordWalker::next() {
    record_offset_ = in_.pos();
    std::uint8_t tag = static_cast<std::uint8_t>(in_.u(1));
    if (in_.overrun())
        return DecodeError{record_offset_, "PHD end-of-dump tag",
                           "is missing: the file ends at " + hex_offset(file_.size()) + " after a whole record"};
    // The top three bits pick the packed forms; only tags below 0x20 are plain numbers.
    if (tag & 0x80) return short_object(tag);
    if (tag & 0x40) return medium_object(tag);
    if (tag & 0x20) return primitive_array(tag);
    switch (tag) {
        case kEndOfDump: end_tag_ = true; return std::nullopt;
        case 4: return long_object();
        case 5: case 8: return object_array(tag);
        case 6: return class_record();
        case 7: return long_primitive_array();
    }
    return DecodeError{record_offset_, tag_name(tag), "is not a PHD body record"};
}

std::uint64_t RecordWalker::relative(std::uint64_t base, std::int64_t units) const {
    // Unsigned arithmetic wraps like the writer's; 32-bit dumps wrap at 4 GiB (DTFJ masks).
    std::uint64_t address = base + (static_cast<std::uint64_t>(units) << header_.gap_shift());
    return header_.words64 ? address : address & 0xFFFFFFFFu;
}

void RecordWalker::remember_class(std::uint64_t class_address) {
    state_.class_cache[state_.next_cache_slot] = class_address;
    state_.next_cache_slot = (state_.next_cache_slot + 1) % 4;
}

std::optional<std::uint32_t> RecordWalker::hash(bool flagged) {
    if (header_.short_hashes()) {
        // A 15-bit code that J9 widens by repeating it in both halves.
        std::uint32_t code = static_cast<std::uint32_t>(in_.u(2)) & 0x7FFF;
        return code << 16 | code;
    }
    if (flagged) return static_cast<std::uint32_t>(in_.u(4));
    return std::nullopt;
}

std::uint64_t RecordWalker::instance_size() {
    // From v6 every array carries its size on the heap in 4-byte units (up to 16 GiB).
    return header_.version >= 6 ? in_.u(4) * 4 : 0;
}

void RecordWalker::references(PhdObject& object, std::uint64_t count, std::uint32_t code) {
    std::uint32_t width = code_bytes(code);
    if (!in_.has(count * width)) return in_.set_overrun();  // count < 2^32: no overflow
    if (!out_) return in_.skip(count * width);
    object.first_ref = out_->refs.size();
    // Only objects and object arrays carry a class address the J9 quirk can repeat.
    bool j9_quirk = header_.j9 && object.kind != ObjectKind::class_object;
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t ref = relative(object.address, in_.s(width));
        if (i == 0 && j9_quirk && ref == object.class_address) {
            ++out_->class_refs_dropped;
        } else if (ref == 0) {
            ++out_->null_refs_dropped;
        } else {
            out_->refs.push_back(ref);
        }
    }
    object.ref_count = static_cast<std::uint32_t>(out_->refs.size() - object.first_ref);
}

std::optional<DecodeError> RecordWalker::finish(PhdRecordKind kind, std::uint64_t address) {
    if (in_.overrun()) return cut_short(record_offset_, phd_record_name(kind), file_);
    state_.address = address;
    state_.offset = in_.pos();
    if (out_) ++out_->counts_by_kind[static_cast<int>(kind)];
    return std::nullopt;
}

// An array longer than Java allows is malformed (formats.h, kMaxJavaArrayLength); refusing it
// here keeps every size computed from a length below 2^35 bytes. A cut record reads 0s.
std::optional<DecodeError> RecordWalker::check_length(PhdRecordKind kind, ObjectKind array,
                                                      std::uint64_t length) const {
    if (in_.overrun() || length <= kMaxJavaArrayLength) return std::nullopt;
    std::string what = array == ObjectKind::primitive_array ? "primitive array" : "object array";
    return DecodeError{record_offset_, phd_record_name(kind),
                       what + " length " + std::to_string(length) + " exceeds Java's maximum " +
                           std::to_string(kMaxJavaArrayLength)};
}

std::optional<DecodeError> RecordWalker::finish_object(PhdRecordKind kind, PhdObject& object) {
    if (object.kind != ObjectKind::instance)
        if (auto error = check_length(kind, object.kind, object.length)) return error;
    if (auto error = finish(kind, object.address)) return error;
    if (out_) {
        object.file_offset = record_offset_;
        object.first_ref = out_->refs.size() - object.ref_count;  // also for objects without any
        out_->objects.push_back(object);
    }
    return std::nullopt;
}

// Tag 1ccnngrr: class from cache slot cc, nn references of size rr, a byte or short gap (g).
std::optional<DecodeError> RecordWalker::short_object(std::uint8_t tag) {
    PhdObject object;
    object.class_address = state_.class_cache[(tag >> 5) & 3];
    object.address = gap((tag >> 2) & 1);
    hash(false);
    references(object, (tag >> 3) & 3, tag & 3);
    return finish_object(PhdRecordKind::short_object, object);
}

// Tag 01nnngrr: as a short object, with up to 7 references and the class address in full.
std::optional<DecodeError> RecordWalker::medium_object(std::uint8_t tag) {
    PhdObject object;
    object.address = gap((tag >> 2) & 1);
    object.class_address = word();
    remember_class(object.class_address);
    hash(false);
    references(object, (tag >> 3) & 7, tag & 3);
    return finish_object(PhdRecordKind::medium_object, object);
}

// Tag 4, flags ggrr__mh: gap size gg, reference size rr, m = hashed and moved (int hash).
std::optional<DecodeError> RecordWalker::long_object() {
    std::uint8_t flags = static_cast<std::uint8_t>(in_.u(1));
    PhdObject object;
    object.address = gap(flags >> 6);
    object.class_address = word();
    remember_class(object.class_address);
    hash(flags & 2);
    std::uint64_t count = in_.u(4);
    references(object, count, (flags >> 4) & 3);
    return finish_object(PhdRecordKind::long_object, object);
}

// Tag 001tttss: element type ttt, gap and length both of size ss.
std::optional<DecodeError> RecordWalker::primitive_array(std::uint8_t tag) {
    PhdObject object;
    object.kind = ObjectKind::primitive_array;
    object.element_type = static_cast<std::uint8_t>(((tag >> 2) & 7) + 4);  // PHD 0..7 = boolean..long
    std::uint32_t size = tag & 3;
    if (size == 3 && header_.pre78432()) {
        object.address = relative(state_.address, in_.s(4));
        object.length = in_.u(4);
    } else {
        object.address = gap(size);
        object.length = in_.u(code_bytes(size));
    }
    hash(false);
    object.instance_size = instance_size();
    return finish_object(PhdRecordKind::primitive_array, object);
}

// Tag 7, flags tttw__mh: element type ttt; w = word-sized gap and length, else bytes.
std::optional<DecodeError> RecordWalker::long_primitive_array() {
    std::uint8_t flags = static_cast<std::uint8_t>(in_.u(1));
    PhdObject object;
    object.kind = ObjectKind::primitive_array;
    object.element_type = static_cast<std::uint8_t>((flags >> 5) + 4);
    std::uint32_t width = flags & 0x10 ? header_.word_bytes() : 1;
    object.address = relative(state_.address, in_.s(width));
    object.length = in_.u(width);
    hash(flags & 2);
    object.instance_size = instance_size();
    return finish_object(PhdRecordKind::long_primitive_array, object);
}

// Tags 5 and 8, flags ggrr__mh. Arrays do not enter the class cache. Tag 8 adds the true
// length, since null elements are not written.
std::optional<DecodeError> RecordWalker::object_array(std::uint8_t tag) {
    std::uint8_t flags = static_cast<std::uint8_t>(in_.u(1));
    PhdObject object;
    object.kind = ObjectKind::object_array;
    object.address = gap(flags >> 6);
    object.class_address = word();
    hash(flags & 2);
    object.length = in_.u(4);
    PhdRecordKind kind = tag == 8 ? PhdRecordKind::object_array : PhdRecordKind::object_array_old;
    if (auto error = check_length(kind, object.kind, object.length)) return error;  // before reading that many
    references(object, object.length, (flags >> 4) & 3);
    // The VM walks array slots from the last, so the references come in reverse index order.
    if (out_ && !in_.overrun())
        std::reverse(out_->refs.begin() + object.first_ref, out_->refs.end());
    if (tag == 8) object.length = in_.u(4);
    object.instance_size = instance_size();
    return finish_object(kind, object);
}

// Tag 6, flags ggrrh___: h = the class object's int hash follows its instance size.
std::optional<DecodeError> RecordWalker::class_record() {
    std::uint8_t flags = static_cast<std::uint8_t>(in_.u(1));
    PhdClass cls;
    cls.file_offset = record_offset_;
    cls.address = gap(flags >> 6);
    cls.instance_size = static_cast<std::uint32_t>(in_.u(4));
    cls.hash = hash(flags & 8);
    cls.super_address = word();
    cls.name = std::string(in_.bytes(in_.u(2)));
    // Statics go through the object path; the class kind turns the J9 quirk off.
    PhdObject statics;
    statics.kind = ObjectKind::class_object;
    statics.address = cls.address;
    std::uint64_t count = in_.u(4);
    references(statics, count, (flags >> 4) & 3);
    if (auto error = finish(PhdRecordKind::class_record, cls.address)) return error;
    if (out_) {
        auto first = out_->refs.begin() + statics.first_ref;
        cls.static_refs.assign(first, out_->refs.end());
        out_->refs.erase(first, out_->refs.end());
        out_->classes.push_back(std::move(cls));
    }
    return std::nullopt;
}

// ---- header -------------------------------------------------------------------------------

DecodeError header_error(std::uint64_t offset, std::string message) {
    return DecodeError{offset, "PHD header", std::move(message)};
}

std::string hex_byte(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%02llx", static_cast<unsigned long long>(value));
    return text;
}

std::optional<DecodeError> read_magic_version_flags(PhdCursor& in, Bytes file, PhdHeader& header) {
    std::uint64_t length = in.u(2);
    std::string_view magic = in.bytes(kMagic.size());
    if (!in.overrun() && (length != kMagic.size() || magic != kMagic))
        return header_error(0, "does not start with the UTF string \"portable heap dump\"");
    header.version = static_cast<int>(in.u(4));
    if (!in.overrun() && (header.version < 4 || header.version > 6))
        return header_error(20, "has version " + std::to_string(header.version) + ", expected 4, 5 or 6");
    header.flags = static_cast<std::uint32_t>(in.u(4));
    if (in.overrun()) return cut_short(0, "PHD header", file);
    if (header.flags & ~kKnownFlags)
        return header_error(24, "has unknown flag bits " + hex_byte(header.flags & ~kKnownFlags) +
                                    " (known: 1 = 64-bit, 2 = all hashed, 4 = J9)");
    header.words64 = header.flags & 1;
    header.all_hashed = header.flags & 2;
    header.j9 = header.flags & 4;
    return std::nullopt;
}

// Header records by tag until the end-of-header tag 2.
std::optional<DecodeError> read_header_records(PhdCursor& in, Bytes file, PhdHeader& header) {
    for (;;) {
        std::uint64_t offset = in.pos();
        std::uint8_t tag = static_cast<std::uint8_t>(in.u(1));
        switch (tag) {
            case kEndOfHeader: break;
            case kTotals:
                header.total_objects_hint = static_cast<std::uint32_t>(in.u(4));
                header.total_refs_hint = static_cast<std::uint32_t>(in.u(4));
                break;
            case kHashcodeRandoms:
                header.hashcode_random1 = static_cast<std::uint32_t>(in.u(4));
                header.hashcode_random2 = static_cast<std::uint32_t>(in.u(4));
                break;
            case kFullVersion: header.full_version = std::string(in.bytes(in.u(2))); break;
            default:
                if (in.overrun()) break;
                return header_error(offset, "has unknown header record tag " + hex_byte(tag));
        }
        if (in.overrun()) return cut_short(0, "PHD header", file);
        if (tag == kEndOfHeader) return std::nullopt;
    }
}

}  // namespace

bool PhdHeader::pre78432() const {
    std::string_view text = full_version;
    return text.size() >= 4 && text.substr(text.size() - 4) == "0917";
}

std::string phd_record_name(PhdRecordKind kind) {
    switch (kind) {
        case PhdRecordKind::short_object: return "PHD short object record";
        case PhdRecordKind::medium_object: return "PHD medium object record";
        case PhdRecordKind::long_object: return "PHD long object record";
        case PhdRecordKind::primitive_array: return "PHD primitive array record";
        case PhdRecordKind::long_primitive_array: return "PHD long primitive array record";
        case PhdRecordKind::object_array_old: return "PHD object array record (tag 5)";
        case PhdRecordKind::object_array: return "PHD object array record (tag 8)";
        case PhdRecordKind::class_record: return "PHD class record";
        case PhdRecordKind::count_: break;
    }
    return "PHD record";
}

std::variant<PhdHeader, DecodeError> read_phd_header(Bytes file) {
    PhdHeader header;
    PhdCursor in(file, 0);
    if (auto error = read_magic_version_flags(in, file, header)) return *error;
    std::uint64_t offset = in.pos();
    std::uint64_t tag = in.u(1);
    if (in.overrun()) return cut_short(0, "PHD header", file);
    if (tag != kStartOfHeader)
        return header_error(offset, "has " + hex_byte(tag) + " where the start-of-header tag 1 belongs");
    if (auto error = read_header_records(in, file, header)) return *error;
    offset = in.pos();
    tag = in.u(1);
    if (in.overrun()) return cut_short(0, "PHD header", file);
    if (tag != kStartOfDump)
        return header_error(offset, "has " + hex_byte(tag) + " where the start-of-dump tag 2 belongs");
    header.body_offset = in.pos();
    return header;
}

PhdState phd_initial_state(const PhdHeader& header) {
    PhdState state;
    state.offset = header.body_offset;  // the first gap is from address 0: an absolute address
    return state;
}

std::variant<std::vector<PhdRun>, DecodeError> scan_phd_runs(Bytes file, const PhdHeader& header,
                                                             std::uint64_t target_run_bytes,
                                                             std::optional<DecodeError>* cut) {
    RecordWalker walker(file, header, phd_initial_state(header), nullptr);
    std::vector<PhdRun> runs;
    PhdState start = walker.state();
    for (;;) {
        std::uint64_t record_offset = walker.state().offset;
        if (auto error = walker.next()) {
            if (!cut || !walker.ran_out()) return std::move(*error);
            if (record_offset > start.offset) runs.push_back({start, record_offset});
            *cut = std::move(*error);
            return runs;
        }
        if (walker.at_end_tag()) {
            if (record_offset > start.offset) runs.push_back({start, record_offset});
            if (record_offset + 1 != file.size())
                return DecodeError{record_offset, "PHD end-of-dump tag",
                                   "is followed by " + std::to_string(file.size() - record_offset - 1) +
                                       " more bytes up to " + hex_offset(file.size())};
            return runs;
        }
        if (walker.state().offset - start.offset >= target_run_bytes) {
            runs.push_back({start, walker.state().offset});
            start = walker.state();
        }
    }
}

std::optional<DecodeError> decode_phd_run_into(Bytes file, const PhdHeader& header, const PhdRun& run,
                                               PhdRecords& out) {
    out.objects.clear();
    out.refs.clear();
    out.classes.clear();
    std::fill(std::begin(out.counts_by_kind), std::end(out.counts_by_kind), 0);
    out.class_refs_dropped = out.null_refs_dropped = 0;
    if (run.end > file.size() || run.start.offset > run.end)
        return DecodeError{run.start.offset, "PHD run",
                           "ends at " + hex_offset(run.end) + ", outside the file or before its start (file ends at " +
                               hex_offset(file.size()) + ")"};
    RecordWalker walker(file, header, run.start, &out);
    while (walker.state().offset < run.end) {
        std::uint64_t record_offset = walker.state().offset;
        if (auto error = walker.next()) return error;
        if (walker.at_end_tag())
            return DecodeError{record_offset, "PHD end-of-dump tag",
                               "lies inside a run that ends at " + hex_offset(run.end)};
        if (walker.state().offset > run.end)
            return DecodeError{record_offset, "PHD run", "has a record that crosses its end at " + hex_offset(run.end)};
    }
    return std::nullopt;
}

std::variant<PhdRecords, DecodeError> decode_phd_run(Bytes file, const PhdHeader& header,
                                                     const PhdRun& run) {
    PhdRecords records;
    if (auto error = decode_phd_run_into(file, header, run, records)) return std::move(*error);
    return records;
}

}  // namespace heapgraph
