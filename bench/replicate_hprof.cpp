// replicate_hprof [--root-class-refs] IN.hprof OUT.hprof N: writes an N-times larger copy of
// an uncompressed HPROF heap dump, for benchmarks that need a bigger heap than one JVM
// conveniently dumps (bench/e2e.sh REPLICA=N). Uses only formats/ (for the HPROF value sizes).
//
// The header and every record that is not a heap dump are copied once. Each HEAP DUMP and HEAP
// DUMP SEGMENT record is written N times as HEAP DUMP SEGMENTs: copy 0 byte for byte, copy k
// with every object id, and every reference to an object, moved up by k*S. S spans the input's
// object ids (rounded up to 8, plus 8), or every id when a class id or a dangling reference
// outside that span could otherwise land on another copy's object (may_alias). Classes are not
// copied: CLASS DUMPs and roots that name a class appear in copy 0 only, class ids are never
// shifted, and static fields keep pointing into copy 0, so what only classes hold is reachable
// in copy 0 alone; --root-class-refs gives copies k >= 1 a ROOT UNKNOWN for each object the
// classes name, making every copy as reachable as the input. Thread serial numbers of roots
// move by k*(largest thread serial + 1), so each copy has its own threads (sharing the stack
// traces). Each heap dump of the input keeps one HEAP DUMP END, after its copies (heapgraph
// and others count the dumps of a file by them).
//
// Steps, in code order:
//   1. map the input; read the header; frame the top-level records and group the heap dump
//      records into heap dumps (one HEAP DUMP, or a run of segments closed by HEAP DUMP END),
//      the way heapgraph's loader groups them;
//   2. survey: walk every sub-record for the class dumps, the object id range and the largest
//      thread serial, checking every size on the way; then build the class layouts, and walk
//      again for the ids that references name (checking every instance against its layout);
//   3. write OUT.tmp.PID record by record (one output segment per input record and copy, split
//      at 2^32-1 bytes when needed), then rename it to OUT.
// Memory: the class layouts and one entry per heap dump record; nothing per object. Pages of
// the mapped input are given back behind each pass.
// Format: /work/shared/specs/hprof-binary-format.txt, plus Android 1.0.3's sub-records
// (HEAP DUMP INFO, roots 0x89-0x90, PRIMITIVE ARRAY NODATA).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "common.h"

namespace {

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
// Sub-records up to this size are patched inside the write buffer; larger arrays go in chunks.
constexpr std::size_t kInlineBytes = std::size_t{1} << 20;
constexpr std::uint64_t kMaxRecordBody = 0xFFFFFFFFu;
constexpr std::uint32_t kNone = 0xFFFFFFFFu;

// ---- errors ---------------------------------------------------------------------------------

// A problem in the input: where (absolute file offset), what (record or sub-record), why.
struct InputError {
    std::uint64_t offset;
    std::string what;
    std::string message;
};

[[noreturn]] void bad_input(std::uint64_t offset, std::string what, std::string message) {
    throw InputError{offset, std::move(what), std::move(message)};
}

std::string hex(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%08llx", static_cast<unsigned long long>(value));
    return text;
}

std::string errno_text() { return std::strerror(errno); }

// ---- tags -----------------------------------------------------------------------------------

std::string record_name(std::uint8_t tag) {
    switch (tag) {
        case 0x01: return "STRING";
        case 0x02: return "LOAD_CLASS";
        case 0x03: return "UNLOAD_CLASS";
        case 0x04: return "STACK_FRAME";
        case 0x05: return "STACK_TRACE";
        case 0x06: return "ALLOC_SITES";
        case 0x07: return "HEAP_SUMMARY";
        case 0x0A: return "START_THREAD";
        case 0x0B: return "END_THREAD";
        case 0x0C: return "HEAP_DUMP";
        case 0x0D: return "CPU_SAMPLES";
        case 0x0E: return "CONTROL_SETTINGS";
        case 0x1C: return "HEAP_DUMP_SEGMENT";
        case 0x2C: return "HEAP_DUMP_END";
        default: return {};
    }
}

std::string sub_record_name(std::uint8_t tag) {
    switch (tag) {
        case 0xFF: return "ROOT_UNKNOWN";
        case 0x01: return "ROOT_JNI_GLOBAL";
        case 0x02: return "ROOT_JNI_LOCAL";
        case 0x03: return "ROOT_JAVA_FRAME";
        case 0x04: return "ROOT_NATIVE_STACK";
        case 0x05: return "ROOT_STICKY_CLASS";
        case 0x06: return "ROOT_THREAD_BLOCK";
        case 0x07: return "ROOT_MONITOR_USED";
        case 0x08: return "ROOT_THREAD_OBJECT";
        case 0x20: return "CLASS_DUMP";
        case 0x21: return "INSTANCE_DUMP";
        case 0x22: return "OBJECT_ARRAY_DUMP";
        case 0x23: return "PRIMITIVE_ARRAY_DUMP";
        case 0x89: return "ROOT_INTERNED_STRING";
        case 0x8A: return "ROOT_FINALIZING";
        case 0x8B: return "ROOT_DEBUGGER";
        case 0x8C: return "ROOT_REFERENCE_CLEANUP";
        case 0x8D: return "ROOT_VM_INTERNAL";
        case 0x8E: return "ROOT_JNI_MONITOR";
        case 0x90: return "ROOT_UNREACHABLE";
        case 0xC3: return "PRIMITIVE_ARRAY_NODATA";
        case 0xFE: return "HEAP_DUMP_INFO";
        default: return {};
    }
}

std::string tag_label(const std::string& name, const char* kind, std::uint8_t tag) {
    if (!name.empty()) return name;
    char text[48];
    std::snprintf(text, sizeof text, "%s tag 0x%02x", kind, tag);
    return text;
}

constexpr std::uint8_t kClassDump = 0x20, kInstanceDump = 0x21, kObjectArrayDump = 0x22,
                       kPrimitiveArrayDump = 0x23, kHeapDumpInfo = 0xFE;

// What copy k >= 1 does to a sub-record of fixed size (everything but dumps of classes and
// objects with contents).
enum class Fixed : std::uint8_t { none, root, thread_root, object, heap_info };
struct FixedLayout {
    Fixed kind;
    std::uint8_t ids;    // ids after the tag
    std::uint8_t extra;  // bytes after them
};

constexpr FixedLayout describe_fixed(std::uint8_t tag) {
    switch (tag) {
        case 0xFF: case 0x05: case 0x07: case 0x89: case 0x8A: case 0x8B: case 0x8C: case 0x8D: case 0x90:
            return {Fixed::root, 1, 0};
        case 0x01: return {Fixed::root, 2, 0};  // the second id is a JNI handle, not an object
        case 0x02: case 0x03: case 0x08: case 0x8E: return {Fixed::thread_root, 1, 8};  // + u4 frame/trace
        case 0x04: case 0x06: return {Fixed::thread_root, 1, 4};
        case 0xC3: return {Fixed::object, 1, 9};     // an array without elements: u4 trace, u4 length, u1 type
        case kHeapDumpInfo: return {Fixed::heap_info, 1, 4};  // u4 heap type, name string id
        default: return {Fixed::none, 0, 0};
    }
}

// Asked for every sub-record of every copy: a table, not a switch.
struct FixedTable {
    FixedLayout entries[256];
};

constexpr FixedTable make_fixed_table() {
    FixedTable table{};
    for (unsigned tag = 0; tag < 256; ++tag) table.entries[tag] = describe_fixed(static_cast<std::uint8_t>(tag));
    return table;
}

constexpr FixedTable kFixedTable = make_fixed_table();

inline FixedLayout fixed_layout(std::uint8_t tag) { return kFixedTable.entries[tag]; }

// ---- bytes ----------------------------------------------------------------------------------

std::uint64_t load_be(const std::uint8_t* p, unsigned n) {
    std::uint64_t value = 0;
    for (unsigned i = 0; i < n; ++i) value = value << 8 | p[i];
    return value;
}

void store_be(std::uint8_t* p, unsigned n, std::uint64_t value) {
    for (unsigned i = n; i-- > 0; value >>= 8) p[i] = static_cast<std::uint8_t>(value);
}

// Ids are read and written for every reference of every copy: one load and a byte swap.
inline std::uint64_t load_id(const std::uint8_t* p, unsigned id_size) {
    if constexpr (std::endian::native == std::endian::little) {
        if (id_size == 8) {
            std::uint64_t v;
            std::memcpy(&v, p, 8);
            return __builtin_bswap64(v);
        }
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return __builtin_bswap32(v);
    }
    return load_be(p, id_size);
}

inline void store_id(std::uint8_t* p, unsigned id_size, std::uint64_t value) {
    if constexpr (std::endian::native == std::endian::little) {
        if (id_size == 8) {
            value = __builtin_bswap64(value);
            std::memcpy(p, &value, 8);
            return;
        }
        std::uint32_t v = __builtin_bswap32(static_cast<std::uint32_t>(value));
        std::memcpy(p, &v, 4);
        return;
    }
    store_be(p, id_size, value);
}

using heapgraph::basic_type_size;  // formats/: the one table of HPROF value sizes

// ---- input ----------------------------------------------------------------------------------

class MappedFile {
public:
    explicit MappedFile(const std::string& path) {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error(path + ": cannot open: " + errno_text());
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            throw std::runtime_error(path + ": not a regular file");
        }
        size_ = static_cast<std::uint64_t>(st.st_size);
        if (size_ > 0) {
            void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            if (map == MAP_FAILED) {
                ::close(fd);
                throw std::runtime_error(path + ": cannot map: " + errno_text());
            }
            data_ = static_cast<const std::uint8_t*>(map);
            ::madvise(map, size_, MADV_SEQUENTIAL);
        }
        ::close(fd);
    }
    ~MappedFile() {
        if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::uint8_t* data() const { return data_; }
    std::uint64_t size() const { return size_; }

    // Drops the mapped pages of [begin, end) (begin a multiple of the page size).
    void release(std::uint64_t begin, std::uint64_t end) const {
        if (data_ && end > begin) ::madvise(const_cast<std::uint8_t*>(data_) + begin, end - begin, MADV_DONTNEED);
    }

private:
    const std::uint8_t* data_ = nullptr;
    std::uint64_t size_ = 0;
};

// Gives back the mapped pages a pass has gone past, 32 MiB at a time, and all of them when the
// pass ends: mapped pages count in the RSS, and the page cache keeps them for the next pass.
class PageReleaser {
public:
    explicit PageReleaser(const MappedFile& file) : file_(file) {}
    ~PageReleaser() { file_.release(released_, file_.size()); }
    PageReleaser(const PageReleaser&) = delete;
    PageReleaser& operator=(const PageReleaser&) = delete;

    void done_before(std::uint64_t offset) {
        if (offset - std::min(offset, released_) < (std::uint64_t{32} << 20)) return;
        const std::uint64_t end = offset / page_ * page_;
        file_.release(released_, end);
        released_ = end;
    }

private:
    const MappedFile& file_;
    const std::uint64_t page_ = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::uint64_t released_ = 0;
};

struct Header {
    unsigned id_size = 0;
    std::uint64_t records_offset = 0;
};

Header read_header(const MappedFile& in) {
    const std::uint64_t limit = std::min<std::uint64_t>(in.size(), 64);
    const void* nul = limit ? std::memchr(in.data(), 0, limit) : nullptr;
    if (!nul) bad_input(0, "header", "no NUL-terminated format name in the first 64 bytes: not an HPROF file");
    const auto length = static_cast<std::uint64_t>(static_cast<const std::uint8_t*>(nul) - in.data());
    std::string version(reinterpret_cast<const char*>(in.data()), length);
    if (version != "JAVA PROFILE 1.0.1" && version != "JAVA PROFILE 1.0.2" && version != "JAVA PROFILE 1.0.3") {
        for (char& c : version) c = (c >= 0x20 && c < 0x7F) ? c : '?';
        bad_input(0, "header", "format \"" + version + "\" is not JAVA PROFILE 1.0.1, 1.0.2 or 1.0.3");
    }
    const std::uint64_t at = length + 1;
    if (in.size() - at < 12)
        bad_input(at, "header", "needs 12 bytes (id size, time stamp), file ends at " + hex(in.size()));
    const auto id_size = static_cast<unsigned>(load_be(in.data() + at, 4));
    if (id_size != 4 && id_size != 8) bad_input(at, "header", "identifier size " + std::to_string(id_size) + " is not 4 or 8");
    return {id_size, at + 12};
}

// One top-level record: tag, time, body length, and where it starts.
struct Frame {
    std::uint64_t offset = 0;
    std::uint8_t tag = 0;
    std::uint32_t time = 0;
    std::uint32_t length = 0;
    std::uint64_t body() const { return offset + 9; }
    std::uint64_t end() const { return body() + length; }
};

Frame read_frame(const MappedFile& in, std::uint64_t offset) {
    if (in.size() - offset < 9) bad_input(offset, "record header", "needs 9 bytes, file ends at " + hex(in.size()));
    const std::uint8_t* p = in.data() + offset;
    Frame f{offset, p[0], static_cast<std::uint32_t>(load_be(p + 1, 4)), static_cast<std::uint32_t>(load_be(p + 5, 4))};
    const std::string name = record_name(f.tag);
    if (name.empty()) bad_input(offset, tag_label(name, "record", f.tag), "is not a top-level HPROF record");
    if (f.length > in.size() - f.body())
        bad_input(offset, name, "body of " + std::to_string(f.length) + " bytes runs past the end of the file at " + hex(in.size()));
    return f;
}

// One heap dump record of the input. Its body is a stretch of the heap dump's sub-record
// stream: the bodies of all its records joined, since a sub-record may continue in the next
// segment (a producer quirk NOTES.md records).
struct Piece {
    std::uint64_t body_offset = 0;   // in the file
    std::uint32_t length = 0;
    std::uint32_t time = 0;
    std::uint64_t stream_begin = 0;  // where the body starts in the joined stream
    // Filled by the survey: the sub-records that start in this record, which its copies hold.
    std::uint64_t unit_begin = 0, unit_end = 0;
    // Android: an object comes before the unit's first HEAP DUMP INFO, so copies k >= 1 must
    // restore the heap that was current when the unit began.
    bool needs_heap_info = false;
};

struct HeapDump {
    std::vector<Piece> pieces;
    std::uint64_t length = 0;  // of the joined stream
};

struct TopLevel {
    std::vector<HeapDump> dumps;
    std::uint64_t max_thread_serial = 0;  // of STACK TRACE, START THREAD and END THREAD records
};

// Heap dumps grouped as heapgraph's loader groups them: a HEAP DUMP record each, or a run of
// HEAP DUMP SEGMENTs closed by HEAP DUMP END (a stray HEAP DUMP END closes nothing).
class DumpGrouping {
public:
    enum class Event { none, begin, piece, end };
    // What `tag` does to the grouping: begins a dump (and also adds a piece), adds a piece,
    // or ends the open run. A HEAP DUMP record ends an open run before it begins.
    Event next(std::uint8_t tag, bool& ends_open_run) {
        ends_open_run = false;
        if (tag == 0x0C) {
            ends_open_run = in_run_;
            in_run_ = false;
            return Event::begin;
        }
        if (tag == 0x1C) {
            if (in_run_) return Event::piece;
            in_run_ = true;
            return Event::begin;
        }
        if (tag == 0x2C && in_run_) {
            in_run_ = false;
            return Event::end;
        }
        return Event::none;
    }
    bool in_run() const { return in_run_; }

private:
    bool in_run_ = false;
};

void note_thread_serial(const MappedFile& in, const Frame& f, TopLevel& top) {
    std::uint64_t at = 0;  // START THREAD and END THREAD begin with it
    if (f.tag == 0x05) at = 4;  // STACK TRACE: u4 trace serial, u4 thread serial, ...
    else if (f.tag != 0x0A && f.tag != 0x0B) return;
    if (f.length < at + 4)
        bad_input(f.offset, record_name(f.tag), "body of " + std::to_string(f.length) + " bytes has no thread serial number");
    top.max_thread_serial = std::max(top.max_thread_serial, load_be(in.data() + f.body() + at, 4));
}

TopLevel scan_top_level(const MappedFile& in, const Header& header) {
    TopLevel top;
    DumpGrouping grouping;
    PageReleaser pages(in);  // reading record headers alone maps much of the file
    bool unused = false;
    for (std::uint64_t offset = header.records_offset; offset < in.size();) {
        const Frame f = read_frame(in, offset);
        pages.done_before(f.offset);
        note_thread_serial(in, f, top);
        const DumpGrouping::Event event = grouping.next(f.tag, unused);
        if (event == DumpGrouping::Event::begin) top.dumps.emplace_back();
        if (event == DumpGrouping::Event::begin || event == DumpGrouping::Event::piece) {
            HeapDump& dump = top.dumps.back();
            dump.pieces.push_back(Piece{f.body(), f.length, f.time, dump.length});
            dump.length += f.length;
        }
        offset = f.end();
    }
    return top;
}

// ---- the sub-record stream of one heap dump --------------------------------------------------

class HeapStream {
public:
    HeapStream(const std::uint8_t* file, const HeapDump& dump) : file_(file), dump_(&dump) {}

    std::uint64_t length() const { return dump_->length; }

    // The `n` bytes at `pos` in place when they lie in the record last looked at, else nullptr.
    const std::uint8_t* view_in_place(std::uint64_t pos, std::uint64_t n) const {
        const Piece& p = dump_->pieces[hint_];
        if (pos < p.stream_begin || pos - p.stream_begin + n > p.length) return nullptr;
        return file_ + p.body_offset + (pos - p.stream_begin);
    }

    // The `n` bytes at `pos`: a pointer into the file when they lie in one record, else a copy
    // in `scratch`. nullptr when the stream ends first.
    const std::uint8_t* view(std::uint64_t pos, std::uint64_t n, std::vector<std::uint8_t>& scratch) const {
        if (pos > length() || n > length() - pos) return nullptr;
        if (n == 0) return file_;
        const Piece& p = dump_->pieces[locate(pos)];
        if (pos + n <= p.stream_begin + p.length) return file_ + p.body_offset + (pos - p.stream_begin);
        scratch.resize(n);
        copy_to(pos, n, scratch.data());
        return scratch.data();
    }

    // Calls f(bytes, count) for each part of [pos, pos + n) that lies in one record; the
    // caller has checked the range against length().
    template <class F>
    void for_each_range(std::uint64_t pos, std::uint64_t n, F&& f) const {
        if (n == 0) return;
        for (std::size_t i = locate(pos); n > 0; ++i) {
            const Piece& p = dump_->pieces[i];
            const std::uint64_t in = pos - p.stream_begin;
            const std::uint64_t take = std::min<std::uint64_t>(n, p.length - in);
            if (take) f(file_ + p.body_offset + in, take);
            pos += take;
            n -= take;
        }
    }

    void copy_to(std::uint64_t pos, std::uint64_t n, std::uint8_t* out) const {
        for_each_range(pos, n, [&](const std::uint8_t* bytes, std::uint64_t count) {
            std::memcpy(out, bytes, count);
            out += count;
        });
    }

    // The file offset of stream position `pos` (`length()`: just past the last record's body).
    std::uint64_t file_offset(std::uint64_t pos) const {
        if (pos < length()) {
            const Piece& p = dump_->pieces[locate(pos)];
            return p.body_offset + (pos - p.stream_begin);
        }
        const Piece& last = dump_->pieces.back();
        return last.body_offset + last.length;
    }

private:
    // The record that holds `pos` (< length()). Positions mostly move forward: try the last
    // answer and the one after it before searching.
    std::size_t locate(std::uint64_t pos) const {
        const std::vector<Piece>& pieces = dump_->pieces;
        for (std::size_t i = hint_; i < pieces.size() && i < hint_ + 2; ++i)
            if (pos >= pieces[i].stream_begin && pos - pieces[i].stream_begin < pieces[i].length) return hint_ = i;
        auto after = std::upper_bound(pieces.begin(), pieces.end(), pos,
                                      [](std::uint64_t v, const Piece& p) { return v < p.stream_begin; });
        return hint_ = static_cast<std::size_t>(after - pieces.begin()) - 1;
    }

    const std::uint8_t* file_;
    const HeapDump* dump_;
    mutable std::size_t hint_ = 0;
};

struct SubRecord {
    std::uint8_t tag = 0;
    std::uint64_t pos = 0;   // in the stream
    std::uint64_t size = 0;  // tag included
};

struct ClassDecl {
    std::uint64_t super_id = 0;
    std::vector<std::uint8_t> field_types;  // instance fields this class declares, in dump order
    std::vector<std::uint64_t> object_refs;  // loader, signers, protection domain, object statics and constants
};

// Reads sub-record headers and sizes from a stream; every read is checked against its end.
class SubRecordReader {
public:
    SubRecordReader(const HeapStream& stream, unsigned id_size) : stream_(stream), id_(id_size) {}

    SubRecord read(std::uint64_t pos, ClassDecl* decl = nullptr) {
        if (const std::uint8_t* h = stream_.view_in_place(pos, 1 + 2 * id_ + 9)) {
            const std::uint64_t size = object_size(h);
            if (size > stream_.length() - pos) ends_early(pos, size, h[0]);
            if (size > 0) return {h[0], pos, size};
        }
        const std::uint8_t tag = *need(pos, 1, pos, 0);
        const FixedLayout fixed = fixed_layout(tag);
        SubRecord r{tag, pos, 0};
        if (fixed.kind != Fixed::none) r.size = 1 + std::uint64_t{fixed.ids} * id_ + fixed.extra;
        else if (tag == kClassDump) r.size = class_dump_size(pos, decl);
        else if (tag == kInstanceDump) r.size = 1 + 2 * id_ + 8 + load_be(need(pos, 1 + 2 * id_ + 8, pos, tag) + 1 + 2 * id_ + 4, 4);
        else if (tag == kObjectArrayDump) r.size = 1 + 2 * id_ + 8 + load_be(header(pos, tag) + 1 + id_ + 4, 4) * id_;
        else if (tag == kPrimitiveArrayDump) r.size = primitive_array_size(pos);
        else bad_input(stream_.file_offset(pos), tag_label({}, "sub-record", tag), "is not a heap dump sub-record (HPROF 1.0.1-1.0.3, Android)");
        if (r.size > stream_.length() - pos) ends_early(pos, r.size, tag);
        return r;
    }

    // `n` bytes at `at` inside the sub-record `r`.
    const std::uint8_t* bytes(const SubRecord& r, std::uint64_t at, std::uint64_t n) { return need(r.pos + at, n, r.pos, r.tag); }

    [[noreturn, gnu::cold, gnu::noinline]] void fail(const SubRecord& r, const std::string& message) const {
        bad_input(stream_.file_offset(r.pos), sub_record_name(r.tag), message);
    }

private:
    const std::uint8_t* need(std::uint64_t pos, std::uint64_t n, std::uint64_t record_pos, std::uint8_t tag) {
        const std::uint8_t* p = stream_.view(pos, n, scratch_);
        if (!p) ends_early(record_pos, pos - record_pos + n, tag);
        return p;
    }

    [[noreturn, gnu::cold, gnu::noinline]] void ends_early(std::uint64_t record_pos, std::uint64_t needed, std::uint8_t tag) const {
        const std::string name = sub_record_name(tag);
        bad_input(stream_.file_offset(record_pos), name.empty() ? "sub-record" : name,
                  "needs " + std::to_string(needed) + " bytes, heap dump ends at " + hex(stream_.file_offset(stream_.length())));
    }

    // The common case, from a header that lies in one record: the size of an object's
    // sub-record, or 0 for anything else (and for a primitive array of a bad type).
    std::uint64_t object_size(const std::uint8_t* h) const {
        const std::uint64_t id = id_;
        switch (h[0]) {
            case kInstanceDump: return 1 + 2 * id + 8 + load_be(h + 1 + 2 * id + 4, 4);
            case kObjectArrayDump: return 1 + 2 * id + 8 + load_be(h + 1 + id + 4, 4) * id;
            case kPrimitiveArrayDump: {
                const std::uint8_t type = h[1 + id + 8];
                return type == 2 ? 0 : 1 + id + 9 + load_be(h + 1 + id + 4, 4) * basic_type_size(type, id_);
            }
            default: return 0;
        }
    }

    // Array headers: id, u4 stack trace serial, u4 length, then the class id or element type.
    const std::uint8_t* header(std::uint64_t pos, std::uint8_t tag) {
        return need(pos, 1 + id_ + 8 + (tag == kObjectArrayDump ? id_ : 1), pos, tag);
    }

    std::uint64_t primitive_array_size(std::uint64_t pos) {
        const std::uint8_t* h = header(pos, kPrimitiveArrayDump);
        const std::uint8_t type = h[1 + id_ + 8];
        const unsigned element = basic_type_size(type, id_);
        if (element == 0 || type == 2)
            bad_input(stream_.file_offset(pos), "PRIMITIVE_ARRAY_DUMP", "element type " + std::to_string(type) + " is not a primitive type");
        return 1 + id_ + 9 + load_be(h + 1 + id_ + 4, 4) * element;
    }

    // Class dumps: class id, u4 stack trace serial, super, loader, signers, protection domain,
    // two reserved ids, u4 instance size; then the constant pool, statics and instance fields.
    std::uint64_t class_dump_size(std::uint64_t pos, ClassDecl* decl) {
        std::uint64_t at = pos + 1 + 7 * id_ + 8;
        std::vector<std::uint64_t>* refs = decl ? &decl->object_refs : nullptr;
        if (decl) {
            const std::uint8_t* h = need(pos, at - pos, pos, kClassDump);
            *decl = ClassDecl{load_id(h + 1 + id_ + 4, id_), {}, {}};
            for (unsigned i = 2; i < 5; ++i) refs->push_back(load_id(h + 1 + i * id_ + 4, id_));
        }
        at = skip_entries(pos, at, 2, true, "constant pool entry", nullptr, refs);
        at = skip_entries(pos, at, id_, true, "static field", nullptr, refs);
        at = skip_entries(pos, at, id_, false, "instance field", decl ? &decl->field_types : nullptr, nullptr);
        return at - pos;
    }

    // A u2 count, then entries of a key, a type byte and (`with_value`) a value of that type.
    // Collects the types, and the values that are object ids, when asked.
    std::uint64_t skip_entries(std::uint64_t pos, std::uint64_t at, unsigned key_bytes, bool with_value,
                               const char* what, std::vector<std::uint8_t>* types, std::vector<std::uint64_t>* refs) {
        const std::uint64_t count = load_be(need(at, 2, pos, kClassDump), 2);
        at += 2;
        for (std::uint64_t i = 0; i < count; ++i) {
            const std::uint8_t type = need(at, key_bytes + 1, pos, kClassDump)[key_bytes];
            const unsigned size = basic_type_size(type, id_);
            if (size == 0)
                bad_input(stream_.file_offset(pos), "CLASS_DUMP", std::string(what) + " " + std::to_string(i) +
                                                                      " has invalid type " + std::to_string(type));
            if (types) types->push_back(type);
            if (refs && with_value && type == 2) refs->push_back(load_id(need(at + key_bytes + 1, id_, pos, kClassDump), id_));
            at += key_bytes + 1 + (with_value ? size : 0);
        }
        return at;
    }

    const HeapStream& stream_;
    unsigned id_;
    std::vector<std::uint8_t> scratch_;
};

// ---- 2. survey ------------------------------------------------------------------------------

struct Survey {
    std::unordered_map<std::uint64_t, ClassDecl> classes;
    std::uint64_t min_object = std::numeric_limits<std::uint64_t>::max(), max_object = 0;
    std::uint64_t objects = 0;
    std::uint64_t max_thread_serial = 0;
    std::uint64_t split_sub_records = 0;  // continued in the next segment: joined in the output
    std::vector<std::vector<std::uint64_t>> class_refs;  // per heap dump: ids its class dumps name
};

// Instances and arrays: what copies multiply.
bool is_object(std::uint8_t tag) {
    return tag == kInstanceDump || tag == kObjectArrayDump || tag == kPrimitiveArrayDump || fixed_layout(tag).kind == Fixed::object;
}

void survey_sub_record(SubRecordReader& reader, const SubRecord& r, unsigned id, Survey& survey, ClassDecl& decl) {
    if (r.tag == kClassDump) {
        const std::uint64_t class_id = load_id(reader.bytes(r, 1, id), id);
        if (class_id == 0) reader.fail(r, "has class id 0");
        survey.class_refs.back().insert(survey.class_refs.back().end(), decl.object_refs.begin(), decl.object_refs.end());
        survey.classes.try_emplace(class_id, std::move(decl));  // a class dumped again (multi-dump files) keeps its first layout
    } else if (is_object(r.tag)) {
        const std::uint64_t object_id = load_id(reader.bytes(r, 1, id), id);
        if (object_id == 0) reader.fail(r, "has object id 0");
        survey.min_object = std::min(survey.min_object, object_id);
        survey.max_object = std::max(survey.max_object, object_id);
        ++survey.objects;
    } else if (fixed_layout(r.tag).kind == Fixed::thread_root) {
        survey.max_thread_serial = std::max(survey.max_thread_serial, load_be(reader.bytes(r, 1 + id, 4), 4));
    }
}

// Walks the sub-records that start in one record (they may run into the next ones).
std::uint64_t survey_piece(SubRecordReader& reader, Piece& piece, std::uint64_t pos, unsigned id, Survey& survey) {
    piece.unit_begin = pos;
    bool object_seen = false, info_seen = false;
    ClassDecl decl;
    const std::uint64_t end = piece.stream_begin + piece.length;
    while (pos < end) {
        const SubRecord r = reader.read(pos, &decl);
        survey_sub_record(reader, r, id, survey, decl);
        if (r.tag == kHeapDumpInfo) {
            piece.needs_heap_info = piece.needs_heap_info || (object_seen && !info_seen);
            info_seen = true;
        }
        object_seen = object_seen || is_object(r.tag);
        if (r.pos + r.size > end) ++survey.split_sub_records;
        pos += r.size;
    }
    piece.unit_end = pos;
    return pos;
}

Survey survey_heap_dumps(const MappedFile& in, TopLevel& top, unsigned id) {
    Survey survey;
    PageReleaser pages(in);
    for (HeapDump& dump : top.dumps) {
        HeapStream stream(in.data(), dump);
        SubRecordReader reader(stream, id);
        survey.class_refs.emplace_back();
        std::uint64_t pos = 0;
        for (Piece& piece : dump.pieces) {
            pos = survey_piece(reader, piece, pos, id, survey);
            pages.done_before(piece.body_offset);
        }
    }
    return survey;
}

// ---- class layouts ----------------------------------------------------------------------------

// The field layout of one class: HPROF writes an instance's values for its own class first, then
// for each super class up to java.lang.Object. A layout holds only its own class's fields and
// links to its super class's, so deep hierarchies cost no more than their class dumps.
struct Layout {
    std::uint32_t own_bytes = 0;
    std::vector<std::uint32_t> own_refs;  // offsets of the object fields within the own bytes
    std::uint32_t super = kNone;          // index of the super class's layout
    std::uint64_t data_bytes = 0;         // own and inherited: an instance's field bytes
    bool complete = true;                 // every super class has a CLASS DUMP, and supers do not loop
};

// Class ids and their layouts. Every reference of every copy asks "is this a class id?", so the
// index is an open-addressing table kept at most a quarter full: a miss mostly costs one probe.
class Classes {
public:
    Classes(const std::unordered_map<std::uint64_t, ClassDecl>& decls, unsigned id_size) {
        std::uint64_t capacity = 16;
        while (capacity < 4 * decls.size()) capacity *= 2;
        slots_.assign(capacity, Slot{});
        mask_ = capacity - 1;
        for (const auto& [class_id, decl] : decls) insert(class_id, add_own_fields(decl, id_size));
        std::uint32_t i = 0;
        for (const auto& entry : decls) link_super(layouts_[i++], entry.second);
        total_up();
    }

    std::uint32_t find(std::uint64_t id) const {
        if (id == 0) return kNone;
        for (std::uint64_t slot = mix(id) & mask_;; slot = (slot + 1) & mask_) {
            if (slots_[slot].key == id) return slots_[slot].value;
            if (slots_[slot].key == 0) return kNone;
        }
    }
    bool contains(std::uint64_t id) const { return find(id) != kNone; }
    const Layout& layout(std::uint32_t index) const { return layouts_[index]; }
    std::size_t size() const { return layouts_.size(); }

private:
    struct Slot {
        std::uint64_t key = 0;
        std::uint32_t value = kNone;
    };

    static std::uint64_t mix(std::uint64_t v) {
        v ^= v >> 33;
        v *= 0xff51afd7ed558ccdULL;
        return v ^ (v >> 33);
    }

    void insert(std::uint64_t id, std::uint32_t value) {
        std::uint64_t slot = mix(id) & mask_;
        while (slots_[slot].key != 0) slot = (slot + 1) & mask_;
        slots_[slot] = Slot{id, value};
    }

    std::uint32_t add_own_fields(const ClassDecl& decl, unsigned id_size) {
        Layout layout;
        std::uint64_t bytes = 0;
        for (std::uint8_t type : decl.field_types) {
            if (type == 2) layout.own_refs.push_back(static_cast<std::uint32_t>(bytes));
            bytes += basic_type_size(type, id_size);
        }
        layout.own_bytes = static_cast<std::uint32_t>(bytes);  // at most 65535 fields of 8 bytes
        layouts_.push_back(std::move(layout));
        return static_cast<std::uint32_t>(layouts_.size() - 1);
    }

    void link_super(Layout& layout, const ClassDecl& decl) {
        if (decl.super_id == 0) return;
        layout.super = find(decl.super_id);
        layout.complete = layout.super != kNone;
    }

    // data_bytes and completeness from the top of each hierarchy down, without recursion
    // (hierarchies of hostile dumps can be deep or loop).
    void total_up() {
        enum : std::uint8_t { fresh, walking, done };
        std::vector<std::uint8_t> state(layouts_.size(), fresh);
        std::vector<std::uint32_t> chain;
        for (std::uint32_t i = 0; i < layouts_.size(); ++i) {
            chain.clear();
            std::uint32_t c = i;
            for (; c != kNone && state[c] == fresh; c = layouts_[c].super) {
                state[c] = walking;
                chain.push_back(c);
            }
            const bool loops = c != kNone && state[c] == walking;
            for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
                Layout& layout = layouts_[*it];
                const Layout* up = layout.super == kNone ? nullptr : &layouts_[layout.super];
                layout.complete = layout.complete && !loops && (!up || up->complete);
                layout.data_bytes = layout.own_bytes + (up && !loops ? up->data_bytes : 0);
                state[*it] = done;
            }
        }
    }

    std::vector<Slot> slots_;
    std::uint64_t mask_ = 0;
    std::vector<Layout> layouts_;
};

// The layout an INSTANCE DUMP is read with: its class's, which must account for every byte.
const Layout& instance_layout(const Classes& classes, SubRecordReader& reader, const SubRecord& r, unsigned id) {
    const std::uint64_t class_id = load_id(reader.bytes(r, 1 + id + 4, id), id);
    const std::uint64_t field_bytes = r.size - (1 + 2 * std::uint64_t{id} + 8);
    const std::uint32_t index = classes.find(class_id);
    if (index == kNone) reader.fail(r, "names class " + hex(class_id) + ", which has no CLASS DUMP: its fields cannot be read");
    const Layout& layout = classes.layout(index);
    if (!layout.complete) reader.fail(r, "names class " + hex(class_id) + ", whose super classes lack a CLASS DUMP or loop");
    if (layout.data_bytes != field_bytes)
        reader.fail(r, "holds " + std::to_string(field_bytes) + " bytes of fields; the layout of class " + hex(class_id) +
                           " has " + std::to_string(layout.data_bytes));
    return layout;
}

// Calls f(slot) for each object field of an instance: own class first, then up the supers.
template <class Byte, class F>
void for_each_field_ref(const Classes& classes, const Layout& layout, Byte* fields, F&& f) {
    for (const Layout* level = &layout; level;) {
        for (std::uint32_t offset : level->own_refs) f(fields + offset);
        fields += level->own_bytes;
        level = level->super == kNone ? nullptr : &classes.layout(level->super);
    }
}

// ---- 2b. the ids references name ----------------------------------------------------------------

struct IdRange {
    std::uint64_t low = std::numeric_limits<std::uint64_t>::max(), high = 0;
    void add(std::uint64_t id) {
        low = std::min(low, id);
        high = std::max(high, id);
    }
    bool empty() const { return low > high; }
};

struct References {
    IdRange named;    // non-zero ids that fields, array elements and roots name, classes aside
    IdRange classes;  // class ids
};

void note_references(SubRecordReader& reader, const Classes& classes, const SubRecord& r, unsigned id, References& refs) {
    auto note = [&](const std::uint8_t* p) {
        const std::uint64_t v = load_id(p, id);
        if (v != 0 && !classes.contains(v)) refs.named.add(v);
    };
    const FixedLayout fixed = fixed_layout(r.tag);
    const std::uint64_t head = 1 + 2 * std::uint64_t{id} + 8;
    if (fixed.kind == Fixed::root || fixed.kind == Fixed::thread_root) {
        note(reader.bytes(r, 1, id));
    } else if (r.tag == kClassDump) {
        refs.classes.add(load_id(reader.bytes(r, 1, id), id));
    } else if (r.tag == kInstanceDump) {
        const Layout& layout = instance_layout(classes, reader, r, id);
        for_each_field_ref(classes, layout, reader.bytes(r, head, r.size - head), note);
    } else if (r.tag == kObjectArrayDump) {
        const std::uint64_t chunk = kInlineBytes / id * id;  // a big array is read in pieces: no copy of it all
        for (std::uint64_t at = head; at < r.size; at += chunk) {
            const std::uint64_t n = std::min(chunk, r.size - at);
            const std::uint8_t* p = reader.bytes(r, at, n);
            for (std::uint64_t i = 0; i < n; i += id) note(p + i);
        }
    }
}

// A second walk, now that every class layout is known (a CLASS DUMP may follow its instances).
// It also checks every instance against its layout before any output is written.
References scan_references(const MappedFile& in, const TopLevel& top, const Classes& classes, unsigned id) {
    References refs;
    PageReleaser pages(in);
    for (const HeapDump& dump : top.dumps) {
        HeapStream stream(in.data(), dump);
        SubRecordReader reader(stream, id);
        for (std::uint64_t pos = 0; pos < stream.length();) {
            const SubRecord r = reader.read(pos);
            note_references(reader, classes, r, id, refs);
            pos += r.size;
            pages.done_before(stream.file_offset(r.pos));
        }
    }
    return refs;
}

// ---- output ---------------------------------------------------------------------------------

class Output {
public:
    explicit Output(std::string path) : path_(std::move(path)), buffer_(new std::uint8_t[kBufferBytes]) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd_ < 0) throw std::runtime_error(path_ + ": cannot create: " + errno_text());
    }
    ~Output() {
        if (fd_ >= 0) ::close(fd_);
    }
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;

    std::uint64_t offset() const { return flushed_ + used_; }

    // `n` (<= kBufferBytes) contiguous bytes to fill now; valid until the next call.
    std::uint8_t* reserve(std::size_t n) {
        if (kBufferBytes - used_ < n) flush();
        std::uint8_t* p = buffer_.get() + used_;
        used_ += n;
        return p;
    }

    void put(const std::uint8_t* bytes, std::uint64_t n) {
        if (n >= kBufferBytes / 2) {  // large runs go straight from the mapped input
            flush();
            write_all(bytes, n);
            flushed_ += n;
            return;
        }
        std::memcpy(reserve(n), bytes, n);
    }

    // Rewrites a u4 already written: in the buffer, or in the file when flushed.
    void patch_u4(std::uint64_t at, std::uint32_t value) {
        std::uint8_t bytes[4];
        store_be(bytes, 4, value);
        if (at >= flushed_) {
            std::memcpy(buffer_.get() + (at - flushed_), bytes, 4);
        } else if (::pwrite(fd_, bytes, 4, static_cast<off_t>(at)) != 4) {
            throw std::runtime_error(path_ + ": cannot write: " + errno_text());
        }
    }

    void close() {
        flush();
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) throw std::runtime_error(path_ + ": cannot close: " + errno_text());
    }

private:
    void flush() {
        write_all(buffer_.get(), used_);
        flushed_ += used_;
        used_ = 0;
    }

    void write_all(const std::uint8_t* bytes, std::uint64_t n) {
        while (n > 0) {
            const ssize_t done = ::write(fd_, bytes, std::min<std::uint64_t>(n, std::uint64_t{1} << 30));
            if (done < 0 && errno == EINTR) continue;
            if (done <= 0) throw std::runtime_error(path_ + ": cannot write: " + errno_text());
            bytes += done;
            n -= static_cast<std::uint64_t>(done);
        }
    }

    std::string path_;
    int fd_ = -1;
    std::unique_ptr<std::uint8_t[]> buffer_;
    std::size_t used_ = 0;
    std::uint64_t flushed_ = 0;  // file offset of buffer_[0]
};

// Writes HEAP DUMP SEGMENT records whose lengths are known only at the end: a placeholder,
// patched by close(). Opens lazily, so a copy that drops every sub-record writes nothing.
class SegmentWriter {
public:
    SegmentWriter(Output& out, std::uint32_t time) : out_(out), time_(time) {}
    ~SegmentWriter() = default;

    // Room for a sub-record of `n` bytes: opens a segment, or starts a new one when the
    // open one would pass the u4 length limit.
    void make_room(std::uint64_t n) {
        if (open_ && out_.offset() - body_start_ + n > kMaxRecordBody) close();
        if (!open_) open();
    }

    void open() {
        std::uint8_t* h = out_.reserve(9);
        h[0] = 0x1C;
        store_be(h + 1, 4, time_);
        store_be(h + 5, 4, 0);
        body_start_ = out_.offset();
        open_ = true;
    }

    void close() {
        if (!open_) return;
        out_.patch_u4(body_start_ - 4, static_cast<std::uint32_t>(out_.offset() - body_start_));
        open_ = false;
    }

private:
    Output& out_;
    std::uint32_t time_;
    bool open_ = false;
    std::uint64_t body_start_ = 0;
};

// ---- 3. replicate ----------------------------------------------------------------------------

struct Plan {
    std::uint32_t copies = 1;
    std::uint64_t object_step = 8;  // S
    std::uint64_t thread_step = 1;  // largest thread serial + 1
    unsigned id_size = 8;
    std::uint64_t id_max = 0;       // largest value an id holds
    bool widened = false;           // S spans every id, not only the objects' (see may_alias)
    // --root-class-refs: per heap dump, the objects its classes refer to; copy k >= 1 names each,
    // shifted, in a ROOT UNKNOWN, standing in for the class edges that only copy 0 has.
    std::vector<std::vector<std::uint64_t>> class_roots;
};

// The objects class dumps refer to, once each (class ids and nulls aside).
std::vector<std::vector<std::uint64_t>> objects_classes_name(const Survey& survey, const Classes& classes) {
    std::vector<std::vector<std::uint64_t>> out;
    for (const std::vector<std::uint64_t>& refs : survey.class_refs) {
        std::vector<std::uint64_t>& ids = out.emplace_back();
        for (std::uint64_t id : refs)
            if (id != 0 && !classes.contains(id)) ids.push_back(id);
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    }
    return out;
}

class Replicator {
public:
    Replicator(const MappedFile& in, const Header& header, const TopLevel& top, const Classes& classes,
               const Plan& plan, Output& out)
        : in_(in), header_(header), top_(top), classes_(classes), plan_(plan), out_(out), id_(plan.id_size) {}

    void run() {
        out_.put(in_.data(), header_.records_offset);
        DumpGrouping grouping;
        for (std::uint64_t offset = header_.records_offset; offset < in_.size();) {
            const Frame f = read_frame(in_, offset);
            bool ends_open_run = false;
            const DumpGrouping::Event event = grouping.next(f.tag, ends_open_run);
            if (ends_open_run) write_dump_end(0);
            if (event == DumpGrouping::Event::begin) begin_dump();
            if (event == DumpGrouping::Event::begin || event == DumpGrouping::Event::piece) write_piece();
            if (event == DumpGrouping::Event::end || f.tag == 0x0C) write_dump_end(f.time);
            if (event == DumpGrouping::Event::none && f.tag != 0x2C) out_.put(in_.data() + f.offset, 9 + std::uint64_t{f.length});
            offset = f.end();
            pages_.done_before(f.offset);
        }
        if (grouping.in_run()) write_dump_end(0);  // the input's last run had no HEAP DUMP END
    }

    std::uint64_t objects_before_heap_info() const { return unrestorable_heap_info_; }

private:
    void begin_dump() {
        dump_ = &top_.dumps[next_dump_++];
        stream_ = std::make_unique<HeapStream>(in_.data(), *dump_);
        reader_ = std::make_unique<SubRecordReader>(*stream_, id_);
        next_piece_ = 0;
        heap_info_.clear();
    }

    void write_dump_end(std::uint32_t time) {
        std::uint8_t* h = out_.reserve(9);
        h[0] = 0x2C;
        store_be(h + 1, 4, time);
        store_be(h + 5, 4, 0);
    }

    // The N copies of one input record: the sub-records that start in it.
    void write_piece() {
        const bool first = next_piece_ == 0;
        const Piece& piece = dump_->pieces[next_piece_++];
        write_copy_zero(piece);
        const std::vector<std::uint8_t> start_info = heap_info_;
        for (std::uint32_t k = 1; k < plan_.copies; ++k) {
            object_shift_ = k * plan_.object_step;
            thread_shift_ = k * plan_.thread_step;
            SegmentWriter segment(out_, piece.time);
            if (piece.needs_heap_info) restore_heap_info(segment, start_info);
            if (first && !plan_.class_roots.empty()) write_class_roots(segment, piece);
            for (std::uint64_t pos = piece.unit_begin; pos < piece.unit_end;) {
                const SubRecord r = reader_->read(pos);
                write_shifted(r, segment);
                pos += r.size;
            }
            segment.close();
        }
    }

    // Copy 0 is the input's bytes; only a unit that grew past the u4 limit by joining a split
    // sub-record needs walking.
    void write_copy_zero(const Piece& piece) {
        SegmentWriter segment(out_, piece.time);
        const std::uint64_t length = piece.unit_end - piece.unit_begin;
        if (length <= kMaxRecordBody) {
            segment.open();
            put_range(piece.unit_begin, length);
        } else {
            for (std::uint64_t pos = piece.unit_begin; pos < piece.unit_end;) {
                const SubRecord r = reader_->read(pos);
                put_whole(r, segment);
                pos += r.size;
            }
        }
        segment.close();
    }

    // Android: copy k begins where copy k-1 left the current heap, so objects before the unit's
    // first HEAP DUMP INFO need the heap of the unit's start named again.
    void restore_heap_info(SegmentWriter& segment, const std::vector<std::uint8_t>& start_info) {
        if (start_info.empty()) {
            ++unrestorable_heap_info_;
            return;
        }
        segment.make_room(start_info.size());
        out_.put(start_info.data(), start_info.size());
    }

    void write_class_roots(SegmentWriter& segment, const Piece& piece) {
        const SubRecord where{0xFF, piece.unit_begin, 1 + std::uint64_t{id_}};
        for (std::uint64_t id : plan_.class_roots[next_dump_ - 1]) {
            segment.make_room(where.size);
            std::uint8_t* dst = out_.reserve(where.size);
            dst[0] = 0xFF;
            store_id(dst + 1, id_, shifted(id, where));
        }
    }

    void put_range(std::uint64_t pos, std::uint64_t n) {
        stream_->for_each_range(pos, n, [&](const std::uint8_t* bytes, std::uint64_t count) { out_.put(bytes, count); });
    }

    // Only a sub-record joined from several segments can be this large.
    void check_fits(const SubRecord& r) const {
        if (r.size > kMaxRecordBody) reader_->fail(r, "is " + std::to_string(r.size) + " bytes: more than one HEAP DUMP SEGMENT holds");
    }

    void put_whole(const SubRecord& r, SegmentWriter& segment) {
        check_fits(r);
        segment.make_room(r.size);
        put_range(r.pos, r.size);
    }

    void write_shifted(const SubRecord& r, SegmentWriter& segment) {
        check_fits(r);
        switch (r.tag) {
            case kClassDump: return;  // classes once, in copy 0
            case kInstanceDump: return write_instance(r, segment);
            case kObjectArrayDump: return write_object_array(r, segment);
            case kPrimitiveArrayDump: return write_primitive_array(r, segment);
            default: return write_fixed(r, segment);
        }
    }

    void write_fixed(const SubRecord& r, SegmentWriter& segment) {
        const FixedLayout fixed = fixed_layout(r.tag);
        const std::uint8_t* src = reader_->bytes(r, 0, r.size);
        const bool root = fixed.kind == Fixed::root || fixed.kind == Fixed::thread_root;
        if (root && classes_.contains(load_id(src + 1, id_))) return;  // class roots: copy 0 only
        if (fixed.kind == Fixed::heap_info) heap_info_.assign(src, src + r.size);
        segment.make_room(r.size);
        std::uint8_t* dst = out_.reserve(r.size);
        std::memcpy(dst, src, r.size);
        if (fixed.kind != Fixed::heap_info) shift_object(dst + 1, r);
        if (fixed.kind == Fixed::thread_root) store_be(dst + 1 + id_, 4, load_be(dst + 1 + id_, 4) + thread_shift_);
    }

    void write_instance(const SubRecord& r, SegmentWriter& segment) {
        const Layout& layout = instance_layout(classes_, *reader_, r, id_);
        std::uint8_t* rec = stage(r, segment);
        shift_object(rec + 1, r);
        for_each_field_ref(classes_, layout, rec + 1 + 2 * id_ + 8, [&](std::uint8_t* p) { shift_reference(p, r); });
        commit(r);
    }

    void write_object_array(const SubRecord& r, SegmentWriter& segment) {
        const std::uint64_t head = 1 + 2 * id_ + 8;
        if (r.size <= kInlineBytes) {
            std::uint8_t* rec = stage(r, segment);
            shift_object(rec + 1, r);
            shift_references(rec + head, (r.size - head) / id_, r);
            return;
        }
        segment.make_room(r.size);  // a large array is patched a chunk at a time: memory stays flat
        std::uint8_t* h = out_.reserve(head);
        stream_->copy_to(r.pos, head, h);
        shift_object(h + 1, r);
        const std::uint64_t chunk = kInlineBytes / id_ * id_;
        for (std::uint64_t done = head; done < r.size;) {
            const std::uint64_t n = std::min(chunk, r.size - done);
            std::uint8_t* dst = out_.reserve(n);
            stream_->copy_to(r.pos + done, n, dst);
            shift_references(dst, n / id_, r);
            done += n;
        }
    }

    void write_primitive_array(const SubRecord& r, SegmentWriter& segment) {
        const std::uint64_t head = 1 + id_ + 9;
        segment.make_room(r.size);
        std::uint8_t* h = out_.reserve(head);
        stream_->copy_to(r.pos, head, h);
        shift_object(h + 1, r);
        put_range(r.pos + head, r.size - head);
    }

    // A sub-record's bytes where copy k can patch them: in the write buffer, or (beyond
    // kInlineBytes: only a huge instance) in `large_`, which commit() writes.
    std::uint8_t* stage(const SubRecord& r, SegmentWriter& segment) {
        segment.make_room(r.size);
        std::uint8_t* dst = nullptr;
        if (r.size <= kInlineBytes) {
            dst = out_.reserve(r.size);
        } else {
            large_.resize(r.size);
            dst = large_.data();
        }
        stream_->copy_to(r.pos, r.size, dst);
        return dst;
    }

    void commit(const SubRecord& r) {
        if (r.size > kInlineBytes) out_.put(large_.data(), r.size);
    }

    void shift_object(std::uint8_t* p, const SubRecord& r) {
        const std::uint64_t id = load_id(p, id_);
        if (id != 0) store_id(p, id_, shifted(id, r));
    }

    void shift_reference(std::uint8_t* p, const SubRecord& r) {
        const std::uint64_t id = load_id(p, id_);
        if (id != 0 && !classes_.contains(id)) store_id(p, id_, shifted(id, r));
    }

    void shift_references(std::uint8_t* p, std::uint64_t count, const SubRecord& r) {
        for (std::uint64_t i = 0; i < count; ++i, p += id_) shift_reference(p, r);
    }

    std::uint64_t shifted(std::uint64_t id, const SubRecord& r) const {
        if (id > plan_.id_max - object_shift_) overflow(id, r);
        return id + object_shift_;
    }

    [[noreturn, gnu::cold, gnu::noinline]] void overflow(std::uint64_t id, const SubRecord& r) const {
        reader_->fail(r, "id " + hex(id) + " + " + hex(object_shift_) + " does not fit in " + std::to_string(id_) + "-byte ids");
    }

    const MappedFile& in_;
    const Header& header_;
    const TopLevel& top_;
    const Classes& classes_;
    const Plan& plan_;
    Output& out_;
    const unsigned id_;

    const HeapDump* dump_ = nullptr;
    std::unique_ptr<HeapStream> stream_;
    std::unique_ptr<SubRecordReader> reader_;
    std::size_t next_dump_ = 0, next_piece_ = 0;
    std::uint64_t object_shift_ = 0, thread_shift_ = 0;
    std::vector<std::uint8_t> heap_info_;  // the last HEAP DUMP INFO of this dump, as written
    std::vector<std::uint8_t> large_;
    PageReleaser pages_{in_};
    std::uint64_t unrestorable_heap_info_ = 0;
};

// ---- the plan and the command line ------------------------------------------------------------

// S for ids in [low, high]: the span rounded up to 8, plus 8.
std::uint64_t step_over(std::uint64_t low, std::uint64_t high, std::uint64_t id_max) {
    const std::uint64_t span = high - low;
    if (span > id_max - 15) bad_input(0, "heap dump", "ids span " + hex(span) + ": no room for a second copy");
    return (span + 7) / 8 * 8 + 8;
}

// Whether an id outside the object range [min, max] may alias across copies under step S.
// Copy d >= 1 puts its objects in [min + dS, max + dS]: a class id there would be taken by an
// object, and a dangling reference v there (copy 0 keeps v) would reach copy d's object.
// Copy k moves v below min to v + kS: inside copy k-1's range when v >= min - S.
// Only the extremes are known, so this is conservative.
bool may_alias(const Survey& survey, const References& refs, std::uint64_t step) {
    const std::uint64_t above = std::max(refs.named.empty() ? 0 : refs.named.high, refs.classes.empty() ? 0 : refs.classes.high);
    if (above > survey.max_object && above - survey.min_object >= step) return true;
    return !refs.named.empty() && refs.named.low < survey.min_object && survey.max_object - refs.named.low >= step;
}

Plan make_plan(const Survey& survey, const References& refs, const TopLevel& top, unsigned id_size, std::uint32_t copies) {
    Plan plan;
    plan.copies = copies;
    plan.id_size = id_size;
    plan.id_max = id_size == 8 ? std::numeric_limits<std::uint64_t>::max() : 0xFFFFFFFFu;
    const std::uint64_t more = copies - 1;
    IdRange all = refs.named;
    if (!refs.classes.empty()) all.add(refs.classes.low), all.add(refs.classes.high);
    if (survey.objects > 0) {
        all.add(survey.min_object), all.add(survey.max_object);
        plan.object_step = step_over(survey.min_object, survey.max_object, plan.id_max);
        if (more > 0 && may_alias(survey, refs, plan.object_step)) {
            plan.object_step = step_over(all.low, all.high, plan.id_max);  // then no id of one copy is in another's range
            plan.widened = true;
        }
    }
    const std::uint64_t top_id = all.empty() ? 0 : all.high;  // every id shifted is at most this
    if (more > 0 && (plan.id_max - top_id) / more < plan.object_step)
        bad_input(0, "heap dump", "copy " + std::to_string(more) + " would move id " + hex(top_id) + " by " + std::to_string(more) +
                                      " x " + hex(plan.object_step) + ", past the largest " + std::to_string(id_size) +
                                      "-byte id " + hex(plan.id_max));
    const std::uint64_t max_thread = std::max(survey.max_thread_serial, top.max_thread_serial);
    plan.thread_step = max_thread + 1;
    if (more > 0 && (0xFFFFFFFFu - max_thread) / more < plan.thread_step)
        bad_input(0, "heap dump", "thread serial " + std::to_string(max_thread) + " leaves no room for " +
                                      std::to_string(copies) + " copies of the threads in a u4");
    return plan;
}

// The temporary output, removed unless renamed into place; a signal removes it too.
char g_temp_path[PATH_MAX];
volatile std::sig_atomic_t g_temp_live = 0;

extern "C" void remove_temp_and_die(int sig) {
    if (g_temp_live) ::unlink(g_temp_path);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

class TempFile {
public:
    explicit TempFile(const std::string& final_path) : path_(final_path + ".tmp." + std::to_string(::getpid())) {
        if (path_.size() >= sizeof g_temp_path) throw std::runtime_error(final_path + ": path too long");
        std::memcpy(g_temp_path, path_.c_str(), path_.size() + 1);
        g_temp_live = 1;
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) std::signal(sig, remove_temp_and_die);
    }
    ~TempFile() {
        if (g_temp_live) ::unlink(path_.c_str());
        g_temp_live = 0;
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    const std::string& path() const { return path_; }
    void rename_to(const std::string& final_path) {
        if (::rename(path_.c_str(), final_path.c_str()) != 0)
            throw std::runtime_error(final_path + ": cannot rename " + path_ + " to it: " + errno_text());
        g_temp_live = 0;
    }

private:
    std::string path_;
};

void refuse_same_file(const std::string& in_path, const std::string& out_path) {
    struct stat in {}, out {};
    if (in_path == out_path ||
        (::stat(in_path.c_str(), &in) == 0 && ::stat(out_path.c_str(), &out) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino))
        throw std::runtime_error(out_path + ": is the input file; refusing to overwrite it");
}

std::uint32_t parse_copies(const char* text) {
    char* end = nullptr;
    errno = 0;
    const unsigned long value = std::strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || value < 1 || value > 1000000)
        throw std::runtime_error(std::string("N must be a whole number from 1 to 1000000, not \"") + text + "\"");
    return static_cast<std::uint32_t>(value);
}

int replicate(const std::string& in_path, const std::string& out_path, std::uint32_t copies, bool root_class_refs) {
    const auto start = std::chrono::steady_clock::now();
    refuse_same_file(in_path, out_path);
    const MappedFile in(in_path);
    const Header header = read_header(in);
    TopLevel top = scan_top_level(in, header);
    const Survey survey = survey_heap_dumps(in, top, header.id_size);
    const Classes classes(survey.classes, header.id_size);
    References refs = scan_references(in, top, classes, header.id_size);
    std::vector<std::vector<std::uint64_t>> class_roots;
    if (root_class_refs) class_roots = objects_classes_name(survey, classes);
    for (const std::vector<std::uint64_t>& ids : class_roots)
        if (!ids.empty()) refs.named.add(ids.front()), refs.named.add(ids.back());  // shifted like references
    Plan plan = make_plan(survey, refs, top, header.id_size, copies);
    plan.class_roots = std::move(class_roots);

    TempFile temp(out_path);
    Output out(temp.path());
    Replicator replicator(in, header, top, classes, plan, out);
    replicator.run();
    const std::uint64_t written = out.offset();
    out.close();
    temp.rename_to(out_path);

    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("replicate_hprof: %s (%llu bytes) -> %s (%llu bytes): %u copies of %zu heap dump(s); %zu classes, "
                "%llu objects per copy, object id step %s, thread serial step %llu; %.1f s, %.0f MB/s written\n",
                in_path.c_str(), static_cast<unsigned long long>(in.size()), out_path.c_str(),
                static_cast<unsigned long long>(written), copies, top.dumps.size(), classes.size(),
                static_cast<unsigned long long>(survey.objects), hex(plan.object_step).c_str(),
                static_cast<unsigned long long>(plan.thread_step), seconds, static_cast<double>(written) / 1048576.0 / std::max(seconds, 1e-9));
    if (root_class_refs) {
        std::size_t named = 0;
        for (const std::vector<std::uint64_t>& ids : plan.class_roots) named += ids.size();
        std::printf("  --root-class-refs: %zu ROOT UNKNOWN records per copy k >= 1\n", named);
    }
    if (plan.widened)
        std::printf("  ids outside the object range (classes, dangling references) could alias between copies: "
                    "the step spans every id\n");
    if (survey.split_sub_records > 0)
        std::printf("  %llu sub-record(s) continued in the next segment: each copy holds them whole\n",
                    static_cast<unsigned long long>(survey.split_sub_records));
    if (replicator.objects_before_heap_info() > 0)
        std::printf("  %llu copied segment(s) begin with objects before any HEAP DUMP INFO named a heap: in copies k >= 1 "
                    "they fall in the heap the previous copy ended in\n",
                    static_cast<unsigned long long>(replicator.objects_before_heap_info()));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const bool root_class_refs = argc == 5 && std::strcmp(argv[1], "--root-class-refs") == 0;
    if (argc != 4 && !root_class_refs) {
        std::fprintf(stderr,
                     "usage: replicate_hprof [--root-class-refs] IN.hprof OUT.hprof N\n"
                     "  writes OUT with N copies of every object of IN (classes once); see the source's header.\n"
                     "  --root-class-refs: copies k >= 1 also root what classes refer to (static fields, loaders),\n"
                     "  so that each copy is as reachable as the input\n");
        return 2;
    }
    char** args = argv + (root_class_refs ? 1 : 0);
    try {
        return replicate(args[1], args[2], parse_copies(args[3]), root_class_refs);
    } catch (const InputError& e) {
        std::fprintf(stderr, "replicate_hprof: %s @%s: %s %s\n", args[1], hex(e.offset).c_str(), e.what.c_str(), e.message.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "replicate_hprof: %s\n", e.what());
    }
    return 1;
}
