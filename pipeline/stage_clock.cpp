#include <sys/resource.h>

#include <chrono>

#include "pipeline.h"

namespace heapgraph {

namespace {

double now_seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::uint64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

void StageClock::start(std::string stage) {
    stop();
    stage_ = std::move(stage);
    started_ = now_seconds();
}

void StageClock::stop() {
    if (stage_.empty()) return;
    out_.push_back({stage_, now_seconds() - started_, peak_rss_bytes()});
    stage_.clear();
}

}  // namespace heapgraph
