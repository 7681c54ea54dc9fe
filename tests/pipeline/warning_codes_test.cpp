// The warning registry (pipeline/warning_codes.h) against docs/report-schema.md's table and
// against the warnings real dumps give.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"
#include "warning_codes.h"

namespace {

using namespace heapgraph;

// The rows "| code | meaning | what it changes |" of the schema's warnings table.
std::vector<std::vector<std::string>> documented_codes() {
    std::string doc = test::slurp(std::filesystem::path(HEAPGRAPH_DATA_DIR).parent_path() / "docs/report-schema.md");
    std::istringstream in(doc.substr(doc.find("| code | meaning |")));
    std::vector<std::vector<std::string>> rows;
    std::string line;
    std::getline(in, line), std::getline(in, line);  // header, rule
    while (std::getline(in, line) && line.rfind("| ", 0) == 0) {
        std::vector<std::string> cells;
        for (std::size_t at = 2, bar; (bar = line.find(" | ", at)) != std::string::npos || at < line.size() - 2; at = bar + 3) {
            if (bar == std::string::npos) bar = line.size() - 2;
            cells.push_back(line.substr(at, bar - at));
            if (bar == line.size() - 2) break;
        }
        rows.push_back(cells);
    }
    return rows;
}

}  // namespace

TEST_CASE("warnings: docs/report-schema.md's table lists every registered code, in order, with its words") {
    auto rows = documented_codes();
    auto codes = warning_codes();
    REQUIRE(rows.size() == codes.size());
    for (std::size_t i = 0; i < codes.size(); ++i) {
        CAPTURE(codes[i].code);
        REQUIRE(rows[i].size() == 3);
        CHECK(rows[i][0] == codes[i].code);
        CHECK(rows[i][1] == codes[i].meaning);
        CHECK(rows[i][2] == codes[i].consequence);
    }
}

TEST_CASE("warnings: every code in the golden reports is registered, listed in the registry's order") {
    std::filesystem::path golden = std::filesystem::path(HEAPGRAPH_DATA_DIR).parent_path() / "tests/golden";
    int reports = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(golden)) {
        if (entry.path().extension() != ".json") continue;
        ++reports;
        auto report = nlohmann::json::parse(test::slurp(entry.path().string()));
        std::size_t last = 0;
        for (const auto& w : report["warnings"]) {
            std::size_t rank = warning_rank(w["code"].get<std::string>());
            CAPTURE(entry.path().string());
            CAPTURE(w["code"]);
            CHECK(rank < warning_codes().size());
            CHECK(rank >= last);
            last = rank;
        }
    }
    CHECK(reports > 30);
}
