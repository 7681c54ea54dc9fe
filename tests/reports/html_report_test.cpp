// The HTML report (reports/html_report.cpp): dump strings never land raw in the page, the
// embedded data round-trips, and the page stays under 10 MB with a note of what it left out.
// The page in a real browser: tests/reports/html_browser_test.cpp.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "html_fixtures.h"
#include "pipeline.h"

using namespace heapgraph;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The embedded data, parsed back as the page's script does.
nlohmann::json embedded_data(const std::string& html) {
    const std::string open = "<script type=\"application/json\" id=\"heapgraph-data\">";
    std::size_t begin = html.find(open);
    REQUIRE(begin != std::string::npos);
    begin += open.size();
    std::size_t end = html.find("</script>", begin);
    REQUIRE(end != std::string::npos);
    return nlohmann::json::parse(html.substr(begin, end - begin));
}

// The page's own markup has exactly three script elements: error capture, data, drawing.
void check_no_raw_payloads(const std::string& html) {
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("<svg onload") == std::string::npos);
    CHECK(html.find("alert(1)</script>") == std::string::npos);
    CHECK(count_of(html, "<script") == 3);
    CHECK(count_of(html, "</script") == 3);
    CHECK(html.find("\u2028") == std::string::npos);
    CHECK(html.find("\u2029") == std::string::npos);
}

}  // namespace

TEST_CASE("html report: class and field names that are HTML or script payloads are escaped in an HPROF dump") {
    std::vector<std::uint8_t> bytes = test::payload_hprof();
    LoadedDump dump = load_dump_bytes(bytes, "payload.hprof", {});
    graph::Retained retained = graph::compute_retained(dump.graph, graph::RetainedOptions{});
    analysis::Findings a = test::analysis_of(dump.graph, dump.addresses, "dir/" + test::kImgPayload + ".hprof");
    std::string json = reports::json_report(a);
    REQUIRE(json.find(test::kImgPayload) != std::string::npos);  // the payloads reached the report
    std::string html = reports::html_report(a);
    check_no_raw_payloads(html);
    CHECK(html.find("<title>&lt;img src=x onerror=alert(1)&gt;.hprof") != std::string::npos);
    CHECK(html.find("\\u003cimg src=x onerror=alert(1)\\u003e") != std::string::npos);
    nlohmann::json data = embedded_data(html);
    std::vector<std::string> classes;
    for (const auto& row : data["report"]["histogram"]) classes.push_back(row["class"]);
    CHECK(std::count(classes.begin(), classes.end(), test::kImgPayload) == 1);
    CHECK(std::count(classes.begin(), classes.end(), test::kSvgPayload) == 1);
    CHECK(data["report"]["summary"] == nlohmann::json::parse(json)["summary"]);
}

TEST_CASE("html report: </script> and U+2028 in class names cannot end the data script") {
    test::PayloadGraph p = test::payload_graph();
    analysis::Findings a = test::analysis_of(p.graph, p.addresses, "heap.hprof");
    std::string html = reports::html_report(a);
    check_no_raw_payloads(html);
    CHECK(html.find("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e") != std::string::npos);
    CHECK(html.find("\\u2028") != std::string::npos);
    nlohmann::json data = embedded_data(html);
    // The tree extract: the root object, its array, the array's element, in that order.
    const auto& tree = data["tree"];
    REQUIRE(tree["nodes"].size() == 3);
    CHECK(tree["classes"][tree["nodes"][0][1].get<int>()] == test::kScriptPayload);
    CHECK(tree["classes"][tree["nodes"][1][1].get<int>()] == "line\u2028separator\u2029</script[]");
    CHECK(tree["classes"][tree["nodes"][2][1].get<int>()] == test::kImgPayload);
    CHECK(tree["nodes"][0][4] == 24 + 40 + 16);  // retained bytes of the root object
    CHECK(tree["root"]["taken"] == 1);
    CHECK(data["left_out"].empty());
}

TEST_CASE("html report: a heap with thousands of long class names stays under 10 MB and says what was left out") {
    // 20,000 classes with 900-byte names: a 20 MB JSON histogram.
    graph::HeapInput in;
    const std::uint32_t n = 20000;
    for (std::uint32_t i = 0; i < n; ++i) {
        in.classes.push_back({"com.example." + std::string(880, 'x') + std::to_string(1000000 + i), graph::kNoNode,
                              graph::kNoNode});
        in.types.push_back(graph::NodeKind::instance, i);
        in.shallow_bytes.push_back(16 + i);
        in.roots.push_back({i, 0, true});
    }
    in.root_kind_names = {"jni_global"};
    graph::HeapGraph g = graph::build_heap_graph(std::move(in));
    graph::Retained retained = graph::compute_retained(g, graph::RetainedOptions{});
    std::vector<std::uint64_t> addresses(n);
    for (std::uint32_t i = 0; i < n; ++i) addresses[i] = 0x10000 + 16 * std::uint64_t{i};
    const AddressIndex index = AddressIndex::of(addresses);
    analysis::Findings a = test::analysis_of(g, index, "wide.hprof");
    std::string json = reports::json_report(a);
    REQUIRE(json.size() > 15'000'000);
    std::string html = reports::html_report(a);
    CHECK(html.size() <= 10'000'000);
    nlohmann::json data = embedded_data(html);
    bool histogram_cut = false, tree_cut = false;
    for (const auto& cut : data["left_out"]) {
        histogram_cut |= cut["what"] == "histogram" && cut["total"] == n && cut["shown"] < n;
        tree_cut |= cut["what"] == "dominator tree" && cut["total"] == n && cut["shown"] < n;
    }
    CHECK(histogram_cut);
    CHECK(tree_cut);
    // The extract keeps the largest children of the super root, largest first.
    CHECK(data["tree"]["nodes"][0][4] == 16 + n - 1);
}

TEST_CASE("html report: the largest dump in data/ gives a page under 10 MB") {
    std::string largest;
    std::uintmax_t largest_bytes = 0;
    for (const char* dir : {"hprof", "hprof-android", "hprof-gz", "phd", "samples"})
        for (const auto& entry : std::filesystem::directory_iterator(test::data_path(dir))) {
            std::string name = entry.path().filename().string();
            bool dump = name.find(".hprof") != std::string::npos || name.ends_with(".phd") || name.ends_with(".bin");
            if (dump && entry.file_size() > largest_bytes) largest = entry.path().string(), largest_bytes = entry.file_size();
        }
    REQUIRE(!largest.empty());
    std::string html = test::temp_dir() + "/largest.html";
    test::Run r = test::run("analyze " + largest + " --json /dev/null --html " + html);
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::file_size(html) <= 10'000'000);
    CHECK(std::filesystem::file_size(html) > 100'000);
}

TEST_CASE("html report: --html to an unwritable path exits 4 and names the path") {
    test::Run r = test::run("analyze " + test::data_path("hprof/hprof-32.bin") + " --json /dev/null --html /no/such/dir/r.html");
    CHECK(r.code == 4);
    CHECK(r.out.find("/no/such/dir/r.html") != std::string::npos);
}
