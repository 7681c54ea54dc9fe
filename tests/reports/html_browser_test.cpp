// The HTML report in a real browser: Debian's chromium, headless, loads pages written by the
// CLI from file://. The page's `#selftest` fragment clicks the first expandable row of the
// dominator tree and writes what happened, with every error it caught, into <pre id=selftest>;
// chromium's --dump-dom prints the DOM after the scripts ran. Console messages also reach
// chromium's stderr log ("CONSOLE"): a healthy page logs none. chromium must be installed
// (quickstart.sh does it): without it these tests fail.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "html_fixtures.h"
#include "pipeline.h"

using namespace heapgraph;

namespace {

bool have_chromium() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

std::string shell_output(const std::string& command) {
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    pclose(pipe);
    return out;
}

// Where screenshots go: next to the CLI's folder in the build tree.
std::string screenshot_dir() {
    auto dir = std::filesystem::path(HEAPGRAPH_CLI).parent_path().parent_path() / "html-report";
    std::filesystem::create_directories(dir);
    return dir.string();
}

const std::string kChromium = "chromium --headless --disable-gpu --no-sandbox --no-first-run --mute-audio "
                              "--user-data-dir=" + test::temp_dir() + "/chromium-profile ";

struct PageRun {
    nlohmann::json selftest;     // the page's own report
    std::string dom, console;    // the dumped DOM; chromium's console log lines
};

PageRun load_page(const std::string& html) {
    std::string log = html + ".log";
    PageRun page;
    page.dom = shell_output(kChromium + "--enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom 'file://" +
                            html + "#selftest' 2>'" + log + "'");
    std::smatch m;
    static const std::regex selftest(R"re(<pre id="selftest">([^<]*)</pre>)re");
    if (std::regex_search(page.dom, m, selftest)) {
        std::string text = m[1];
        for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", " "}, {"&amp;", "&"}})
            for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1))
                text.replace(at, std::strlen(from), to);
        page.selftest = nlohmann::json::parse(text, nullptr, false);
    }
    std::istringstream lines(test::slurp(log));
    for (std::string line; std::getline(lines, line);)
        if (line.find(":CONSOLE") != std::string::npos) page.console += line + "\n";
    return page;
}

void check_clean(const PageRun& page) {
    REQUIRE_MESSAGE(page.selftest.is_object(), "no #selftest result in the DOM: the page's script did not run");
    CHECK_MESSAGE(page.selftest["errors"].empty(), page.selftest["errors"].dump());
    CHECK_MESSAGE(page.console.empty(), page.console);
    CHECK(page.selftest["img_elements"] == 0);
    CHECK(page.selftest["script_elements"] == 3);
}

std::string html_of(const std::string& dump, const std::string& name) {
    std::string html = test::temp_dir() + "/" + name + ".html";
    test::Run r = test::run("analyze '" + dump + "' --json /dev/null --progress never --html '" + html + "'");
    REQUIRE_MESSAGE(r.code == 0, r.out);
    return html;
}

}  // namespace

TEST_CASE("html report in chromium: leakdemo loads cleanly, a click expands the dominator tree, a screenshot is written") {
    REQUIRE_MESSAGE(have_chromium(), "chromium is not installed (apt-get install chromium): the browser tests need it");
    auto started = std::chrono::steady_clock::now();
    std::string html = html_of(test::data_path("samples/leakdemo.hprof"), "leakdemo");
    PageRun page = load_page(html);
    check_clean(page);
    CHECK(page.selftest["expanded"] == true);
    CHECK(page.selftest["tree_rows_after"].get<int>() > page.selftest["tree_rows_before"].get<int>());
    CHECK(page.selftest["treemap_rects"].get<int>() > 10);
    CHECK(page.selftest["histogram_rows"].get<int>() > 10);
    CHECK(page.dom.find("LeakDemo$Session") != std::string::npos);
    // A step of a suspect's path opens in the inspector with its fields.
    CHECK(page.selftest["suspect_step_inspected"] == true);
    std::string png = screenshot_dir() + "/leakdemo.png";
    std::filesystem::remove(png);
    shell_output(kChromium + "--hide-scrollbars --window-size=1280,3000 --virtual-time-budget=5000 --screenshot='" + png +
                 "' 'file://" + html + "' >/dev/null 2>&1");
    REQUIRE(std::filesystem::exists(png));
    CHECK(std::filesystem::file_size(png) > 20'000);
    MESSAGE("leakdemo in chromium: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()
                                     << " s; screenshot " << png);
}

TEST_CASE("html report in chromium: payload class names show as text, never as elements") {
    REQUIRE_MESSAGE(have_chromium(), "chromium is not installed (apt-get install chromium): the browser tests need it");
    std::string dump = test::temp_dir() + "/payload.hprof";
    std::vector<std::uint8_t> bytes = test::payload_hprof();
    std::ofstream(dump, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    PageRun from_hprof = load_page(html_of(dump, "payload"));
    check_clean(from_hprof);
    CHECK(from_hprof.dom.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);

    test::PayloadGraph p = test::payload_graph();
    analysis::Findings a = test::analysis_of(p.graph, p.addresses, "payload-graph.hprof");
    std::string html = test::temp_dir() + "/payload-graph.html";
    reports::write_atomically(html, [&](std::ostream& out) { out << reports::html_report(a); });
    PageRun from_graph = load_page(html);
    check_clean(from_graph);
    CHECK(from_graph.selftest["expanded"] == true);
    CHECK(from_graph.dom.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
}

TEST_CASE("html report in chromium: the inspector opens an object of the tree, shows its fields and follows a reference") {
    REQUIRE_MESSAGE(have_chromium(), "chromium is not installed (apt-get install chromium): the browser tests need it");
    PageRun page = load_page(html_of(test::data_path("samples/contentdemo.hprof.gz"), "contentdemo-inspector"));
    check_clean(page);
    CHECK(page.selftest["inspector_open"] == true);
    CHECK(page.selftest["inspector_fields"].get<int>() > 0);
    // The page embeds fields for more objects than the JSON report lists (1,000 largest).
    CHECK(page.selftest["inspector_embedded"].get<int>() >= 1000);
    CHECK(page.selftest["report_objects"].get<int>() < page.selftest["inspector_embedded"].get<int>());
    const std::string first = page.selftest["inspector_title"].get<std::string>(), followed = page.selftest["inspector_followed"].get<std::string>();
    CHECK(!first.empty());
    CHECK(!followed.empty());
    CHECK(followed != first);
    // Threads, system properties and collections are drawn: the planted threads, both planted properties.
    CHECK(page.selftest["thread_rows"].get<int>() >= 3);
    CHECK(page.selftest["property_rows"].get<int>() >= 2);
    CHECK(page.selftest["collection_rows"].get<int>() >= 5);
    CHECK(page.dom.find("planted-worker-3") != std::string::npos);
    CHECK(page.dom.find("planted-value-42") != std::string::npos);
    CHECK(page.dom.find("at ContentDemo$Worker.descend(ContentDemo.java:163)") != std::string::npos);
}

TEST_CASE("html report in chromium: duplicate strings show the planted hostile value as text") {
    REQUIRE_MESSAGE(have_chromium(), "chromium is not installed (apt-get install chromium): the browser tests need it");
    PageRun page = load_page(html_of(test::data_path("samples/contentdemo.hprof.gz"), "contentdemo"));
    check_clean(page);
    CHECK(page.selftest["duplicate_rows"].get<int>() >= 8);  // 5 planted string groups, 3 array groups
    CHECK(page.dom.find("planted-duplicate-alpha") != std::string::npos);
    CHECK(page.dom.find("planted-utf16-caf\u00e9-\u03b2eta-\u20ac") != std::string::npos);
    CHECK(page.dom.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    // The hostile system property shows as text in its section too.
    std::size_t properties = page.dom.find("id=\"properties-table\"");
    REQUIRE(properties != std::string::npos);
    CHECK(page.dom.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;", properties) != std::string::npos);
}

TEST_CASE("html report in chromium: the page of every dump in data/ loads without errors") {
    REQUIRE_MESSAGE(have_chromium(), "chromium is not installed (apt-get install chromium): the browser tests need it");
    auto started = std::chrono::steady_clock::now();
    std::size_t pages = 0;
    for (const char* dir : {"hprof", "hprof-android", "hprof-gz", "phd", "samples"}) {
        std::vector<std::filesystem::path> dumps;
        for (const auto& entry : std::filesystem::directory_iterator(test::data_path(dir))) {
            std::string name = entry.path().filename().string();
            if (name.find(".hprof") != std::string::npos || name.ends_with(".phd") || name.ends_with(".bin"))
                dumps.push_back(entry.path());
        }
        std::sort(dumps.begin(), dumps.end());
        for (const auto& path : dumps) {
            CAPTURE(path.string());
            check_clean(load_page(html_of(path.string(), std::string(dir) + "-" + path.filename().string())));
            ++pages;
        }
    }
    CHECK(pages >= 20);
    MESSAGE(pages << " pages in chromium: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() << " s");
}
