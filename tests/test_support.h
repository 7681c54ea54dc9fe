// Helpers shared by the tests: paths into data/, building HPROF byte arrays, loading files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "column.h"
#include "pipeline.h"

namespace heapgraph::test {

inline std::string data_path(const std::string& relative) {
    return std::string(HEAPGRAPH_DATA_DIR) + "/" + relative;
}

// A scratch directory for this test process, created on first use and removed when the
// process exits normally: ctest runs every test case as its own process, so a directory
// left behind each time fills /tmp (4,800 of them, 22 GB, after a few days of runs).
// HEAPGRAPH_KEEP_TEST_FILES=1 keeps it, to look at after a failure.
struct ScratchDir {
    std::string path;
    ~ScratchDir() {
        if (std::getenv("HEAPGRAPH_KEEP_TEST_FILES")) return;
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

inline std::string temp_dir() {
    static const ScratchDir dir{[] {
        auto path = std::filesystem::temp_directory_path() / ("heapgraph-tests-" + std::to_string(::getpid()));
        std::filesystem::create_directories(path);
        return path.string();
    }()};
    return dir.path;
}

// An empty scratch directory `name` under temp_dir(), emptied if a case before left one.
inline std::string fresh_dir(const std::string& name) {
    const std::string dir = temp_dir() + "/" + name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// `bytes` written to `name` under temp_dir(); its path.
inline std::string write_temp(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::string path = temp_dir() + "/" + name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
}

// An object id as the HPROF tests write it: with 8-byte ids it has bits set above its low 4
// bytes, so a decoder reading too few bytes is caught.
inline ObjectId wide(std::uint32_t id_size, ObjectId low) { return id_size == 8 ? 0x00007FA100000000ULL | low : low; }

inline std::vector<std::uint8_t> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Big-endian byte builder for fixtures: b.u4(7).id(0x1000)...
struct ByteBuilder {
    std::vector<std::uint8_t> bytes;
    std::uint32_t id_size = 8;

    ByteBuilder& u(std::uint64_t value, int width) {
        for (int i = width - 1; i >= 0; --i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
        return *this;
    }
    ByteBuilder& u1(std::uint64_t v) { return u(v, 1); }
    ByteBuilder& u2(std::uint64_t v) { return u(v, 2); }
    ByteBuilder& u4(std::uint64_t v) { return u(v, 4); }
    ByteBuilder& u8(std::uint64_t v) { return u(v, 8); }
    ByteBuilder& id(std::uint64_t v) { return u(v, static_cast<int>(id_size)); }
    ByteBuilder& text(const std::string& s) {
        bytes.insert(bytes.end(), s.begin(), s.end());
        return *this;
    }
    std::size_t size() const { return bytes.size(); }
};

// Runs the heapgraph binary with `args` (a shell fragment); stdout and stderr together.
struct Run {
    int code;
    std::string out;  // stdout and stderr
};

// Runs a shell command line; its output as the command sends it.
inline Run run_command(const std::string& command) {
    Run result{0, {}};
    FILE* pipe = popen(command.c_str(), "r");
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) result.out.append(buffer, n);
    int status = pclose(pipe);
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

inline Run run(const std::string& args) {
    // stderr joins stdout first, so an `args` that redirects stderr itself (2>/dev/null) wins.
    return run_command(std::string(HEAPGRAPH_CLI) + " 2>&1 " + args);
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The error loading `bytes` gives, or "" when they load (and, with `dominators`, get their
// dominator tree too: a reader that accepts bad bytes hands the graph whatever they claim).
inline std::string load_error(Bytes bytes, const std::string& name, const LoadOptions& options = {},
                              bool dominators = false) {
    try {
        LoadedDump dump = load_dump_bytes(bytes, name, options);
        if (dominators) (void)graph::compute_retained(dump.graph, {.keep_unreachable = dump.info.roots_inferred});
        return "";
    } catch (const DumpError& e) {
        return e.what();
    } catch (const UnreadableDump& e) {
        return e.what();
    }
}

// Reads a "VmRSS:"-style line of /proc/self/status, in bytes.
inline std::uint64_t status_bytes(const std::string& key) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
    return 0;
}

// How far this process's resident memory rises above where it was while `load` runs: the
// high-water mark is reset first (/proc/self/clear_refs, "5"). In-process, because a forked
// child's ru_maxrss starts at the size of its parent.
template <typename Load>
inline std::uint64_t peak_rss_increase(Load&& load) {
    std::ofstream("/proc/self/clear_refs") << "5";
    const std::uint64_t before = status_bytes("VmRSS:");
    load();
    const std::uint64_t peak = status_bytes("VmHWM:");
    return peak > before ? peak - before : 0;
}

// The column budget is process-wide: a test sets its own and puts the default back.
struct StorageBudget {
    explicit StorageBudget(std::uint64_t limit, std::string dir = "") {
        graph::configure_storage({limit, std::move(dir)});
    }
    ~StorageBudget() { graph::configure_storage({}); }
    StorageBudget(const StorageBudget&) = delete;
    StorageBudget& operator=(const StorageBudget&) = delete;
};

}  // namespace heapgraph::test
