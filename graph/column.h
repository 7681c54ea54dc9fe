// Columns: the graph's arrays (row offsets, targets, node attributes, dominator arrays,
// paths), each in heap memory or in a file under --temp-dir, behind one type.
//
// Which backing a column gets follows one process-wide memory budget (--memory-limit), the
// columns' resident bytes: a column goes to heap memory while the heap-backed columns fit
// half the budget, else to a file, whose pages keep the other half.
// A file-backed column is an unnamed file (O_TMPFILE: nothing is left behind, even after a
// crash), reserved with fallocate so a full disk is an error and not a SIGBUS, and mapped
// shared. `release_pages()` drops its pages from the process after a pass over it (the
// kernel writes them back and reads them in again on the next pass); for a heap-backed
// column it does nothing. Every stage boundary drops all column files' pages
// (release_column_files), and within a stage a pager thread does whenever the process's
// resident file pages pass what the budget leaves beside the heap-backed columns. Results
// never depend on the backing: the bytes are the same.
//
// Column<T> has the parts of std::vector's interface the graph code uses, for trivially
// copyable T only, and is a contiguous range (std::span converts from it).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace heapgraph::graph {

struct StorageOptions {
    // Resident bytes of columns: heap-backed columns take up to half, column files' pages the
    // rest. 0: the default, memory_available_bytes() when the first column is made (so the
    // heap columns get half of it, as they did when the default was half and all theirs).
    std::uint64_t memory_limit = 0;
    std::string temp_dir;  // "" : $TMPDIR, else /tmp
};

// A column file could not be made (no such --temp-dir, no room): the message names the
// directory, the size and the reason.
struct StorageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Resident column-file bytes the pager always lets be, however small the budget (so that a
// tiny budget does not page every few milliseconds); estimate's model counts them too.
constexpr std::uint64_t kFilePagesFloorBytes = std::uint64_t{64} << 20;

// Of a budget, what heap-backed columns may take: half. Once columns go to files, their
// pages keep the rest (graph/column.cpp, Budget::heap_cap).
constexpr std::uint64_t heap_columns_cap(std::uint64_t memory_limit) { return memory_limit - memory_limit / 2; }
// The column files' pages the pager lets be beside `heap_bytes` of heap columns: the budget's
// room past them, at least kFilePagesFloorBytes (estimate's model uses the same).
constexpr std::uint64_t file_pages_allowance(std::uint64_t memory_limit, std::uint64_t heap_bytes) {
    return std::max(memory_limit > heap_bytes ? memory_limit - heap_bytes : 0, kFilePagesFloorBytes);
}

// When the pager looks next: after half the time the growth it saw last would take to fill
// what is left of the allowance, between 1 and 20 ms; 20 ms after a drop. A pass over
// column-file pages the page cache holds in large folios maps 2 MB a fault, up to 1.5 GB in
// 40 ms: polled every 20 ms, the 2 GB dump at --memory-limit 64M peaked at 0.45-0.48x its
// size, with this clock at 0.40-0.42x (docs/pipeline.md, "Stop 50").
class PagerClock {
public:
    using Micros = std::chrono::microseconds;
    static constexpr Micros kLongest{20000}, kShortest{1000};
    Micros wait() const { return wait_; }
    // The pager read `resident` bytes at `at`, at most `allowance`, and left them.
    void looked(std::uint64_t resident, std::uint64_t allowance, std::chrono::steady_clock::time_point at);
    // The pager dropped the column files' pages at `at`, and `left` bytes stayed (the dump's).
    void dropped(std::uint64_t left, std::chrono::steady_clock::time_point at);

private:
    std::uint64_t last_ = 0;
    std::chrono::steady_clock::time_point last_at_{};
    bool seen_before_ = false;
    Micros wait_ = kLongest;
};

// Set once, before any column is made (the CLI does it from its options).
void configure_storage(const StorageOptions& options);
// Drops every column file's pages from the process (a stage boundary: StageClock).
void release_column_files();
// Whether large heap blocks given back are kept for the next (column.cpp, take_mapping); the
// default. false also gives back what is kept: for a stage where memory not from columns
// grows while columns are freed (the values stage reads the dump back).
void keep_heap_blocks(bool keep);

// The memory the machine offers: /proc/meminfo's MemAvailable, the cgroup's memory.max,
// and the smaller of the two that are known (0: unknown). The default budget is the last.
std::uint64_t mem_available_bytes();
std::uint64_t cgroup_memory_max_bytes();
std::uint64_t memory_available_bytes();

struct StorageUse {
    std::uint64_t memory_limit = 0;
    std::uint64_t heap_bytes_peak = 0;  // of heap-backed columns at once
    std::uint64_t file_bytes_peak = 0;  // of file-backed columns at once
    std::uint64_t file_columns = 0;     // file-backed columns made
    std::uint64_t page_releases = 0;    // times the pager dropped the column files' pages
    std::string temp_dir;
};
StorageUse storage_use();
// Whether a column of `bytes` made now would be kept in heap memory, not in a file.
bool fits_memory_budget(std::uint64_t bytes);
// Passes for writes scattered over `bytes` of node-indexed columns: 1 in heap memory; in
// files, enough that each pass writes within a quarter of the budget, at most 8 (each pass
// reads its inputs again). Each write to a file column's page the pager dropped faults it
// back: on the 2 GB BigHeap dump at --memory-limit 512M the dominator step's hand-over took
// 5.2 s in one pass against 1.0 s in memory (docs/pipeline.md, "Stop 56").
std::size_t scatter_passes(std::uint64_t bytes, bool in_file);
// body(first, last) for `passes` slices of the node ids [0, nodes), in order.
template <typename Body>
void in_node_slices(std::size_t nodes, std::size_t passes, Body&& body) {
    const std::size_t step = (nodes + passes - 1) / passes;
    for (std::size_t first = 0; first < nodes; first += step) body(first, std::min(nodes, first + step));
}
// "memory (limit 18.4 GB, peak 2.1 GB)" or "files under /tmp (peak 1.9 GB; memory ...)".
std::string storage_summary();

// Untyped storage of one column: bytes in heap memory or in a mapped file.
class ColumnBlock {
public:
    ColumnBlock() = default;
    explicit ColumnBlock(std::size_t bytes);  // zero-filled
    ~ColumnBlock();
    ColumnBlock(ColumnBlock&& other) noexcept { swap(other); }
    ColumnBlock& operator=(ColumnBlock&& other) noexcept {
        ColumnBlock dead(std::move(*this));
        swap(other);
        return *this;
    }
    ColumnBlock(const ColumnBlock&) = delete;
    ColumnBlock& operator=(const ColumnBlock&) = delete;

    std::byte* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    bool in_file() const { return in_file_; }
    void release_pages() const;
    void release_pages(std::size_t from, std::size_t to) const;  // the pages of bytes [from, to)
    // Resizes a large heap block where it lies (mremap): the pages it has keep their bytes and
    // are neither copied nor faulted in again; new bytes are zero. False, and the block as it
    // was, for a file or small block or when the budget has no room: the caller copies.
    bool resize_in_place(std::size_t bytes);

private:
    void give_back() noexcept;
    void swap(ColumnBlock& other) noexcept {
        std::swap(data_, other.data_), std::swap(bytes_, other.bytes_), std::swap(in_file_, other.in_file_);
        std::swap(mapped_, other.mapped_);
    }
    std::byte* data_ = nullptr;
    std::size_t bytes_ = 0;
    bool in_file_ = false;
    bool mapped_ = false;  // a heap block of its own anonymous mapping (large blocks)
};

template <typename T>
class Column {
    static_assert(std::is_trivially_copyable_v<T>, "columns hold plain values");

public:
    using value_type = T;
    using size_type = std::size_t;
    using iterator = T*;
    using const_iterator = const T*;
    using reference = T&;
    using const_reference = const T&;

    Column() = default;
    explicit Column(std::size_t n) { resize(n); }
    Column(std::size_t n, const T& value) { assign(n, value); }
    Column(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
    Column(const std::vector<T>& values) { assign(values.begin(), values.end()); }
    template <std::input_iterator It>
    Column(It first, It last) { assign(first, last); }
    Column(Column&& other) noexcept : block_(std::move(other.block_)), size_(std::exchange(other.size_, 0)) {}
    Column& operator=(Column&& other) noexcept {
        block_ = std::move(other.block_);
        size_ = std::exchange(other.size_, 0);
        return *this;
    }
    Column(const Column& other) { assign(other.begin(), other.end()); }
    Column& operator=(const Column& other) {
        if (this != &other) assign(other.begin(), other.end());
        return *this;
    }

    T* data() { return reinterpret_cast<T*>(block_.data()); }
    const T* data() const { return reinterpret_cast<const T*>(block_.data()); }
    std::size_t size() const { return size_; }
    std::size_t capacity() const { return block_.bytes() / sizeof(T); }
    bool empty() const { return size_ == 0; }
    T* begin() { return data(); }
    T* end() { return data() + size_; }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size_; }
    T& operator[](std::size_t i) { return data()[i]; }
    const T& operator[](std::size_t i) const { return data()[i]; }
    T& at(std::size_t i) { return check(i), data()[i]; }
    const T& at(std::size_t i) const { return check(i), data()[i]; }
    T& front() { return data()[0]; }
    const T& front() const { return data()[0]; }
    T& back() { return data()[size_ - 1]; }
    const T& back() const { return data()[size_ - 1]; }
    bool in_file() const { return block_.in_file(); }
    void release_pages() const { block_.release_pages(); }
    // The pages of elements [first, last), rounded out to whole pages: a pass that releases
    // what it has read keeps a slab of a file column resident, whatever the pager's timing.
    void release_pages(std::size_t first, std::size_t last) const {
        block_.release_pages(first * sizeof(T), std::min(last, size_) * sizeof(T));
    }

    void assign(std::size_t n, const T& value) {
        // A fresh block is zeroed already: a zero value needs no pass over it.
        if (!replace(n) || !is_zero(value)) std::fill(begin(), end(), value);
    }
    template <std::input_iterator It>
    void assign(It first, It last) {
        replace(static_cast<std::size_t>(std::distance(first, last)));
        std::copy(first, last, begin());
    }
    void reserve(std::size_t n) {
        if (n > capacity()) regrow(n);
    }
    // New elements are zero bytes, i.e. T{} for the arithmetic and enum types columns hold.
    // Room a regrow just made is zero already: only older room is cleared (a first pass over
    // fresh pages would fault them all in for nothing).
    void resize(std::size_t n) {
        const std::size_t zero_from = n > capacity() ? regrow(n) : capacity();
        if (n > size_ && zero_from > size_)
            std::memset(static_cast<void*>(data() + size_), 0, (std::min(n, zero_from) - size_) * sizeof(T));
        size_ = n;
    }
    void resize(std::size_t n, const T& value) {
        const std::size_t old = size_;
        resize(n);
        if (n > old && !is_zero(value)) std::fill(data() + old, data() + n, value);
    }
    void push_back(const T& value) {
        if (size_ == capacity()) regrow(std::max<std::size_t>(16, 2 * capacity()));
        data()[size_++] = value;
    }
    void append(std::span<const T> values) {
        if (size_ + values.size() > capacity()) regrow(std::max(size_ + values.size(), 2 * capacity()));
        std::copy(values.begin(), values.end(), data() + size_);
        size_ += values.size();
    }
    void pop_back() { --size_; }
    void clear() { size_ = 0; }
    void shrink_to_fit() {
        if (size_ != capacity()) regrow(size_);
    }
    // n elements in the block of `from` when it has room for them, its old bytes left as
    // they are (the caller writes every element); else a fresh, zeroed column. A step done
    // with one array that needs another of the same size keeps the pages it has faulted in:
    // faults cost more than the writes (docs/pipeline.md).
    template <typename U>
    static Column reuse(Column<U>&& from, std::size_t n) {
        Column to;
        if (from.block_.bytes() >= n * sizeof(T)) {
            to.block_ = std::move(from.block_);
            to.size_ = n;
            from.size_ = 0;
        } else {
            from = {};
            to.resize(n);
        }
        return to;
    }
    friend bool operator==(const Column& a, const Column& b) {
        return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator==(const Column& a, const std::vector<T>& b) {
        return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
    }
    operator std::span<T>() { return {data(), size_}; }
    operator std::span<const T>() const { return {data(), size_}; }

private:
    static bool is_zero(const T& value) {
        const T zero{};
        return std::memcmp(&value, &zero, sizeof(T)) == 0;
    }
    void check(std::size_t i) const {
        if (i >= size_) throw std::out_of_range("column index out of range");
    }
    // Room for n elements, the old contents dropped: the same block when it has that size,
    // else a fresh, zeroed one (true).
    bool replace(std::size_t n) {
        size_ = n;
        if (n == capacity()) return false;
        block_ = ColumnBlock();  // freed first: the budget then sees the room
        block_ = ColumnBlock(n * sizeof(T));
        return true;
    }
    // Room for n elements, the first size_ kept; returns the index from which the room is
    // known to be zero.
    std::size_t regrow(std::size_t n) {
        const std::size_t old_capacity = capacity();
        size_ = std::min(size_, n);
        if (block_.resize_in_place(n * sizeof(T))) return std::min(old_capacity, n);
        ColumnBlock grown(n * sizeof(T));
        if (size_) std::memcpy(grown.data(), block_.data(), size_ * sizeof(T));
        block_ = std::move(grown);
        return size_;
    }

    template <typename U>
    friend class Column;

    ColumnBlock block_;
    std::size_t size_ = 0;
};

// body(first, last) over [0, n) in slabs of `slab`, in order: for passes over file columns
// that release each slab's pages once done with it.
template <typename Body>
void for_each_slab(std::size_t n, std::size_t slab, Body body) {
    for (std::size_t first = 0; first < n; first += slab) body(first, std::min(n, first + slab));
}

// Rows made in one pass and read back in a later stage (the value tables the decode collects,
// pipeline/values.h), in an unnamed file under --temp-dir that only grows at its end. Written
// with write(), not through a mapping: the rows sit in the page cache, never in the
// process's memory, and cost no page faults; a full disk is a StorageError at the append.
class SpillFile {
public:
    SpillFile() = default;  // the file is made at the first append
    ~SpillFile();
    SpillFile(SpillFile&& other) noexcept { swap(other); }
    SpillFile& operator=(SpillFile&& other) noexcept {
        SpillFile dead(std::move(*this));
        swap(other);
        return *this;
    }
    SpillFile(const SpillFile&) = delete;
    SpillFile& operator=(const SpillFile&) = delete;

    void append(const void* data, std::size_t bytes);
    // Bytes [from, from + bytes) of what was appended, into `to`.
    void read(std::uint64_t from, void* to, std::size_t bytes) const;
    std::uint64_t bytes() const { return bytes_; }

private:
    void swap(SpillFile& other) noexcept { std::swap(fd_, other.fd_), std::swap(bytes_, other.bytes_), dir_.swap(other.dir_); }
    int fd_ = -1;
    std::uint64_t bytes_ = 0;
    std::string dir_;  // for errors
};

// Rows a SpilledRows keeps in memory before it writes them all to its file: a small dump
// makes no temporary file, and what it would save is not worth a file's failure modes.
constexpr std::size_t kSpillAfterBytes = std::size_t{1} << 20;

// Rows of T, in memory up to kSpillAfterBytes, then all in a SpillFile.
template <typename T>
class SpilledRows {
    static_assert(std::is_trivially_copyable_v<T>, "spilled rows are plain values");

public:
    void append(std::span<const T> rows) {
        if (rows.empty()) return;
        if (file_.bytes() == 0 && (memory_.size() + rows.size()) * sizeof(T) <= kSpillAfterBytes) {
            memory_.insert(memory_.end(), rows.begin(), rows.end());
            return;
        }
        if (!memory_.empty()) {
            file_.append(memory_.data(), memory_.size() * sizeof(T));
            memory_ = {};
        }
        file_.append(rows.data(), rows.size_bytes());
    }
    std::size_t size() const { return memory_.size() + static_cast<std::size_t>(file_.bytes() / sizeof(T)); }
    bool spilled() const { return file_.bytes() != 0; }
    // Every row, appended to `to` (from the file a slab at a time).
    void append_to(Column<T>& to) const {
        const std::size_t at = to.size(), n = size();
        to.resize(at + n);
        std::copy(memory_.begin(), memory_.end(), to.data() + at);  // the rows are in one or the other
        if (!spilled()) return;
        for_each_slab(n, kSlabRows, [&](std::size_t first, std::size_t last) {
            file_.read(first * sizeof(T), to.data() + at + first, (last - first) * sizeof(T));
        });
    }

private:
    static constexpr std::size_t kSlabRows = (std::size_t{16} << 20) / sizeof(T);
    std::vector<T> memory_;
    SpillFile file_;
};

}  // namespace heapgraph::graph
