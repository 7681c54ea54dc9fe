// write_atomically (reports/atomic_file.cpp): an interrupted write (a writer that throws
// midway, a full disk, a missing directory) leaves the existing file intact and no
// temporary file behind; reports and snapshots from the CLI go through it.
#include <doctest/doctest.h>

#include <filesystem>
#include <stdexcept>

#include "reports.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

using test::fresh_dir;

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Runs a shell command line; stdout and stderr together.
test::Run shell(const std::string& command) {
    test::Run result{0, {}};
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.out.append(buffer, n);
    int status = pclose(pipe);
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

}  // namespace

TEST_CASE("atomic file: a writer that throws midway leaves the old file and no temporary file") {
    std::string dir = fresh_dir("atomic-throw");
    std::string path = dir + "/report.json";
    write_text(path, "old report");
    CHECK_THROWS_AS(reports::write_atomically(path,
                                              [](std::ostream& out) {
                                                  out << std::string(1 << 20, 'x');  // a megabyte, then a failure
                                                  throw std::runtime_error("report failed");
                                              }),
                    std::runtime_error);
    CHECK(test::slurp(path) == "old report");
    CHECK(files_in(dir) == std::vector<std::string>{"report.json"});
}

TEST_CASE("atomic file: a directory that does not exist is an error naming the path, nothing is created") {
    std::string dir = fresh_dir("atomic-missing");
    try {
        reports::write_atomically(dir + "/no/such/report.json", [](std::ostream& out) { out << "x"; });
        FAIL("no error");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find(dir + "/no/such/report.json: cannot create") == 0);
    }
    CHECK(files_in(dir).empty());
}

TEST_CASE("atomic file: a successful write replaces the file and leaves nothing else") {
    std::string dir = fresh_dir("atomic-ok");
    std::string path = dir + "/report.json";
    write_text(path, "old report");
    reports::write_atomically(path, [](std::ostream& out) { out << "new report"; });
    CHECK(test::slurp(path) == "new report");
    CHECK(files_in(dir) == std::vector<std::string>{"report.json"});
}

TEST_CASE("atomic file: the CLI on a full disk keeps the old report and the old snapshot, with no temporary file") {
    // A file size limit makes every write past 512 bytes fail with EFBIG, as a full disk does
    // (SIGXFSZ is ignored so that the write returns the error instead of killing the process).
    std::string dir = fresh_dir("atomic-full");
    std::string report = dir + "/report.json", snapshot = dir + "/leak.snap";
    write_text(report, "old report");
    write_text(snapshot, "old snapshot");
    std::string dump = test::data_path("samples/leakdemo.hprof");
    std::string limited = "trap '' XFSZ; ulimit -f 1; " + std::string(HEAPGRAPH_CLI) + " analyze " + dump;
    test::Run json = shell(limited + " --json " + report);
    CAPTURE(json.out);
    CHECK(json.code == 4);
    CHECK(json.out.find(report + ": write failed") != std::string::npos);
    test::Run save = shell(limited + " --json /dev/null --save " + snapshot);
    CAPTURE(save.out);
    CHECK(save.code == 4);
    CHECK(test::slurp(report) == "old report");
    CHECK(test::slurp(snapshot) == "old snapshot");
    CHECK(files_in(dir) == std::vector<std::string>{"leak.snap", "report.json"});
}
