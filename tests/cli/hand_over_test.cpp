// The hand-over of cli/main.cpp: a dump of more objects than 32-bit node ids number goes to
// heapgraph-wide (64-bit ids) with the same command line. HEAPGRAPH_NARROW_ID_LIMIT lowers
// the 32-bit build's limit so that small dumps take that path. Built only where
// heapgraph-wide is (not in the sanitizer tree).
#ifdef HEAPGRAPH_CLI_WIDE
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

using heapgraph::test::data_path;
using heapgraph::test::run_command;
using heapgraph::test::slurp;
namespace fs = std::filesystem;

namespace {

const std::string kLimit = "HEAPGRAPH_NARROW_ID_LIMIT=1000 ";

// `cli` (with `env` before it) run with `args`, stderr joined to stdout.
heapgraph::test::Run run_with(const std::string& env, const std::string& cli, const std::string& args) {
    return run_command(env + cli + " 2>&1 " + args);
}

using heapgraph::test::contains;

std::string scratch(const std::string& name) { return heapgraph::test::fresh_dir("hand-over-" + name); }

}  // namespace

TEST_CASE("hand-over: heapgraph hands a dump past its object limit to heapgraph-wide, which writes the same reports") {
    const std::string dir = scratch("analyze"), dump = data_path("samples/leakdemo.hprof");
    auto r = run_with("", HEAPGRAPH_CLI, "analyze " + dump + " --json " + dir + "/narrow.json --html " + dir + "/narrow.html");
    REQUIRE(r.code == 0);
    CHECK(!contains(r.out, "heapgraph-wide"));
    r = run_with(kLimit, HEAPGRAPH_CLI, "analyze " + dump + " --json " + dir + "/wide.json --html " + dir + "/wide.html");
    INFO(r.out);
    REQUIRE(r.code == 0);
    // The decode stops at the first chunk that passes the limit: it says where.
    CHECK(contains(r.out, dump + ": holds more than 1000 objects by byte offset 0x001fffe8; heapgraph numbers at most "
                           "1000 in one dump (32-bit node ids, docs/heap-graph.md); handing it over to heapgraph-wide "
                           "(64-bit node ids)\n"));
    CHECK(slurp(dir + "/wide.json") == slurp(dir + "/narrow.json"));
    CHECK(slurp(dir + "/wide.html") == slurp(dir + "/narrow.html"));
    // --quiet: not a word; a gate's exit code comes through the hand-over.
    r = run_with(kLimit, HEAPGRAPH_CLI, "analyze " + dump + " --quiet --fail-on-suspect 1");
    CHECK(r.code == 5);
    CHECK(!contains(r.out, "heapgraph-wide"));
    CHECK(run_with("", HEAPGRAPH_CLI, "analyze " + dump + " --quiet --fail-on-suspect 1").code == 5);
    // heapgraph-wide says what it is, and never hands over, whatever the variable says.
    CHECK(run_with("", HEAPGRAPH_CLI_WIDE, "--version").out.find("(heapgraph-wide: 64-bit node ids)") != std::string::npos);
    CHECK(run_with("", HEAPGRAPH_CLI, "--version").out.find("64-bit") == std::string::npos);
    r = run_with(kLimit, HEAPGRAPH_CLI_WIDE, "analyze " + dump + " --json " + dir + "/direct.json");
    CHECK(r.code == 0);
    CHECK(!contains(r.out, "handing"));
    CHECK(slurp(dir + "/direct.json") == slurp(dir + "/narrow.json"));
}

TEST_CASE("hand-over: diff and convert hand over too, with the same output") {
    const std::string dir = scratch("diff");
    const std::string args = "diff " + data_path("samples/steady-1.hprof.gz") + " " + data_path("samples/leakdemo.hprof");
    REQUIRE(run_with("", HEAPGRAPH_CLI, args + " --json " + dir + "/narrow.json").code == 0);
    auto r = run_with(kLimit, HEAPGRAPH_CLI, args + " --json " + dir + "/wide.json");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "handing it over to heapgraph-wide"));
    CHECK(slurp(dir + "/wide.json") == slurp(dir + "/narrow.json"));
    const std::string convert = "convert " + data_path("phd/heapdump.20100209.165721.4484.phd") + " --to classic -o ";
    REQUIRE(run_with("", HEAPGRAPH_CLI, convert + dir + "/narrow.txt").code == 0);
    REQUIRE(run_with(kLimit, HEAPGRAPH_CLI, convert + dir + "/wide.txt").code == 0);
    CHECK(slurp(dir + "/wide.txt") == slurp(dir + "/narrow.txt"));
}

TEST_CASE("hand-over: without heapgraph-wide beside it, heapgraph refuses the dump with exit 3 and writes nothing") {
    const std::string dir = scratch("alone");
    fs::copy_file(HEAPGRAPH_CLI, dir + "/heapgraph");
    const std::string dump = data_path("samples/leakdemo.hprof");
    auto r = run_with(kLimit, dir + "/heapgraph", "analyze " + dump + " --json " + dir + "/r.json");
    CHECK(r.code == 3);
    CHECK(r.out == "heapgraph: " + dump + ": holds more than 1000 objects by byte offset 0x001fffe8; heapgraph numbers "
                   "at most 1000 in one dump (32-bit node ids, docs/heap-graph.md); heapgraph-wide (64-bit node ids), "
                   "which numbers more, is not installed beside heapgraph\n");
    CHECK(!fs::exists(dir + "/r.json"));
    // Under the limit the copy needs no help.
    CHECK(run_with("HEAPGRAPH_NARROW_ID_LIMIT=40000 ", dir + "/heapgraph", "analyze " + dump + " --json " + dir + "/r.json").code == 0);
}

TEST_CASE("hand-over: estimate models 64-bit ids for a dump past the limit") {
    const std::string dump = data_path("samples/leakdemo.hprof");
    auto narrow = run_with("", HEAPGRAPH_CLI, "estimate " + dump + " 2>/dev/null");
    auto wide = run_with(kLimit, HEAPGRAPH_CLI, "estimate " + dump + " 2>/dev/null");
    REQUIRE(narrow.code == 0);
    REQUIRE(wide.code == 0);
    auto n = nlohmann::json::parse(narrow.out), w = nlohmann::json::parse(wide.out);
    CHECK(n["node_id_bits"] == 32);
    CHECK(w["node_id_bits"] == 64);
    CHECK(w["objects"] == n["objects"]);
    // 40 bytes more an object and 4 more a reference; the scans' own peaks differ a little.
    const double more = w["memory_bytes"].get<double>() - w["scan_peak_rss_bytes"].get<double>() -
                        (n["memory_bytes"].get<double>() - n["scan_peak_rss_bytes"].get<double>());
    CHECK(more == doctest::Approx(40.0 * n["objects"].get<double>() + 4.0 * n["references"].get<double>()).epsilon(0.001));
}

TEST_CASE("hand-over: the index's reports are shared, its kept graph is heapgraph-wide's own") {
    const std::string dir = scratch("index"), index = dir + "/index", dump = data_path("samples/leakdemo.hprof");
    auto r = run_with(kLimit, HEAPGRAPH_CLI, "analyze " + dump + " --index " + index + " --json " + dir + "/first.json");
    INFO(r.out);
    REQUIRE(r.code == 0);
    // The same options without the limit: the reports kept by heapgraph-wide answer.
    r = run_with("", HEAPGRAPH_CLI, "analyze " + dump + " --index " + index + " --json " + dir + "/second.json --timings");
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "reports reused from "));
    auto second = nlohmann::json::parse(slurp(dir + "/second.json"));
    second.erase("timings");
    CHECK(second == nlohmann::json::parse(slurp(dir + "/first.json")));
    // Other report options: heapgraph keeps a graph of its own beside heapgraph-wide's.
    r = run_with("", HEAPGRAPH_CLI, "analyze " + dump + " --top 7 --index " + index + " --json " + dir + "/third.json");
    REQUIRE(r.code == 0);
    int graphs = 0;
    for (const auto& entry : fs::recursive_directory_iterator(index)) graphs += entry.path().filename() == "graph";
    CHECK(graphs == 2);
    // ... and heapgraph-wide reopens its own.
    r = run_with(kLimit, HEAPGRAPH_CLI, "analyze " + dump + " --top 8 --timings --index " + index + " --json " + dir + "/fourth.json");
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "graph reopened from"));
}
#endif
