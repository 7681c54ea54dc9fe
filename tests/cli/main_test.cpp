// The heapgraph command end to end: exit codes (README "Exit codes"), one-line errors,
// the JSON report's schema fields, the objects TSV, atomic report writing.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"

using heapgraph::test::data_path;
using heapgraph::test::run;
using heapgraph::test::slurp;
using heapgraph::test::temp_dir;

TEST_CASE("cli: --version and --help exit 0, a bad option exits 1") {
    CHECK(run("--version").out.find("heapgraph 0.") == 0);
    CHECK(run("--version").code == 0);
    CHECK(run("--help").code == 0);
    CHECK(run("analyze --help").out.find("--dump-index") != std::string::npos);
    CHECK(run("analyze --no-such-flag x").code == 1);
    CHECK(run("").code == 1);
    CHECK(run("analyze " + data_path("hprof/hprof-32.bin") + " --threads 0").code == 1);
}

TEST_CASE("cli: analyze writes the v1 JSON report") {
    std::string json = temp_dir() + "/r.json";
    heapgraph::test::Run r = run("analyze " + data_path("hprof/sun_jdk6_32bit.hprof") + " --json " + json);
    CHECK(r.code == 0);
    auto report = nlohmann::json::parse(slurp(json));
    CHECK(report["schema"] == "heapgraph-report/1");
    CHECK(report["dump"]["format"] == "hprof");
    CHECK(report["dump"]["format_version"] == "JAVA PROFILE 1.0.1");
    CHECK(report["dump"]["id_size"] == 4);
    CHECK(report["dump"]["bytes"] == 2871241);
    CHECK(report["dump"]["dumps_in_file"] == 1);
    CHECK(report["dump"]["dump_index"] == 0);
    const auto& s = report["summary"];
    CHECK(s["objects"] == s["instances"].get<int>() + s["object_arrays"].get<int>() + s["primitive_arrays"].get<int>());
    CHECK(s["objects"] == 8664 + 2431 + 3822);
    CHECK(s["classes"] == 1281);
    CHECK(s["reachable_objects"].get<int>() + s["unreachable_objects"].get<int>() == s["objects"].get<int>());
    std::uint64_t bytes = 0, count = 0;
    for (const auto& row : report["histogram"]) {
        bytes += row["shallow_bytes"].get<std::uint64_t>();
        count += row["count"].get<std::uint64_t>();
    }
    CHECK(bytes == s["reachable_bytes"].get<std::uint64_t>());
    CHECK(count == s["reachable_objects"].get<std::uint64_t>() + s["reachable_classes"].get<std::uint64_t>());
    CHECK(report["histogram"][0]["shallow_bytes"] >= report["histogram"][1]["shallow_bytes"]);
    CHECK(report["warnings"].is_array());
}

TEST_CASE("cli: --json - writes to stdout and --objects-tsv lists every object") {
    std::string tsv = temp_dir() + "/objects.tsv";
    heapgraph::test::Run r = run("analyze " + data_path("hprof/hprof-32.bin") + " --json - --objects-tsv " + tsv);
    CHECK(r.code == 0);
    CHECK(r.out.find("\"schema\": \"heapgraph-report/1\"") != std::string::npos);
    std::istringstream lines(slurp(tsv));
    std::string line;
    std::getline(lines, line);
    CHECK(line == "id\tkind\tclass\tshallow_bytes\tretained_bytes\tretained_objects\tidom");
    std::size_t rows = 0, classes = 0;
    while (std::getline(lines, line)) {
        ++rows;
        classes += line.find("\tclass\t") != std::string::npos;
    }
    CHECK(rows == 2565 + 361);
    CHECK(classes == 361);
}

TEST_CASE("cli: exit codes name the problem in one line") {
    std::string dir = temp_dir();
    std::ofstream(dir + "/junk.bin") << "hello world";
    heapgraph::test::Run junk = run("analyze " + dir + "/junk.bin");
    CHECK(junk.code == 2);
    CHECK(junk.out.find("first bytes: 68 65 6c 6c 6f") != std::string::npos);
    heapgraph::test::Run missing = run("analyze " + dir + "/missing.hprof");
    CHECK(missing.code == 2);
    std::ofstream(dir + "/x.txt") << "// Version: J9VM\n";
    heapgraph::test::Run classic = run("analyze " + dir + "/x.txt");
    CHECK(classic.code == 2);  // a classic dump with no "// EOF" trailer was cut short
    CHECK(classic.out.find("heapgraph: " + dir + "/x.txt @0x") == 0);
    CHECK(classic.out.find("EOF") != std::string::npos);
    heapgraph::test::Run index = run("analyze " + data_path("hprof/hprof-32.bin") + " --dump-index 1");
    CHECK(index.code == 1);
    CHECK(index.out.find("holds 1 heap dump") != std::string::npos);
}

TEST_CASE("cli: a malformed dump exits 2 and leaves an existing report untouched") {
    std::string dir = temp_dir();
    std::vector<std::uint8_t> bytes = heapgraph::test::read_file(data_path("hprof/hprof-32.bin"));
    bytes.resize(150000);
    std::ofstream(dir + "/cut.hprof", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 150000);
    std::ofstream(dir + "/old.json") << "{\"old\": true}\n";
    heapgraph::test::Run r = run("analyze " + dir + "/cut.hprof --json " + dir + "/old.json");
    CHECK(r.code == 2);
    CHECK(r.out.find("cut.hprof @0x") != std::string::npos);
    CHECK(slurp(dir + "/old.json") == "{\"old\": true}\n");
}

TEST_CASE("cli: a report that cannot be written exits 4 and leaves no temporary file") {
    heapgraph::test::Run r = run("analyze " + data_path("hprof/hprof-32.bin") + " --json /nonexistent-dir/r.json");
    CHECK(r.code == 4);
    CHECK(r.out.find("/nonexistent-dir/r.json") != std::string::npos);
}

TEST_CASE("cli: writing a report to a device writes through it instead of replacing it") {
    heapgraph::test::Run r = run("analyze " + data_path("hprof/hprof-32.bin") + " --json /dev/null");
    CHECK(r.code == 0);
    struct stat info {};
    REQUIRE(::stat("/dev/null", &info) == 0);
    CHECK(S_ISCHR(info.st_mode));
}

TEST_CASE("cli: the report carries dominators, class loaders and retained columns") {
    std::string dir = temp_dir();
    heapgraph::test::Run r = run("analyze " + data_path("hprof/sun_jdk6_32bit.hprof") + " --top 5 --json " + dir +
                                 "/d.json --objects-tsv " + dir + "/d.tsv");
    REQUIRE(r.code == 0);
    auto report = nlohmann::json::parse(slurp(dir + "/d.json"));
    CHECK(report["summary"]["retained_bytes_total"] == report["summary"]["reachable_bytes"]);
    const auto& top = report["dominators"];
    REQUIRE(top.size() == 5);
    for (std::size_t i = 1; i < top.size(); ++i) CHECK(top[i - 1]["retained_bytes"] >= top[i]["retained_bytes"]);
    CHECK(report["class_loaders"][0]["id"] == "bootstrap");
    for (const auto& row : report["histogram"]) CHECK(row["retained_bytes"] >= row["shallow_bytes"]);
    // The DominatorTestData$R line: 24 bytes shallow, retains 224 bytes and 13 objects.
    std::string tsv = slurp(dir + "/d.tsv");
    CHECK(tsv.find("0x22e5cd28\tinstance\torg.eclipse.mat.tests.CreateSampleDump$DominatorTestData$R\t24\t224\t13\t0x22e5ac70\n") !=
          std::string::npos);
}

TEST_CASE("cli: --progress=always draws bars on stderr, auto stays quiet off a terminal") {
    std::string dump = data_path("samples/leakdemo.hprof");
    heapgraph::test::Run always = run("analyze " + dump + " --progress=always --json /dev/null");
    CHECK(always.code == 0);
    CHECK(always.out.find("decode   [") != std::string::npos);
    CHECK(always.out.find("/s  ETA ") != std::string::npos);
    heapgraph::test::Run quiet = run("analyze " + dump + " --json /dev/null");  // stderr is a pipe
    CHECK(quiet.out.empty());
    CHECK(run("analyze " + dump + " --progress=sometimes").code == 1);
}

TEST_CASE("cli: --timings prints stage times and adds them to the JSON") {
    std::string json = temp_dir() + "/t.json";
    heapgraph::test::Run r = run("analyze " + data_path("samples/leakdemo-jcmd.hprof.gz") + " --timings --json " + json);
    CHECK(r.code == 0);
    CHECK(r.out.find("stage        seconds   peak RSS    user  system     faults") != std::string::npos);
    auto report = nlohmann::json::parse(slurp(json));
    std::vector<std::string> stages;
    double cpu_seconds = 0;
    std::uint64_t faults = 0;
    for (const auto& t : report["timings"]) {
        stages.push_back(t["stage"]);
        CHECK(t["seconds"].get<double>() >= 0);
        CHECK(t["peak_rss_bytes"].get<std::uint64_t>() > 0);
        CHECK(t["user_seconds"].get<double>() >= 0);
        CHECK(t["system_seconds"].get<double>() >= 0);
        cpu_seconds += t["user_seconds"].get<double>() + t["system_seconds"].get<double>();
        faults += t["page_faults"].get<std::uint64_t>();
    }
    // Inflating and decoding a dump takes CPU and touches fresh pages, whatever the machine.
    CHECK(cpu_seconds > 0);
    CHECK(faults > 0);
    CHECK(stages == std::vector<std::string>{"inflate", "frame", "decode", "index", "nodes", "size model", "edges",
                                             "transpose", "dominators", "suspects", "path names", "values", "report", "storage"});
    CHECK(report["timings"].back()["note"].get<std::string>().find("memory (limit ") == 0);
    CHECK(report["timings"][8]["note"].get<std::string>().find("condensed to ") == 0);
}

TEST_CASE("cli: --memory-limit takes sizes, past it columns go to files under --temp-dir, which --timings says") {
    const std::string dump = data_path("hprof/sun_jdk6_32bit.hprof");
    for (const char* bad : {"0", "-1", "12Q", "1.5.2G", "nan", "1e30G", " 5"})
        CHECK_MESSAGE(run("analyze " + dump + " --json /dev/null --memory-limit '" + bad + "'").code == 1, bad);
    heapgraph::test::Run r = run("analyze " + dump + " --json /dev/null --timings --memory-limit 1 2>&1");
    CHECK(r.code == 0);
    CHECK(r.out.find("storage ") != std::string::npos);
    CHECK(r.out.find("files under ") != std::string::npos);
    r = run("analyze " + dump + " --json /dev/null --timings --memory-limit 2G 2>&1");
    CHECK(r.code == 0);
    CHECK(r.out.find("memory (limit 2.15 GB") != std::string::npos);
    CHECK(r.out.find("files under ") == std::string::npos);
}

TEST_CASE("cli: no room for column files exits 6 with one line naming the dump, the directory and the stage") {
    const std::string dump = data_path("hprof/sun_jdk6_32bit.hprof");
    const std::string missing = temp_dir() + "/no-such-dir";
    heapgraph::test::Run r = run("analyze " + dump + " --json " + temp_dir() + "/never.json --memory-limit 1 --temp-dir " +
                                 missing + " 2>&1");
    CHECK(r.code == 6);
    CHECK(r.out.find(dump + ": cannot create a ") != std::string::npos);
    CHECK(r.out.find("column file in " + missing) != std::string::npos);
    CHECK(r.out.find("(stage '") != std::string::npos);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK_FALSE(std::ifstream(temp_dir() + "/never.json"));
}
