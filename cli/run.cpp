// The commands' shared steps (cli/run.h).
#include "run.h"

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

}  // namespace heapgraph::cli
