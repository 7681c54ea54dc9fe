// `heapgraph diff`, `analyze --save` and the gates end to end (docs/diff.md, issue 8), on the
// StepLeak samples (data/gen/StepLeak.java): three dumps of a leak growing in steps, two of a
// steady state.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "test_support.h"

using heapgraph::test::data_path;
using heapgraph::test::run;
using heapgraph::test::slurp;
using heapgraph::test::temp_dir;

namespace {

std::string sample(const std::string& name) { return data_path("samples/" + name + ".hprof.gz"); }

std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

nlohmann::json diff_json(const std::string& args) {
    std::string out = temp_dir() + "/diff.json";
    heapgraph::test::Run r = run("diff " + args + " --json " + out);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(slurp(out));
}

}  // namespace

TEST_CASE("diff: the planted holder of a stepwise leak comes first, with its path from the GC roots") {
    auto d = diff_json(sample("stepleak-1") + " " + sample("stepleak-2") + " " + sample("stepleak-3"));
    CHECK(d["schema"] == "heapgraph-diff/1");
    REQUIRE(d["dumps"].size() == 3);
    REQUIRE(!d["growth_suspects"].empty());
    const auto& top = d["growth_suspects"][0];
    CHECK(top["signature"] == "class StepLeak$EventHub -LISTENERS-> java.util.ArrayList -elementData-> java.lang.Object[]");
    CHECK(top["class"] == "java.lang.Object[]");
    CHECK(top["path"][0]["class"] == "class StepLeak$EventHub");
    CHECK(top["path"][1]["field"] == "LISTENERS");
    CHECK(top["path"][1]["class"] == "java.util.ArrayList");
    CHECK(top["grew_every_interval"] == true);
    auto retained = top["retained_bytes"].get<std::vector<std::uint64_t>>();
    REQUIRE(retained.size() == 3);
    CHECK(retained[0] < retained[1]);
    CHECK(retained[1] < retained[2]);
    // 1,500 listeners of a byte[1024] a step: over 1.5 MB each interval.
    CHECK(top["growth_bytes"].get<std::int64_t>() > 3'000'000);
    CHECK(top["description"].get<std::string>().find("in every interval") != std::string::npos);
    bool listeners = false;
    for (const auto& row : d["class_deltas"])
        if (row["class"] == "StepLeak$Listener") {
            listeners = true;
            CHECK(row["count"] == nlohmann::json::array({1500, 3000, 4500}));
            CHECK(row["count_delta"] == 3000);
        }
    CHECK(listeners);
}

TEST_CASE("diff: --fail-on-growth trips on the leak with exit 5 and one line, --quiet prints nothing else") {
    std::string dumps = sample("stepleak-1") + " " + sample("stepleak-3");
    heapgraph::test::Run r = run("diff " + dumps + " --fail-on-growth 50% --json /dev/null --quiet");
    CHECK(r.code == 5);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find("heapgraph: gate --fail-on-growth 50%: reachable heap grew by") == 0);
    CHECK(r.out.find("StepLeak$EventHub") != std::string::npos);
    CHECK(run("diff " + dumps + " --fail-on-growth 50MB --json /dev/null --quiet").code == 0);
    heapgraph::test::Run s = run("diff " + dumps + " --fail-on-suspect 20 --json /dev/null --quiet");
    CHECK(s.code == 5);
    CHECK(lines(s.out) == 1);
    CHECK(s.out.find("growth suspect java.lang.Object[] grew by") != std::string::npos);
    // Without --json, --quiet keeps the report off stdout too: the gate's line is all there is.
    heapgraph::test::Run bare = run("diff " + dumps + " --fail-on-growth 50% --quiet");
    CHECK(bare.code == 5);
    CHECK(lines(bare.out) == 1);
    CHECK(run("diff " + dumps + " --fail-on-growth 12parsecs").code == 1);
    CHECK(run("diff " + sample("stepleak-1")).code == 1);  // one input is not a diff
}

TEST_CASE("diff: two dumps of one steady state show no growth and pass the gates") {
    std::string out = temp_dir() + "/steady.json";
    heapgraph::test::Run r = run("diff " + sample("steady-1") + " " + sample("steady-2") +
                                 " --fail-on-growth 1% --fail-on-suspect 1 --quiet --json " + out);
    CHECK(r.code == 0);
    CHECK(r.out.empty());
    auto d = nlohmann::json::parse(slurp(out));
    CHECK(d["growth_suspects"].empty());
    CHECK(d["reachable_growth_bytes"].get<std::int64_t>() <= 0);
}

TEST_CASE("diff: a dump against its own snapshot shows zero growth, the snapshot is under 1% of the dump") {
    std::string snap = temp_dir() + "/stepleak-1.snap";
    REQUIRE(run("analyze " + sample("stepleak-1") + " --json /dev/null --save " + snap).code == 0);
    auto snap_bytes = std::filesystem::file_size(snap), dump_bytes = std::filesystem::file_size(sample("stepleak-1"));
    CHECK(snap_bytes * 100 <= dump_bytes);  // of the gzip file as given; 0.1% of the inflated dump
    auto d = diff_json(snap + " " + sample("stepleak-1"));
    CHECK(d["dumps"][0]["kind"] == "snapshot");
    CHECK(d["dumps"][1]["kind"] == "dump");
    CHECK(d["reachable_growth_bytes"] == 0);
    CHECK(d["growth_suspects"].empty());
    CHECK(d["top_growers"].empty());
    CHECK(d["class_deltas"].empty());
    CHECK(d["unchanged_classes"].get<int>() > 200);
    // Snapshot against snapshot, and a series mixing both, work the same way.
    auto again = diff_json(snap + " " + snap + " " + sample("stepleak-3"));
    CHECK(again["growth_suspects"][0]["path"][0]["class"] == "class StepLeak$EventHub");
}

TEST_CASE("diff: a corrupt, truncated or old-version snapshot is refused with exit 2, naming the file") {
    std::string snap = temp_dir() + "/good.snap";
    REQUIRE(run("analyze " + sample("steady-1") + " --json /dev/null --save " + snap).code == 0);
    std::string bytes = slurp(snap);
    auto write = [&](const std::string& name, const std::string& content) {
        std::string path = temp_dir() + "/" + name;
        std::ofstream(path, std::ios::binary) << content;
        return path;
    };
    std::string flipped = bytes;
    flipped[flipped.size() / 2] ^= 0x40;
    std::string old_version = bytes;
    old_version[8] = 0;  // version 0
    struct Case {
        std::string path, expected;
    } cases[] = {
        {write("flipped.snap", flipped), "checksum mismatch"},
        {write("old.snap", old_version), "format version 0, this heapgraph reads version 1 only"},
        {write("cut.snap", bytes.substr(0, bytes.size() - 10)), "truncated"},
        {write("header.snap", bytes.substr(0, 12)), "header cut short"},
    };
    for (const Case& c : cases) {
        heapgraph::test::Run r = run("diff " + c.path + " " + sample("steady-2") + " --json /dev/null");
        CHECK(r.code == 2);
        CHECK(lines(r.out) == 1);
        CHECK(r.out.find("heapgraph: " + c.path + ": not a usable heapgraph snapshot: ") == 0);
        CHECK(r.out.find(c.expected) != std::string::npos);
    }
}

TEST_CASE("diff: sun_jdk6_18 x32 against x64 runs (MAT's LeakHunter2 pair, docs/diff.md)") {
    auto d = diff_json(data_path("hprof/sun_jdk6_18_x32.hprof") + " " + data_path("hprof/sun_jdk6_18_x64.hprof") +
                       " --html " + temp_dir() + "/sun.html");
    CHECK(d["dumps"][0]["objects"] == 14850);
    CHECK(d["dumps"][1]["objects"] == 26870);
    CHECK(d["dumps"][0]["retained_bytes_total"] == 549224);
    CHECK(d["dumps"][1]["retained_bytes_total"] == 1170960);
    CHECK(d["growth_suspects"].size() == 11);
    std::string page = slurp(temp_dir() + "/sun.html");
    CHECK(page.find("<svg id=\"bars\"") != std::string::npos);
    CHECK(page.find("Content-Security-Policy") != std::string::npos);
}

TEST_CASE("analyze: --fail-on-suspect trips on a leak suspect above the percent, with one line") {
    heapgraph::test::Run r = run("analyze " + sample("threeleaks") + " --json /dev/null --quiet --fail-on-suspect 30");
    CHECK(r.code == 5);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find("heapgraph: gate --fail-on-suspect 30%: leak suspect class ThreeLeaks$SessionCache retains") == 0);
    CHECK(run("analyze " + sample("threeleaks") + " --json /dev/null --quiet --fail-on-suspect 40").code == 0);
}
