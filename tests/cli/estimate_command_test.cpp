// `heapgraph estimate`: the scan's counts equal the loaded graph's, and the memory it
// predicts is within 25% of the peak RSS `analyze` then reaches (Release tree only: ASan's
// allocator and shadow memory change every RSS figure).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pipeline.h"
#include "test_support.h"

using heapgraph::test::data_path;
using heapgraph::test::run;
using heapgraph::test::slurp;
using heapgraph::test::temp_dir;

#if defined(__SANITIZE_ADDRESS__)
#define ESTIMATE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ESTIMATE_UNDER_ASAN 1
#endif
#endif

namespace {

const char* const kDumps[] = {"samples/leakdemo.hprof", "samples/leakdemo-jcmd.hprof.gz", "samples/threeleaks.hprof.gz",
                              "samples/steady-1.hprof.gz", "hprof/sun_jdk6_18_x64.hprof",
                              "phd/heapdump.20160404.083909.9480.0002.phd"};

}  // namespace

TEST_CASE("estimate: the scan counts the objects the whole load builds, without building a graph") {
    for (const char* name : kDumps) {
        CAPTURE(name);
        heapgraph::LoadOptions scan;
        scan.scan_only = true;
        heapgraph::LoadedDump scanned = heapgraph::load_dump(data_path(name), scan);
        heapgraph::LoadedDump loaded = heapgraph::load_dump(data_path(name), {});
        CHECK(scanned.scan.objects == loaded.graph.node_count());
        CHECK(scanned.scan.references > 0);
        CHECK(scanned.scan.references <= loaded.graph.edges);  // records' references; the graph adds class edges
        CHECK(scanned.info.format == loaded.info.format);
        CHECK(scanned.scan.graph_built == (loaded.info.format.rfind("hprof", 0) != 0));
        if (!scanned.scan.graph_built) CHECK(scanned.graph.node_count() == 0);
    }
}

TEST_CASE("estimate: JSON with memory and temporary disk, memory within 25% of the measured peak") {
    for (const char* name : kDumps) {
        CAPTURE(name);
        heapgraph::test::Run e = run("estimate " + data_path(name) + " 2>/dev/null");
        REQUIRE(e.code == 0);
        auto estimate = nlohmann::json::parse(e.out);
        CHECK(estimate["file"] == data_path(name));
        CHECK(estimate["objects"].get<std::uint64_t>() > 0);
        const bool gz = std::string(name).ends_with(".gz");
        const std::uint64_t spill = estimate["value_spill_bytes"].get<std::uint64_t>();
        CHECK(estimate["temp_disk_bytes"] == (gz ? estimate["inflated_bytes"].get<std::uint64_t>() : 0) + spill);
        if (estimate["format"].get<std::string>().rfind("hprof", 0) != 0) CHECK(spill == 0);
        CHECK(estimate["memory_bytes"].get<std::uint64_t>() >= estimate["scan_peak_rss_bytes"].get<std::uint64_t>());
#if defined(ESTIMATE_UNDER_ASAN)
        MESSAGE("estimate against measured RSS runs in the Release tree only");
#else
        std::string json = temp_dir() + "/estimate-run.json";
        REQUIRE(run("analyze " + data_path(name) + " --timings --json " + json).code == 0);
        std::uint64_t peak = 0;
        const auto report = nlohmann::json::parse(slurp(json));  // named: a range-for over a temporary's member dangles
        for (const auto& t : report["timings"])
            peak = std::max(peak, t["peak_rss_bytes"].get<std::uint64_t>());
        const double ratio = estimate["memory_bytes"].get<double>() / static_cast<double>(peak);
        CAPTURE(ratio);
        CHECK(ratio > 0.75);
        CHECK(ratio < 1.25);
#endif
    }
}

TEST_CASE("estimate: past --memory-limit the columns are temporary disk and the memory stops at the budget") {
    const std::string dump = data_path("samples/leakdemo.hprof");
    heapgraph::test::Run whole = run("estimate " + dump + " 2>/dev/null");
    heapgraph::test::Run limited = run("estimate " + dump + " --memory-limit 1M 2>/dev/null");
    REQUIRE(whole.code == 0);
    REQUIRE(limited.code == 0);
    const auto w = nlohmann::json::parse(whole.out), l = nlohmann::json::parse(limited.out);
    auto u64 = [](const nlohmann::json& j, const char* key) { return j[key].get<std::uint64_t>(); };
    // Half the budget for columns in memory, the rest (at least the pager's 64 MB floor) for
    // the pages of those in files.
    const std::uint64_t budget = 1 << 20, heap = budget / 2, columns = u64(l, "column_bytes");
    // The same counts, the same columns; the default budget holds them all.
    CHECK(columns == u64(w, "column_bytes"));
    CHECK(u64(w, "memory_limit_bytes") >= columns);
    CHECK(u64(w, "temp_disk_bytes") == u64(w, "value_spill_bytes"));
    CHECK(u64(w, "memory_bytes") == u64(w, "scan_peak_rss_bytes") + columns);
    REQUIRE(columns > budget);
    CHECK(u64(l, "memory_limit_bytes") == budget);
    CHECK(u64(l, "temp_disk_bytes") == columns - heap + u64(l, "value_spill_bytes"));
    CHECK(u64(l, "memory_bytes") == u64(l, "scan_peak_rss_bytes") + heap + std::min<std::uint64_t>(columns - heap, 64 << 20));
    // And the analysis at that budget does put columns in files.
    const std::string json = temp_dir() + "/estimate-limited.json";
    REQUIRE(run("analyze " + dump + " --memory-limit 1M --timings --json " + json).code == 0);
    const auto report = nlohmann::json::parse(slurp(json));
    std::string storage;
    for (const auto& t : report["timings"])
        if (t["stage"] == "storage") storage = t["note"].get<std::string>();
    CHECK(storage.rfind("files under ", 0) == 0);
}

TEST_CASE("estimate: a file that is no dump is one line and exit 2") {
    std::string path = temp_dir() + "/not-a-dump.txt";
    { std::ofstream(path) << "hello"; }
    heapgraph::test::Run e = run("estimate " + path);
    CHECK(e.code == 2);
    CHECK(e.out.find("heapgraph: " + path) == 0);
    CHECK(e.out.find('\n') == e.out.size() - 1);
}
