// ctest runs each doctest case by name, and CMake cuts a name at ';' (its list separator):
// a case named "a; b" became the filter "a", which matches no case, and "passed" without
// running anything. Nine cases went unrun that way; none may again.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>

#include "test_support.h"

TEST_CASE("tests: no test case name holds a semicolon, which would make ctest skip it") {
    namespace fs = std::filesystem;
    const fs::path tests = fs::path(HEAPGRAPH_DATA_DIR).parent_path() / "tests";
    const std::regex named(R"re((TEST_CASE|SUBCASE)\("([^"]*)")re");
    int cases = 0;
    for (const auto& file : fs::recursive_directory_iterator(tests)) {
        if (file.path().extension() != ".cpp") continue;
        const std::string text = heapgraph::test::slurp(file.path().string());
        for (std::sregex_iterator it(text.begin(), text.end(), named), end; it != end; ++it) {
            ++cases;
            CHECK_MESSAGE((*it)[2].str().find(';') == std::string::npos, file.path().filename().string(), ": ", (*it)[2].str());
        }
    }
    CHECK(cases > 300);
}
