// analyze and diff with --index DIR (cli/indexed.cpp, reports/findings_index.cpp,
// docs/index.md): a second run reuses the reports byte for byte; a changed dump, a damaged
// entry or other options mean a fresh analysis, never a stale answer.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "test_support.h"

using heapgraph::test::data_path;
using heapgraph::test::run;
using heapgraph::test::slurp;
namespace fs = std::filesystem;

namespace {

using heapgraph::test::contains;

// A scratch directory of its own for each case, empty.
std::string fresh_dir(const std::string& name) { return heapgraph::test::fresh_dir("index-" + name); }

// The JSON report of `args`, written to `out`, with the run's output (stderr).
std::string analyze(const std::string& args, const std::string& out, int expected_code = 0) {
    heapgraph::test::Run r = run("analyze " + args + " --json " + out);
    CHECK(r.code == expected_code);
    return r.out;
}

// The entries under an index that hold `file` ("graph": the kept graph's; "snapshot": the
// reports' and diff's).
std::vector<std::string> entries_with(const std::string& index, const std::string& file) {
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(index))
        if (fs::exists(e.path() / file)) entries.push_back(e.path().string());
    std::sort(entries.begin(), entries.end());
    return entries;
}

// The one entry under an index that holds `file`.
std::string entry_of(const std::string& index, const std::string& file = "snapshot") {
    std::vector<std::string> entries = entries_with(index, file);
    REQUIRE(entries.size() == 1);
    return entries.front();
}

// The report without its timings.
nlohmann::json untimed(const std::string& path) {
    auto report = nlohmann::json::parse(slurp(path));
    report.erase("timings");
    return report;
}

void flip_byte(const std::string& path, std::uint64_t offset) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    file.get(c);
    file.seekp(static_cast<std::streamoff>(offset));
    file.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace

TEST_CASE("index: a second analyze reuses the reports, byte for byte, and the gate gives the same line") {
    const std::string dir = fresh_dir("reuse"), index = dir + "/index", dump = data_path("samples/leakdemo.hprof");
    analyze(dump + " --html " + dir + "/fresh.html --save " + dir + "/fresh.snap", dir + "/fresh.json");
    std::string first = analyze(dump + " --index " + index + " --html " + dir + "/1.html --save " + dir + "/1.snap", dir + "/1.json");
    CHECK(!contains(first, "reused"));
    CHECK(slurp(dir + "/1.json") == slurp(dir + "/fresh.json"));
    std::string second = analyze(dump + " --index " + index + " --timings --html " + dir + "/2.html --save " + dir + "/2.snap",
                                 dir + "/2.json");
    CHECK(contains(second, "reports reused from " + entry_of(index)));
    auto report = nlohmann::json::parse(slurp(dir + "/2.json"));
    CHECK(report["timings"][0]["stage"] == "index");
    report.erase("timings");
    CHECK(report == nlohmann::json::parse(slurp(dir + "/fresh.json")));
    CHECK(slurp(dir + "/2.html") == slurp(dir + "/fresh.html"));
    CHECK(slurp(dir + "/2.snap") == slurp(dir + "/fresh.snap"));
    // The gate reads the entry's suspects: the same exit code and line as a fresh run.
    heapgraph::test::Run fresh = run("analyze " + dump + " --fail-on-suspect 1 --json /dev/null");
    heapgraph::test::Run reused = run("analyze " + dump + " --index " + index + " --fail-on-suspect 1 --json /dev/null");
    CHECK(fresh.code == 5);
    CHECK(reused.code == 5);
    CHECK(reused.out == fresh.out);
    CHECK(contains(reused.out, "gate --fail-on-suspect 1%: leak suspect"));
}

TEST_CASE("index: a dump changed in place (same size) is analysed again, and the entry follows it") {
    const std::string dir = fresh_dir("changed"), index = dir + "/index", dump = dir + "/leakdemo.hprof";
    fs::copy_file(data_path("samples/leakdemo.hprof"), dump);
    analyze(dump + " --index " + index, dir + "/1.json");
    flip_byte(dump, 30);  // the header's timestamp: same size, same heap
    std::string second = analyze(dump + " --index " + index, dir + "/2.json");
    CHECK(contains(second, "the dump changed since it was indexed; analysing the dump again"));
    std::string third = analyze(dump + " --index " + index + " --timings", dir + "/3.json");
    CHECK(contains(third, "reports reused"));
    // Another dump copied over the same path: its own report, not the old one.
    fs::copy_file(data_path("samples/stepleak-1.hprof.gz"), dump, fs::copy_options::overwrite_existing);
    std::string fourth = analyze(dump + " --index " + index, dir + "/4.json");
    CHECK(contains(fourth, "the dump changed since it was indexed"));
    analyze(dump, dir + "/fresh.json");
    CHECK(slurp(dir + "/4.json") == slurp(dir + "/fresh.json"));
    CHECK(slurp(dir + "/4.json") != slurp(dir + "/1.json"));
}

TEST_CASE("index: a damaged or missing file of the entry means a fresh analysis, and the entry is mended") {
    const std::string dir = fresh_dir("damaged"), index = dir + "/index", dump = data_path("samples/stepleak-2.hprof.gz");
    analyze(dump + " --index " + index, dir + "/1.json");
    const std::string entry = entry_of(index, "report.json");
    flip_byte(entry + "/report.json", 100);
    std::string second = analyze(dump + " --index " + index + " --timings", dir + "/2.json");
    CHECK(contains(second, "report.json is damaged"));
    CHECK(!contains(second, "reports reused"));
    auto report = nlohmann::json::parse(slurp(dir + "/2.json"));
    report.erase("timings");
    CHECK(report == nlohmann::json::parse(slurp(dir + "/1.json")));
    CHECK(contains(analyze(dump + " --index " + index + " --timings", dir + "/3.json"), "reports reused"));
    fs::remove(entry + "/report.html");
    CHECK(contains(analyze(dump + " --index " + index + " --html " + dir + "/3.html", dir + "/3.json"), "report.html is missing"));
    std::ofstream(entry + "/manifest.json") << "{\"format\": ";
    CHECK(contains(analyze(dump + " --index " + index, dir + "/4.json"), "its manifest is damaged"));
    CHECK(slurp(dir + "/4.json") == slurp(dir + "/1.json"));
}

TEST_CASE("index: other options are another entry, an output the entry lacks is computed and kept, an unwritable index warns") {
    const std::string dir = fresh_dir("options"), index = dir + "/index", dump = data_path("samples/stepleak-1.hprof.gz");
    analyze(dump + " --index " + index, dir + "/1.json");
    std::string top = analyze(dump + " --index " + index + " --top 5 --timings", dir + "/top.json");
    CHECK(!contains(top, "reused"));
    analyze(dump + " --top 5", dir + "/top-fresh.json");
    auto report = nlohmann::json::parse(slurp(dir + "/top.json"));
    report.erase("timings");
    CHECK(report == nlohmann::json::parse(slurp(dir + "/top-fresh.json")));
    CHECK(entries_with(index, "snapshot").size() == 2);
    CHECK(entries_with(index, "graph").size() == 1);  // one graph for both
    // The TSV was not kept: the run computes it, keeps it, and the next run reuses it.
    std::string tsv = analyze(dump + " --index " + index + " --objects-tsv " + dir + "/1.tsv --timings", dir + "/5.json");
    CHECK(!contains(tsv, "reused"));
    CHECK(contains(tsv, "it holds no objects.tsv"));
    CHECK(contains(analyze(dump + " --index " + index + " --objects-tsv " + dir + "/2.tsv --timings", dir + "/6.json"), "reused"));
    CHECK(slurp(dir + "/2.tsv") == slurp(dir + "/1.tsv"));
    CHECK(slurp(dir + "/2.tsv").size() > 1000);
    // An index that cannot be written: a warning, and the reports all the same.
    std::ofstream(dir + "/a-file") << "not a directory";
    std::string out = analyze(dump + " --index " + dir + "/a-file", dir + "/7.json");
    const std::string warning = "heapgraph: warning: index " + dir + "/a-file not updated: ";
    CHECK(contains(out, warning));
    CHECK(out.find(warning) == out.rfind(warning));  // once, though the graph and the reports both failed
    CHECK(slurp(dir + "/7.json") == slurp(dir + "/1.json"));
    CHECK(slurp(dir + "/a-file") == "not a directory");
    // The index is no place for the dump or a report.
    CHECK(run("analyze " + dump + " --index " + dump).code == 1);
    CHECK(run("analyze " + dump + " --json " + dir + "/8.json --index " + dir + "/8.json").code == 1);
}

TEST_CASE("index: diff reuses analyze's snapshots and keeps its own, with the same diff as without an index") {
    const std::string dir = fresh_dir("diff"), index = dir + "/index";
    const std::string dumps = data_path("samples/stepleak-1.hprof.gz") + " " + data_path("samples/stepleak-3.hprof.gz");
    REQUIRE(run("diff " + dumps + " --json " + dir + "/fresh.json").code == 0);
    analyze(data_path("samples/stepleak-1.hprof.gz") + " --index " + index, dir + "/a.json");
    const std::string entry = entry_of(index, "report.json");
    const auto written = fs::last_write_time(entry + "/manifest.json");
    // stepleak-1 from analyze's entry, stepleak-3 analysed and kept.
    REQUIRE(run("diff " + dumps + " --index " + index + " --json " + dir + "/1.json").code == 0);
    CHECK(slurp(dir + "/1.json") == slurp(dir + "/fresh.json"));
    CHECK(fs::last_write_time(entry + "/manifest.json") == written);  // reused, not rewritten
    CHECK(entries_with(index, "snapshot").size() == 2);
    REQUIRE(run("diff " + dumps + " --index " + index + " --json " + dir + "/2.json").code == 0);
    CHECK(slurp(dir + "/2.json") == slurp(dir + "/fresh.json"));
}

TEST_CASE("index: a run with other report options reopens the kept graph, and reports what a fresh run does") {
    const std::string dir = fresh_dir("graph");
    REQUIRE(run("convert " + data_path("samples/leakdemo.hprof") + " --to classic -o " + dir + "/leakdemo.classic.txt").code == 0);
    for (const std::string& dump : {data_path("samples/leakdemo.hprof"), data_path("samples/contentdemo.hprof.gz"),
                                   data_path("phd/heapdump.20100209.165721.4484.phd") + " --javacore " +
                                       data_path("phd/javacore.20100209.165721.4484.txt"),
                                   dir + "/leakdemo.classic.txt"}) {
        CAPTURE(dump);
        const std::string index = fresh_dir("graph-index");
        std::string first = analyze(dump + " --index " + index + " --timings", dir + "/1.json");
        CHECK(contains(first, "keep graph"));
        const std::string graph = entry_of(index, "graph");
        const auto written = fs::last_write_time(graph + "/manifest.json");
        const std::string options = " --top 7 --suspect-threshold 3 --keep-unreachable";
        analyze(dump + options + " --html " + dir + "/fresh.html", dir + "/fresh.json");
        // Any thread count and backing: the reports do not depend on them.
        std::string second = analyze(dump + options + " --index " + index + " --timings --threads 1 --memory-limit 1 --html " +
                                         dir + "/2.html",
                                     dir + "/2.json");
        CHECK(contains(second, "graph reopened from " + graph));
        CHECK(!contains(second, "keep graph"));
        CHECK(untimed(dir + "/2.json") == untimed(dir + "/fresh.json"));
        CHECK(slurp(dir + "/2.html") == slurp(dir + "/fresh.html"));
        CHECK(fs::last_write_time(graph + "/manifest.json") == written);
    }
}

TEST_CASE("index: a damaged kept graph means a fresh load, a line on stderr, and the graph kept again") {
    const std::string dir = fresh_dir("graph-damaged"), index = dir + "/index", dump = data_path("samples/leakdemo.hprof");
    analyze(dump + " --index " + index, dir + "/1.json");
    const std::string graph = entry_of(index, "graph");
    flip_byte(graph + "/graph", fs::file_size(graph + "/graph") / 2);
    std::string second = analyze(dump + " --index " + index + " --top 9 --timings", dir + "/2.json");
    CHECK(contains(second, "graph is damaged (size or CRC-32 differs from the manifest); analysing the dump again"));
    CHECK(contains(second, "keep graph"));
    analyze(dump + " --top 9", dir + "/fresh.json");
    CHECK(untimed(dir + "/2.json") == untimed(dir + "/fresh.json"));
    CHECK(contains(analyze(dump + " --index " + index + " --top 8 --timings", dir + "/3.json"), "graph reopened"));
    // Cut short (the reader's own checks: tests/pipeline/kept_dump_test.cpp).
    fs::resize_file(graph + "/graph", fs::file_size(graph + "/graph") - 10);
    CHECK(contains(analyze(dump + " --index " + index + " --top 6", dir + "/4.json"), "graph is damaged"));
}

TEST_CASE("index: diff and convert reopen a graph analyze kept, with the same output as without an index") {
    const std::string dir = fresh_dir("graph-commands"), index = dir + "/index";
    const std::string one = data_path("samples/stepleak-1.hprof.gz"), three = data_path("samples/stepleak-3.hprof.gz");
    REQUIRE(run("diff " + one + " " + three + " --json " + dir + "/fresh.json").code == 0);
    // Other report options: analyze keeps no snapshot diff could use, but the graph.
    analyze(one + " --top 3 --index " + index, dir + "/a.json");
    analyze(three + " --top 3 --index " + index, dir + "/b.json");
    const std::vector<std::string> graphs = entries_with(index, "graph");
    REQUIRE(graphs.size() == 2);
    const auto written = fs::last_write_time(graphs[0] + "/manifest.json");
    REQUIRE(run("diff " + one + " " + three + " --index " + index + " --json " + dir + "/1.json").code == 0);
    CHECK(slurp(dir + "/1.json") == slurp(dir + "/fresh.json"));
    CHECK(fs::last_write_time(graphs[0] + "/manifest.json") == written);
    REQUIRE(run("convert " + one + " -o " + dir + "/fresh.txt").code == 0);
    heapgraph::test::Run converted = run("convert " + one + " --index " + index + " -o " + dir + "/1.txt");
    CHECK(converted.code == 0);
    CHECK(slurp(dir + "/1.txt") == slurp(dir + "/fresh.txt"));
    CHECK(fs::last_write_time(graphs[0] + "/manifest.json") == written);
    CHECK(run("convert " + one + " --index " + dir + "/1.txt -o " + dir + "/1.txt").code == 1);
}
