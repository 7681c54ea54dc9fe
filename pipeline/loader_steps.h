// The skeleton every loader (HPROF, PHD, classic text) shares around its format's decoding:
// the stage clock, the --dump-index check, decoding chunks in parallel and collecting them in
// file order through the one flow graph (ordered_flow.h), and handing back the dump with the
// loader's stages before the builder's.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ordered_flow.h"
#include "pipeline.h"
#include "take.h"

namespace heapgraph {

class LoaderFrame {
public:
    // Starts the "frame" stage.
    LoaderFrame(DumpInfo& info, const LoadOptions& options) : info_(info), options_(options), clock_(timings_) {
        clock_.start("frame");
    }

    void start(std::string stage) { clock_.start(std::move(stage)); }
    void stop() { clock_.stop(); }

    // For a format whose file holds one heap dump; `holder` names the file ("a PHD file").
    void check_single_dump(const std::string& holder);
    // For HPROF, whose file holds `dumps`.
    void check_dump_index(std::uint32_t dumps);

    void progress(std::uint64_t done, std::uint64_t total) const {
        if (options_.progress) options_.progress({"decode", done, total, "B"});
    }

    // Decodes the tasks `next()` gives (std::nullopt ends them) in parallel, at most
    // bytes_in_flight / task_bytes at a time, and hands each result to `collect` in task
    // order. The first error collect returns stops the collecting and is thrown.
    template <typename Task, typename Result, typename Next, typename Decode, typename Collect>
    void decode_in_order(Next next, std::uint64_t task_bytes, Decode decode, Collect collect) {
        std::optional<DecodeError> first_error;
        run_ordered_flow<Task, Result>(
            next, decode,
            [&](const Task& task, Result& result) {
                if (!first_error) first_error = collect(task, result);
            },
            std::max<std::uint64_t>(2, options_.bytes_in_flight / task_bytes));
        if (first_error) throw DumpError(info_.path, *first_error);
    }

    // The same over a list of tasks.
    template <typename Task, typename Result, typename Decode, typename Collect>
    void decode_in_order(const std::vector<Task>& tasks, std::uint64_t task_bytes, Decode decode, Collect collect) {
        std::size_t at = 0;
        decode_in_order<Task, Result>(
            [&]() -> std::optional<Task> {
                if (at == tasks.size()) return std::nullopt;
                return tasks[at++];
            },
            task_bytes, decode, collect);
    }

    // The dump with the loader's stages first and `info` moved in.
    LoadedDump finish(LoadedDump loaded);

private:
    DumpInfo& info_;
    const LoadOptions& options_;
    std::vector<StageTiming> timings_;
    StageClock clock_;
};

}  // namespace heapgraph
