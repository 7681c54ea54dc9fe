// Progress of a long graph step (the dominators of a 30M-object heap take seconds): `done` of
// `total` units, reported from the step's own thread now and then.
#pragma once

#include <cstdint>
#include <functional>

namespace heapgraph::graph {

using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Counts the steps of a loop and reports every 2^20 of them, so the loop pays an increment
// and a test per step. `start` lets several loops share one bar.
class Ticker {
public:
    Ticker(const Progress& progress, std::uint64_t total, std::uint64_t start = 0)
        : progress_(progress), total_(total), done_(start) {}
    void step() {
        if ((++done_ & kMask) == 0 && progress_) progress_(done_ < total_ ? done_ : total_, total_);
    }
    void step(std::uint64_t count) {  // `count` steps at once
        const std::uint64_t before = done_;
        done_ += count;
        if ((before & ~kMask) != (done_ & ~kMask) && progress_) progress_(done_ < total_ ? done_ : total_, total_);
    }
    void finish() const {
        if (progress_) progress_(total_, total_);
    }

private:
    static constexpr std::uint64_t kMask = (std::uint64_t{1} << 20) - 1;
    const Progress& progress_;
    std::uint64_t total_, done_;
};

}  // namespace heapgraph::graph
