#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <mutex>

#include "pipeline.h"

namespace heapgraph {

namespace {

double now_seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// The stage the process is in, for an out-of-memory message: allocation fails anywhere.
std::mutex g_stage_mutex;
std::string g_stage = "start";

void set_current_stage(const std::string& stage) {
    std::lock_guard lock(g_stage_mutex);
    g_stage = stage;
}

}  // namespace

std::string current_stage() {
    std::lock_guard lock(g_stage_mutex);
    return g_stage;
}

std::uint64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

CpuUse cpu_use() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return {seconds(usage.ru_utime), seconds(usage.ru_stime),
            static_cast<std::uint64_t>(usage.ru_minflt) + static_cast<std::uint64_t>(usage.ru_majflt)};
}

void StageClock::start(std::string stage) {
    stop();
    // The stage before freed its work arrays; those under the mmap threshold leave holes in
    // the heap that glibc keeps mapped until told: give their pages back before the next
    // stage allocates its own.
    ::malloc_trim(0);
    // Likewise the column files' pages: the next stage maps back in what it reads.
    graph::release_column_files();
    stage_ = std::move(stage);
    set_current_stage(stage_);
    started_ = now_seconds();
    cpu_at_start_ = cpu_use();
    if (progress_) progress_({stage_.c_str(), 0, 1, "steps"});
}

void StageClock::stop() {
    if (stage_.empty()) return;
    if (progress_) progress_({stage_.c_str(), 1, 1, "steps"});
    const CpuUse cpu = cpu_use();
    out_.push_back({stage_, now_seconds() - started_, peak_rss_bytes(), std::move(note_),
                    cpu.user_seconds - cpu_at_start_.user_seconds, cpu.system_seconds - cpu_at_start_.system_seconds,
                    cpu.page_faults - cpu_at_start_.page_faults});
    stage_.clear();
    note_.clear();
}

}  // namespace heapgraph
