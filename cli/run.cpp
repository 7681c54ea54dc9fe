// The commands' shared steps (cli/run.h).
#include "run.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <oneapi/tbb/global_control.h>

#include "checks.h"
#include "reports.h"

namespace heapgraph::cli {

// "-" is stdout; anything else is written atomically.
void write_output(const std::string& path, const std::function<void(std::ostream&)>& write) {
    if (path != "-") return reports::write_atomically(path, write);
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("cannot write to stdout");
}

// Prints an exception from loading or analysing a dump as its one line; its exit code.
int exit_code_for(const std::exception& e, const std::string& file) {
    auto* system = dynamic_cast<const std::system_error*>(&e);  // no memory left for a worker thread
    if (dynamic_cast<const std::bad_alloc*>(&e) || (system && (system->code() == std::errc::resource_unavailable_try_again ||
                                                               system->code() == std::errc::not_enough_memory))) {
        std::cerr << "heapgraph: " << out_of_memory_line(file, current_stage()) << "\n";
        return kOutOfMemory;
    }
    if (dynamic_cast<const graph::StorageError*>(&e)) {  // out of room for columns: as out of memory
        std::cerr << "heapgraph: " << file << ": " << e.what() << " (stage '" << current_stage() << "')\n";
        return kOutOfMemory;
    }
    if (dynamic_cast<const TooManyObjects*>(&e)) {
        if (wide_tool()) return hand_over_reason() = e.what(), kHandOver;  // hand_over says it
        std::cerr << "heapgraph: " << e.what()
                  << "; heapgraph-wide (64-bit node ids), which numbers more, is not installed beside heapgraph\n";
        return kUnsupported;
    }
    std::cerr << "heapgraph: " << e.what() << "\n";
    if (dynamic_cast<const BadRequest*>(&e)) return kUsage;
    if (dynamic_cast<const UnsupportedFormat*>(&e)) return kUnsupported;
    return kBadDump;
}

// Runs `write`; a failure to write is exit 4, running out of memory goes up to exit_code_for.
int writing(const std::function<int()>& write) {
    try {
        return write();
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        std::cerr << "heapgraph: " << e.what() << "\n";
        return kOutputFailed;
    }
}

int gate(const std::optional<std::string>& line) {
    if (!line) return kOk;
    std::cerr << "heapgraph: " << *line << "\n";
    return kGateFailed;
}

void print_warnings(const std::vector<Warning>& warnings, const std::string& prefix) {
    for (const Warning& w : warnings)
        std::cerr << "heapgraph: warning: " << prefix << w.count << " " << w.code << ": " << w.message << "\n";
}

namespace {

const LoadOptions& load_options(const CLI::App& app, const Args& args) {
    return app.got_subcommand("diff")       ? args.diff.load
           : app.got_subcommand("convert")  ? args.convert.load
           : app.got_subcommand("estimate") ? args.estimate.load
                                            : args.analyze.load;
}

}  // namespace

void limit_threads(const CLI::App& app, const Args& args) {
    const unsigned threads = load_options(app, args).threads;
    if (threads != 0) never_freed(new tbb::global_control(tbb::global_control::max_allowed_parallelism, threads));
}

void configure_storage(const CLI::App& app, const Args& args) {
    const LoadOptions& load = load_options(app, args);
    graph::configure_storage({.memory_limit = load.memory_limit, .temp_dir = load.temp_dir});
}

void narrow_id_limit(Args& args) {
    const char* limit = std::getenv("HEAPGRAPH_NARROW_ID_LIMIT");
    if (!limit || graph::kNodeIdBits != 32) return;
    const std::uint64_t objects = std::min<std::uint64_t>(std::strtoull(limit, nullptr, 10), graph::kMaxNodes);
    for (LoadOptions* load : {&args.analyze.load, &args.diff.load, &args.convert.load, &args.estimate.load})
        load->limits.objects = objects;
}

std::optional<std::string> wide_tool() {
    if (graph::kNodeIdBits != 32) return std::nullopt;
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return std::nullopt;
    std::string wide = (self.parent_path() / "heapgraph-wide").string();
    if (::access(wide.c_str(), X_OK) != 0) return std::nullopt;
    return wide;
}

std::string& hand_over_reason() {
    static std::string reason;
    return reason;
}

int hand_over(char** argv, bool quiet) {
    std::optional<std::string> wide = wide_tool();
    if (!quiet) std::cerr << "heapgraph: " << hand_over_reason() << "; handing it over to heapgraph-wide (64-bit node ids)\n";
    std::cout.flush(), std::cerr.flush();
    errno = ENOENT;  // gone since exit_code_for looked
    if (wide) {
        argv[0] = wide->data();
        ::execv(wide->c_str(), argv);
    }
    std::cerr << "heapgraph: cannot run " << wide.value_or("heapgraph-wide") << ": " << std::strerror(errno) << "\n";
    return kUnsupported;
}

}  // namespace heapgraph::cli
