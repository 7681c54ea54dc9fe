// The findings index (reports.h, docs/index.md): one directory per dump and options under
// --index DIR, holding the reports a run wrote and a manifest, written last, that names the
// dump's fingerprint and each file's size and CRC-32. A later run uses the entry only when
// all of that still matches, so a changed dump or a damaged file means a fresh analysis,
// never a stale answer.
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fnv1a.h"
#include "regular_file.h"
#include "reports.h"

namespace heapgraph::reports {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kIndexFormat = "heapgraph-index/1";
constexpr const char* kManifest = "manifest.json";

// libdeflate's CRC-32 (zlib's values, several times faster: the kept graph is a gigabyte on
// a 2 GB dump). An empty write may come with no buffer at all: `crc` as it was.
std::uint32_t crc_of(const char* bytes, std::size_t size, std::uint32_t crc = 0) {
    if (size == 0) return crc;
    return libdeflate_crc32(crc, bytes, size);
}

std::string hex(std::uint64_t value, int digits) {
    char text[24];
    std::snprintf(text, sizeof text, "%0*" PRIx64, digits, value);
    return text;
}


// Passes what is written on to `out`, keeping its size and CRC-32: the manifest's figures
// come with the write, not from reading the file back.
class SummingBuffer : public std::streambuf {
public:
    explicit SummingBuffer(std::streambuf* out) : out_(out) {}
    IndexedFile sum;

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        const char byte = traits_type::to_char_type(c);
        return xsputn(&byte, 1) == 1 ? c : traits_type::eof();
    }
    std::streamsize xsputn(const char* bytes, std::streamsize n) override {
        const std::streamsize put = out_->sputn(bytes, n);
        sum.crc32 = crc_of(bytes, static_cast<std::size_t>(put), sum.crc32);
        sum.bytes += static_cast<std::uint64_t>(put);
        return put;
    }

private:
    std::streambuf* out_;
};

// Size and CRC-32 of a whole file, streamed; nullopt when it cannot be read.
std::optional<IndexedFile> sum_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::vector<char> buffer(1 << 20);
    IndexedFile sum;
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        const auto n = static_cast<std::size_t>(in.gcount());
        sum.crc32 = crc_of(buffer.data(), n, sum.crc32);
        sum.bytes += n;
    }
    if (in.bad()) return std::nullopt;
    return sum;
}

Json facts_json(const IndexedFacts& facts) {
    Json warnings = Json::array(), suspects = Json::array();
    for (const Warning& w : facts.warnings) warnings.push_back({{"code", w.code}, {"count", w.count}, {"message", w.message}});
    for (const IndexedSuspect& s : facts.suspects) suspects.push_back({{"what", s.what}, {"retained_bytes", s.retained_bytes}});
    return {{"warnings", warnings}, {"reachable_bytes", facts.reachable_bytes}, {"suspects", suspects}};
}

IndexedFacts facts_from(const Json& in) {
    IndexedFacts facts;
    for (const Json& w : in.at("warnings"))
        facts.warnings.push_back({w.at("code").get<std::string>(), w.at("count").get<std::uint64_t>(),
                                  w.at("message").get<std::string>()});
    facts.reachable_bytes = in.at("reachable_bytes").get<std::uint64_t>();
    for (const Json& s : in.at("suspects"))
        facts.suspects.push_back({s.at("what").get<std::string>(), s.at("retained_bytes").get<std::uint64_t>()});
    return facts;
}

std::map<std::string, IndexedFile> files_from(const Json& files) {
    std::map<std::string, IndexedFile> out;
    for (const auto& [name, file] : files.items())
        out[name] = {file.at("bytes").get<std::uint64_t>(), file.at("crc32").get<std::uint32_t>()};
    return out;
}

// Why the manifest's files do not hold for `names`, or "" when every one is there, whole
// (without `read_crcs`: of the size the manifest gives).
std::string check_files(const std::string& slot, const std::map<std::string, IndexedFile>& files,
                        const std::vector<std::string>& names, bool read_crcs) {
    for (const std::string& name : names) {
        auto kept = files.find(name);
        if (kept == files.end()) return "it holds no " + name;
        std::error_code error;
        const std::uint64_t size = std::filesystem::file_size(slot + "/" + name, error);
        if (error) return name + " is missing";
        if (size != kept->second.bytes) return damaged_file(name);
        if (!read_crcs) continue;  // its reader takes the CRC-32 as it reads
        const std::optional<IndexedFile> sum = sum_of(slot + "/" + name);
        if (!sum) return name + " is missing";
        if (sum->bytes != kept->second.bytes || sum->crc32 != kept->second.crc32) return damaged_file(name);
    }
    return "";
}

}  // namespace

std::string damaged_file(const std::string& name) {
    return name + " is damaged (size or CRC-32 differs from the manifest)";
}

std::string dump_fingerprint(const std::string& path) {
    // Opened as a dump is (a FIFO must not hang here); what cannot be, loading then names.
    int fd = -1;
    try {
        fd = open_regular_file(path);
    } catch (const UnreadableDump&) {
        return "";
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) st.st_size = 0;
    const auto bytes = static_cast<std::uint64_t>(st.st_size);
    constexpr std::uint64_t kEnd = 1 << 20, kSample = 64 << 10, kSamples = 16;
    std::string print = std::to_string(bytes);
    std::vector<char> buffer(kEnd);
    auto add = [&](std::uint64_t offset, std::uint64_t length) {
        length = std::min(length, bytes - std::min(bytes, offset));
        const ssize_t got = ::pread(fd, buffer.data(), length, static_cast<off_t>(offset));
        if (got != static_cast<ssize_t>(length)) return false;
        print += ':';  // not ":" + hex(...): GCC 12 warns of a false overlap there (-Wrestrict)
        print += hex(crc_of(buffer.data(), length), 8);
        return true;
    };
    bool read = add(0, kEnd);
    for (std::uint64_t i = 1; read && i <= kSamples; ++i) read = add(bytes / (kSamples + 1) * i, kSample);
    read = read && add(bytes - std::min(bytes, kEnd), kEnd);
    ::close(fd);
    return read ? print : "";
}

IndexEntry::IndexEntry(const std::string& dir, std::string slot_key, std::string fingerprint)
    : slot_(dir + "/hg-" + hex(fnv1a(slot_key), 16)), key_(std::move(slot_key)), fingerprint_(std::move(fingerprint)) {}

std::string IndexEntry::file(const std::string& name) const { return slot_ + "/" + name; }

std::optional<IndexedFacts> IndexEntry::open(const std::vector<std::string>& names, std::string& why,
                                             bool read_crcs) const {
    std::ifstream in(file(kManifest), std::ios::binary);
    if (!in) {
        why.clear();  // no entry yet: nothing to say
        return std::nullopt;
    }
    try {
        const Json manifest = Json::parse(in);
        if (manifest.at("format") != kIndexFormat || manifest.at("key") != key_) {
            why = "the entry was written for another dump or other options";
            return std::nullopt;
        }
        if (manifest.at("fingerprint") != fingerprint_) {
            why = "the dump changed since it was indexed";
            return std::nullopt;
        }
        std::map<std::string, IndexedFile> files = files_from(manifest.at("files"));
        why = check_files(slot_, files, names, read_crcs);
        if (!why.empty()) return std::nullopt;
        IndexedFacts facts = facts_from(manifest.at("facts"));
        facts.files = std::move(files);
        return facts;
    } catch (const Json::exception&) {
        why = "its manifest is damaged";
        return std::nullopt;
    }
}

void IndexEntry::begin() const {
    std::filesystem::create_directories(slot_);
    std::filesystem::remove(file(kManifest));  // until the new one: no entry, not a stale one
}

void IndexEntry::write(const std::string& name, const std::function<void(std::ostream&)>& write) {
    IndexedFile sum;
    write_atomically(file(name), [&](std::ostream& out) {
        SummingBuffer summing(out.rdbuf());
        std::ostream through(&summing);
        write(through);
        if (!through) out.setstate(std::ios::badbit);
        sum = summing.sum;
    });
    written_.emplace_back(name, sum);
}

void IndexEntry::commit(const IndexedFacts& facts) const {
    Json files = Json::object();
    for (const auto& [name, sum] : written_) files[name] = {{"bytes", sum.bytes}, {"crc32", sum.crc32}};
    const Json manifest = {{"format", kIndexFormat}, {"key", key_}, {"fingerprint", fingerprint_},
                           {"files", files}, {"facts", facts_json(facts)}};
    write_atomically(file(kManifest), [&](std::ostream& out) { out << manifest.dump(2) << "\n"; });
}

void copy_indexed(const std::string& path, std::ostream& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot read the indexed file");
    if (in.peek() != std::ifstream::traits_type::eof()) out << in.rdbuf();  // an empty file sets failbit
}

}  // namespace heapgraph::reports
