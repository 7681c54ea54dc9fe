// Dumps cut short (a full disk during `jcmd`): without --allow-truncated the error names the
// offset where the dump ends; with it the dump is read up to its last whole record, with a
// `truncated` warning saying what was lost. For every format, on real dumps cut at half
// their size, and on small dumps cut at every offset.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>

#include "classic.h"
#include "pipeline.h"
#include "reports.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

LoadOptions allow_truncated() {
    LoadOptions options;
    options.allow_truncated = true;
    return options;
}

const Warning* truncation_warning(const LoadedDump& dump) {
    for (const Warning& w : dump.warnings)
        if (w.code == "truncated") return &w;
    return nullptr;
}

std::uint64_t objects(const LoadedDump& dump) { return graph::summarize(dump.graph).objects; }

// The whole dump, then its first `part` (half by default): refused strictly with the end
// offset named, read with a warning and fewer objects when allowed. A gzip dump keeps fewer:
// the strings at the start of an HPROF deflate better than the heap dump after them, so half
// the compressed bytes may hold no object yet (`min_share` 0).
void check_half(const std::vector<std::uint8_t>& bytes, const std::string& name, double part = 0.5,
                double min_share = 0.2) {
    CAPTURE(name);
    CAPTURE(part);
    LoadedDump whole = load_dump_bytes(bytes, name, {});
    CHECK(!truncation_warning(whole));
    Bytes half(bytes.data(), static_cast<std::size_t>(static_cast<double>(bytes.size()) * part));
    try {
        load_dump_bytes(half, name, {});
        FAIL("a half dump loaded without --allow-truncated");
    } catch (const DumpError& e) {
        CHECK(std::string(e.what()).find(name + " @0x") == 0);
        CHECK(std::string(e.what()).find(hex_offset(half.size())) != std::string::npos);  // where it ends
    }
    LoadedDump cut = load_dump_bytes(half, name, allow_truncated());
    const Warning* warning = truncation_warning(cut);
    REQUIRE(warning);
    CAPTURE(warning->message);
    CHECK(warning->message.find("cut short") != std::string::npos);
    CHECK(warning->message.find(hex_offset(half.size())) != std::string::npos);
    CHECK(objects(cut) < objects(whole));
    CHECK(static_cast<double>(objects(cut)) >= min_share * static_cast<double>(objects(whole)));
    CHECK(cut.graph.classes.size() > 0);
    // Analysable: the dominator tree of what is there.
    auto retained = graph::compute_retained(cut.graph, {.keep_unreachable = cut.info.roots_inferred});
    CHECK(retained.tree.super_root_retained_bytes > 0);
}

std::vector<std::uint8_t> as_classic(const std::string& dump) {
    LoadedDump loaded = load_dump(test::data_path(dump), {});
    std::ostringstream text;
    reports::write_classic({loaded.graph, loaded.addresses.addresses(), "J9 test", 8, false}, text);
    std::string s = text.str();
    return {s.begin(), s.end()};
}

}  // namespace

TEST_CASE("truncated: an HPROF cut at half its size is refused at its end, or read up to its last whole sub-record") {
    check_half(test::read_file(test::data_path("samples/leakdemo.hprof")), "half.hprof");
}

TEST_CASE("truncated: gzip HPROF cut at half, chunked by jcmd or one member") {
    for (const char* file : {"samples/leakdemo-jcmd.hprof.gz", "samples/leakdemo-nocoops.hprof.gz"}) {
        check_half(test::read_file(test::data_path(file)), "half.hprof.gz", 0.5, 0);
        check_half(test::read_file(test::data_path(file)), "cut.hprof.gz", 0.8, 0.2);
    }
}

TEST_CASE("truncated: a PHD cut at half its size") {
    check_half(test::read_file(test::data_path("phd/heapdump.20160404.083909.9480.0002.phd")), "half.phd");
}

TEST_CASE("truncated: a classic text dump cut at half its size") {
    std::vector<std::uint8_t> text = as_classic("phd/heapdump.20100112.141124.11580.0002.phd");
    check_half(text, "half.txt");
}

TEST_CASE("truncated: a small HPROF cut at every offset is an error naming an offset, or loads with a warning") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("hprof/sun_jdk6_18_x32.hprof"));
    const std::regex offset(R"(^cut\.hprof @0x[0-9a-f]{8}: )");
    LoadedDump whole = load_dump_bytes(bytes, "whole.hprof", {});
    std::size_t loaded = 0;
    for (std::size_t size = 0; size < bytes.size(); size += 1 + size / 64) {
        CAPTURE(size);
        try {
            LoadedDump part = load_dump_bytes(Bytes(bytes.data(), size), "cut.hprof", allow_truncated());
            CHECK(objects(part) <= objects(whole));
            ++loaded;
        } catch (const DumpError& e) {
            CHECK(std::regex_search(std::string(e.what()), offset));
        }
    }
    CHECK(loaded > 0);
}

TEST_CASE("truncated: a PHD and a classic dump cut anywhere past their header load with a warning") {
    std::vector<std::uint8_t> phd = test::read_file(test::data_path("phd/heapdump.20100209.165721.4484.phd"));
    std::vector<std::uint8_t> classic = as_classic("phd/heapdump.20100209.165721.4484.phd");
    for (const auto* bytes : {&phd, &classic}) {
        LoadedDump whole = load_dump_bytes(*bytes, "whole", {});
        for (std::size_t size = 128; size < bytes->size(); size += 1 + size / 32) {
            CAPTURE(size);
            try {
                LoadedDump part = load_dump_bytes(Bytes(bytes->data(), size), "cut", allow_truncated());
                CHECK(objects(part) <= objects(whole));
                CHECK(truncation_warning(part));
            } catch (const DumpError& e) {
                FAIL_CHECK(std::string(e.what()));
            }
        }
    }
}

TEST_CASE("truncated: the CLI reads a half dump with --allow-truncated, warning on stderr and in the report") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("samples/leakdemo.hprof"));
    std::string half = test::temp_dir() + "/half-cli.hprof", json = test::temp_dir() + "/half-cli.json";
    std::ofstream(half, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size() / 2));
    test::Run strict = test::run("analyze " + half + " --json " + json);
    CHECK(strict.code == 2);
    CHECK(strict.out.find("--allow-truncated") != std::string::npos);
    test::Run run = test::run("analyze " + half + " --allow-truncated --json " + json);
    CAPTURE(run.out);
    REQUIRE(run.code == 0);
    CHECK(run.out.find("heapgraph: warning: 1 truncated: the dump is cut short") != std::string::npos);
    auto report = nlohmann::json::parse(test::slurp(json));
    REQUIRE(report["warnings"].is_array());
    bool found = false;
    for (const auto& w : report["warnings"]) found = found || w["code"] == "truncated";
    CHECK(found);
}

namespace {

// Where a cut is worth trying in an HPROF: inside the first heap dump, every `stride`-th
// sub-record's start and a byte a few into it (found with the decoder's own framing). Also
// returns the top-level record boundaries: a file cut there looks whole.
struct HprofCuts {
    std::vector<std::size_t> boundaries, in_heap_dump;
    std::uint64_t heap_dump = 0;  // the first heap dump record's offset
};

HprofCuts hprof_cuts(Bytes file, std::size_t stride) {
    HprofCuts cuts;
    auto header = std::get<HprofHeader>(read_hprof_header(file));
    std::optional<RecordFrame> heap;
    for (std::uint64_t at = header.records_offset; at < file.size();) {
        auto frame = std::get<RecordFrame>(read_record_frame(file, at));
        cuts.boundaries.push_back(at);
        if (!heap && (frame.tag == 0x0C || frame.tag == 0x1C)) heap = frame;
        at = frame.body_offset + frame.body_length;
    }
    REQUIRE(heap);
    cuts.heap_dump = heap->body_offset - 9;
    Bytes body = file.subspan(heap->body_offset, heap->body_length);
    std::size_t k = 0;
    for (std::uint64_t pos = 0; pos < body.size(); ++k) {
        std::uint64_t size = std::get<std::uint64_t>(sub_record_size(body, pos, header.id_size));
        if (k % stride == 0) {
            cuts.in_heap_dump.push_back(heap->body_offset + pos);
            cuts.in_heap_dump.push_back(heap->body_offset + pos + 1 + k % std::min<std::uint64_t>(size - 1, 13));
        }
        pos += size;
    }
    return cuts;
}

}  // namespace

TEST_CASE("truncated: an hprof-agent dump cut in its heap dump loads, keeping instances whose CLASS DUMP the cut lost") {
    // The old hprof agent writes class dumps among the instances, so most cuts lose class
    // dumps that instances before the cut need.
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("hprof/hprof-32.bin"));
    LoadedDump whole = load_dump_bytes(bytes, "whole.hprof", {});
    HprofCuts cuts = hprof_cuts(bytes, 5);
    std::size_t lost_classes = 0;
    for (std::size_t size : cuts.in_heap_dump) {
        CAPTURE(size);
        Bytes cut(bytes.data(), size);
        if (size % 5 == 0) {  // strictly, every cut is an error naming where the file ends
            std::string strict = test::load_error(cut, "cut.hprof");
            CHECK(strict.find("cut.hprof @0x") == 0);
            CHECK(strict.find(hex_offset(size)) != std::string::npos);
        }
        LoadedDump part = load_dump_bytes(cut, "cut.hprof", allow_truncated());
        CHECK(objects(part) <= objects(whole));
        const Warning* warning = truncation_warning(part);
        REQUIRE(warning);
        lost_classes += warning->message.find(" classes whose CLASS DUMP lay after the cut: their references are lost") !=
                        std::string::npos;
    }
    CHECK(cuts.in_heap_dump.size() > 1400);
    CHECK(lost_classes > 1000);  // nearly every cut after the first instance
    // A file that ends at a record boundary looks whole: before the heap dump it holds none,
    // after it, it loads.
    for (std::size_t size : cuts.boundaries) {
        CAPTURE(size);
        std::string error = test::load_error(Bytes(bytes.data(), size), "cut.hprof", allow_truncated());
        if (size <= cuts.heap_dump)
            CHECK(error == "cut.hprof @" + hex_offset(size) + ": end of file reached with no HEAP DUMP or HEAP DUMP "
                                                              "SEGMENT record: the file holds no heap dump (cut short?)");
        else
            CHECK(error.empty());
    }
    // Cut inside a record before the heap dump: --allow-truncated has no heap to read.
    CHECK(test::load_error(Bytes(bytes.data(), cuts.heap_dump + 4), "cut.hprof", allow_truncated()) ==
          "cut.hprof @" + hex_offset(cuts.heap_dump + 4) + ": end of file cuts the record at " +
              hex_offset(cuts.heap_dump) + ", before any HEAP DUMP or HEAP DUMP SEGMENT record: no heap dump is left to read");
}
