// Golden reports: the JSON report of every dump in data/ (each dump of a multi-dump file,
// PHD with and without its javacore, classic text converted from PHD and HPROF), compared
// byte for byte with tests/golden/, and the SHA-256 of the HTML page, objects TSV and snapshot
// of the same run. A golden changes only in a commit that says why (tests/golden/update.sh).
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "test_support.h"

namespace {

using namespace heapgraph::test;
namespace fs = std::filesystem;

const std::string kGolden = fs::path(HEAPGRAPH_DATA_DIR).parent_path().string() + "/tests/golden";

struct Entry {
    std::string name, args;
};

std::vector<Entry> manifest() {
    std::vector<Entry> entries;
    std::istringstream in(slurp(kGolden + "/manifest.txt"));
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::size_t space = line.find(' ');
        entries.push_back({line.substr(0, space), line.substr(space + 1)});
    }
    return entries;
}

// Runs every entry whose name starts with `folder`, with `extra` added to analyze's
// arguments and `env` before the command, and compares both outputs with the goldens.
void check_folder(const std::string& folder, const std::string& extra = "", const std::string& env = "") {
    std::string out = temp_dir() + "/golden-" + folder + (extra.empty() ? "" : "-extra") + (env.empty() ? "" : "-env");
    int checked = 0;
    for (const Entry& e : manifest()) {
        if (e.name.rfind(folder + "/", 0) != 0) continue;
        ++checked;
        Run r = run_command(env + kGolden + "/report.sh " + HEAPGRAPH_CLI + " " + out + " " + e.name + " " + e.args + extra + " 2>&1");
        INFO(e.name, ": ", r.out);
        REQUIRE(r.code == 0);
        for (std::string ext : {".json", ".digests"}) {
            bool same = slurp(out + "/" + e.name + ext) == slurp(kGolden + "/" + e.name + ext);
            CHECK_MESSAGE(same, "differs from its golden: diff -u " << kGolden << "/" << e.name << ext << " " << out
                                                                   << "/" << e.name << ext);
        }
    }
    CHECK(checked > 0);
}

}  // namespace

TEST_CASE("golden: every dump in data/ has a golden report") {
    std::set<std::string> names;
    for (const Entry& e : manifest()) names.insert(e.name);
    for (const char* folder : {"hprof", "hprof-android", "hprof-gz", "phd", "samples"})
        for (const auto& file : fs::directory_iterator(data_path(folder))) {
            std::string name = std::string(folder) + "/" + file.path().filename().string();
            bool dump = name.find("javacore") == std::string::npos && name.find(".txt") == std::string::npos &&
                        name.find(".md") == std::string::npos && name.find(".json") == std::string::npos;
            if (dump) CHECK_MESSAGE(names.count(name), name << " has no entry in tests/golden/manifest.txt");
        }
}

TEST_CASE("golden: HPROF reports equal their goldens") { check_folder("hprof"); }
TEST_CASE("golden: Android HPROF reports equal their goldens") { check_folder("hprof-android"); }
TEST_CASE("golden: jcmd -gz reports equal their goldens") { check_folder("hprof-gz"); }
TEST_CASE("golden: PHD reports equal their goldens") { check_folder("phd"); }
TEST_CASE("golden: sample reports equal their goldens") { check_folder("samples"); }
TEST_CASE("golden: classic text reports equal their goldens") { check_folder("classic"); }

// The same bytes whatever the backing of the graph's columns and the number of threads: a
// one-byte --memory-limit puts every column in a file under --temp-dir (graph/column.h).
TEST_CASE("golden: every report is the same with every column in a file and one thread") {
    const std::string columns = temp_dir() + "/golden-columns";
    fs::create_directories(columns);
    for (const char* folder : {"hprof", "hprof-android", "hprof-gz", "phd", "samples", "classic"})
        check_folder(folder, " --memory-limit 1 --threads 1 --temp-dir " + columns);
    // Column files are unnamed: none is left behind.
    CHECK(fs::is_empty(columns));
}

#ifdef HEAPGRAPH_CLI_WIDE
// heapgraph-wide numbers nodes with 64-bit ids: the same reports, byte for byte. A limit of
// one object makes heapgraph hand every dump over to it (convert too, for classic text);
// were the hand-over to fail, heapgraph would exit 3 and the report would be missing.
TEST_CASE("golden: every report is the same when heapgraph hands the dump over to heapgraph-wide") {
    for (const char* folder : {"hprof", "hprof-android", "hprof-gz", "phd", "samples", "classic"})
        check_folder(folder, "", "HEAPGRAPH_NARROW_ID_LIMIT=1 ");
}
#endif
