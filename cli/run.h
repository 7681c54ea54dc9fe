// What the commands share around the libraries: writing an output, the exit code of an
// exception, warnings and gate lines on stderr (cli/run.cpp).
#pragma once

#include <functional>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "options.h"

namespace heapgraph::cli {

// The dump and the findings are deliberately never freed: returning gigabytes to the OS page
// by page takes seconds on a big dump, and the process ends right after the reports. Their
// addresses stay in this global so that LeakSanitizer sees them held, not leaked.
inline const void* volatile g_never_freed[8];  // volatile: the stores must not be optimised away
inline std::size_t g_never_freed_count = 0;
template <typename T>
T& never_freed(T* object) {
    g_never_freed[g_never_freed_count++ % std::size(g_never_freed)] = object;
    return *object;
}

// Not an exit code: the command's dump holds more objects than 32-bit node ids number, and
// main() runs the same command line with heapgraph-wide instead (hand_over).
inline constexpr int kHandOver = -1;

// "-" is stdout; anything else is written atomically.
void write_output(const std::string& path, const std::function<void(std::ostream&)>& write);
// Prints an exception from loading or analysing a dump as its one line; its exit code.
int exit_code_for(const std::exception& e, const std::string& file);
// Runs `write`; a failure to write is exit 4, running out of memory goes up to exit_code_for.
int writing(const std::function<int()>& write);
// A gate's line on stderr and exit 5, or exit 0 without one.
int gate(const std::optional<std::string>& line);
void print_warnings(const std::vector<Warning>& warnings, const std::string& prefix);
// --threads bounds the whole run, the analysis stage too (the loader's arena alone would leave
// the analysis on every core); nothing when --threads is 0. The limit is never lifted: lifting
// it at exit lets TBB start threads, which fails after an out-of-memory error.
void limit_threads(const CLI::App& app, const Args& args);
// The graph columns' memory budget and temp dir (--memory-limit, --temp-dir), process-wide.
void configure_storage(const CLI::App& app, const Args& args);
// HEAPGRAPH_NARROW_ID_LIMIT, for tests only: a small object limit for the 32-bit build, so
// that the hand-over to heapgraph-wide runs on small dumps. heapgraph-wide ignores it.
void narrow_id_limit(Args& args);
// heapgraph-wide beside this program's file, when this is the 32-bit build and it is there.
std::optional<std::string> wide_tool();
// Why exit_code_for chose kHandOver (the dump's count), for hand_over's line on stderr.
std::string& hand_over_reason();
// Runs heapgraph-wide with this command line, saying why unless `quiet`; returns only when
// it cannot (exit 3).
int hand_over(char** argv, bool quiet);

}  // namespace heapgraph::cli
