// reports/diff.cpp and reports/snapshot.cpp on hand-made snapshots: matching by signature,
// new and vanished classes, the suspect that gives way to the child explaining its growth,
// every-interval growers first, snapshot round trips, and escaping in the HTML page.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <fstream>
#include <sstream>

#include "reports.h"
#include "test_support.h"

using namespace heapgraph::reports;
using heapgraph::graph::kNoHolder;

namespace {

SnapshotHolder holder(const std::string& root_class, const std::string& field, const std::string& cls,
                      std::uint32_t parent, std::uint64_t retained) {
    SnapshotHolder h;
    h.path = {{root_class, ""}};
    if (!cls.empty()) h.path.push_back({cls, field});
    h.signature = heapgraph::graph::holder_signature(h.path, "");
    h.class_name = h.path.back().class_name;
    h.parent = parent;
    h.depth = parent == kNoHolder ? 1 : 2;
    h.retained_bytes = retained;
    return h;
}

// A heap of `total` bytes: class A's list (a holder under class A) of `list` bytes, plus `other`.
Snapshot heap(std::uint64_t total, std::uint64_t list, std::uint64_t other, bool with_b) {
    Snapshot s;
    s.source = "heap-" + std::to_string(total);
    s.retained_bytes_total = total;
    s.histogram = {{"A", 1, 16, list + 16}, {"java.util.ArrayList", 1, 24, list}};
    if (with_b) s.histogram.push_back({"B", 3, 48, 48});
    s.holders = {holder("class A", "", "", kNoHolder, list + 16), holder("class A", "list", "java.util.ArrayList", 0, list),
                 holder("class C", "", "", kNoHolder, other)};
    return s;
}

}  // namespace

TEST_CASE("diff: growth is matched by signature, the child that explains its parent's growth is reported") {
    Diff d = diff_snapshots({heap(1000, 100, 500, true), heap(2000, 900, 520, false)}, {});
    CHECK(d.threshold_bytes == 20);
    REQUIRE(d.suspects.size() == 1);  // class A gave way to its list; C grew by exactly the threshold (not more)
    CHECK(d.suspects[0].signature == "class A -list-> java.util.ArrayList");
    CHECK(d.suspects[0].growth_bytes == 800);
    CHECK(d.suspects[0].retained_bytes == std::vector<std::uint64_t>{100, 900});
    REQUIRE(d.growers.size() == 3);  // A, its list and C all grew
    CHECK(d.growers[0].signature == "class A");
    CHECK(d.reachable_growth_bytes() == 1000);
    REQUIRE(d.classes.size() == 3);
    auto json = nlohmann::json::parse(diff_json(d, "test"));
    std::map<std::string, std::string> status;
    for (const auto& row : json["class_deltas"]) status[row["class"]] = row["status"];
    CHECK(status["B"] == "vanished");
    CHECK(status["A"] == "changed");
    Diff back = diff_snapshots({heap(2000, 900, 520, false), heap(1000, 100, 500, true)}, {});
    CHECK(back.suspects.empty());
    CHECK(nlohmann::json::parse(diff_json(back, "test"))["class_deltas"][0]["status"] == "new");
}

TEST_CASE("diff: with three dumps, holders that grew in every interval come first") {
    Snapshot a = heap(1000, 100, 100, false), b = heap(1000, 200, 600, false), c = heap(1000, 300, 400, false);
    Diff d = diff_snapshots({a, b, c}, {});
    REQUIRE(d.suspects.size() == 2);
    CHECK(d.suspects[0].signature == "class A -list-> java.util.ArrayList");  // +200, every interval
    CHECK(d.suspects[0].every_interval);
    CHECK(d.suspects[1].signature == "class C");  // +300, but it shrank in the second interval
    CHECK(!d.suspects[1].every_interval);
}

TEST_CASE("snapshot: a written snapshot reads back the same, and its JSON keeps the holders' tree") {
    Snapshot s = heap(1000, 100, 500, true);
    s.dump_path = "x.hprof", s.format = "hprof", s.tool_version = "t", s.holder_min_percent = 0.5;
    s.holders[1].anchor_kind = "";
    std::string path = heapgraph::test::temp_dir() + "/round.snap";
    {
        std::ofstream out(path, std::ios::binary);
        write_snapshot(s, out);
    }
    CHECK(is_snapshot_file(path));
    CHECK(!is_snapshot_file(heapgraph::test::data_path("hprof/hprof-32.bin")));
    Snapshot back = read_snapshot(path);
    CHECK(back.source == path);
    CHECK(!back.from_dump);
    CHECK(back.retained_bytes_total == 1000);
    REQUIRE(back.histogram.size() == 3);
    CHECK(back.histogram[2].name == "B");
    REQUIRE(back.holders.size() == 3);
    CHECK(back.holders[1].signature == "class A -list-> java.util.ArrayList");
    CHECK(back.holders[1].parent == 0);
    CHECK(back.holders[2].parent == kNoHolder);
    Diff d = diff_snapshots({s, back}, {});
    CHECK(d.growers.empty());
    CHECK(d.classes.empty());
}

namespace {

// Writes `payload` as a snapshot file with a valid header and checksum, so that only the
// JSON is wrong.
std::string framed_snapshot(const std::string& payload, const std::string& name) {
    std::string path = heapgraph::test::temp_dir() + "/" + name;
    std::ofstream(path, std::ios::binary) << snapshot_file_bytes(payload);
    return path;
}

// The SnapshotError read_snapshot gives, or "" when the file reads.
std::string snapshot_error(const std::string& path) {
    try {
        read_snapshot(path);
    } catch (const SnapshotError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("snapshot: a count that is a float, negative or past 2^64 is refused by name, not cast") {
    // fuzz_snapshot found 2.88889e+38 as a count: nlohmann's get<uint64_t> cast it, which is
    // undefined behaviour. Each number must be the kind the writer writes.
    Snapshot s = heap(1000, 100, 500, true);
    s.dump_path = "x.hprof", s.format = "hprof", s.tool_version = "t", s.holder_min_percent = 0.5;
    std::string path = heapgraph::test::temp_dir() + "/good.snap";
    {
        std::ofstream out(path, std::ios::binary);
        write_snapshot(s, out);
    }
    Snapshot back = read_snapshot(path);
    CHECK(back.retained_bytes_total == 1000);
    // The payload as the writer made it, then one number changed at a time.
    std::ifstream in(path, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::uint64_t inflated = 0;  // header bytes 24..31
    for (int i = 7; i >= 0; --i) inflated = inflated << 8 | static_cast<unsigned char>(bytes[24 + i]);
    std::string text(inflated, '\0');
    uLongf text_bytes = text.size();
    REQUIRE(uncompress(reinterpret_cast<Bytef*>(text.data()), &text_bytes,
                       reinterpret_cast<const Bytef*>(bytes.data() + 32), bytes.size() - 32) == Z_OK);
    const nlohmann::json good = nlohmann::json::parse(text);
    struct Case {
        const char* pointer;
        nlohmann::json value;
        const char* found;
    };
    for (const Case& c : {Case{"/summary/retained_bytes_total", 2.88889e38, "expected a whole number, found a number"},
                          Case{"/summary/objects", -1, "expected a whole number, found a number"},
                          Case{"/histogram/0/1", 1.5, "expected a whole number, found a number"},
                          Case{"/holders/1/2", 0.5, "expected an integer, found a number"},
                          Case{"/holders/1/3", 4294967296ull, "holder depth 4294967296"},
                          Case{"/holder_min_percent", "1", "expected a number, found a string"}}) {
        CAPTURE(c.pointer);
        nlohmann::json changed = good;
        changed[nlohmann::json::json_pointer(c.pointer)] = c.value;
        std::string bad = framed_snapshot(changed.dump(), "bad.snap");
        std::string message = snapshot_error(bad);
        CHECK(message.find(bad + ": not a usable heapgraph snapshot: payload is not a version 1 snapshot: ") == 0);
        CHECK(message.find(c.found) != std::string::npos);
    }
}

TEST_CASE("snapshot: a header claiming more than its payload can inflate to is refused before the buffer is made") {
    // A valid frame of 16 payload bytes whose header claims 512 MiB inflated.
    std::string path = framed_snapshot("{\"schema\":\"x\"}", "claims.snap");
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    const std::uint64_t claim = 512u << 20;  // little-endian, as the header stores it
    file.seekp(24);
    file.write(reinterpret_cast<const char*>(&claim), 8);
    file.close();
    CHECK(snapshot_error(path).find(path + ": not a usable heapgraph snapshot: inflated size 536870912 is implausible for ") == 0);
}

TEST_CASE("diff html: dump strings cannot escape the embedded JSON") {
    Snapshot a = heap(1000, 100, 500, true), b = heap(2000, 900, 520, true);
    for (Snapshot* s : {&a, &b}) {
        s->histogram.push_back({"</script><img src=x onerror=alert(1)>", 1, 8, 8});
        s->holders[1].path[1].via = "f</script>";
        s->holders[1].signature = heapgraph::graph::holder_signature(s->holders[1].path, "");
    }
    b.histogram.back().count = 2;
    b.source = "new<&>.hprof";
    Diff d = diff_snapshots({a, b}, {});
    std::string json = diff_json(d, "t");
    std::string page = diff_html(d, json);
    CHECK(page.find("</script><img") == std::string::npos);
    CHECK(page.find("f</script>") == std::string::npos);
    CHECK(page.find("\\u003c/script\\u003e\\u003cimg") != std::string::npos);
    CHECK(page.find("<title>new&lt;&amp;&gt;.hprof") != std::string::npos);
    CHECK(page.find("innerHTML") == std::string::npos);
    CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // the SVG namespace, never fetched
}
