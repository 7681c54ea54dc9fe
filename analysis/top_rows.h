// The first `top` rows of a stream by a strict order, kept as the rows go by: never more
// than about twice `top` at once. A dump where millions of collections or duplicate groups
// each make a row then costs the rows shown, not a row for each.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace heapgraph::analysis {

template <typename Row, typename Less>
class TopRows {
public:
    TopRows(std::size_t top, Less less) : top_(top), less_(less) {}

    void add(Row row) {
        rows_.push_back(std::move(row));
        if (rows_.size() >= 2 * top_ + 64) keep_top();
    }
    // The kept rows, first by the order. The result depends on the rows and the order
    // alone, since the order is strict: not on when the trims happened.
    std::vector<Row> take() {
        keep_top();
        std::sort(rows_.begin(), rows_.end(), less_);
        return std::move(rows_);
    }

private:
    void keep_top() {
        if (rows_.size() <= top_) return;
        const auto nth = rows_.begin() + static_cast<std::ptrdiff_t>(top_);
        std::nth_element(rows_.begin(), nth, rows_.end(), less_);
        rows_.erase(nth, rows_.end());
    }

    std::size_t top_;
    Less less_;
    std::vector<Row> rows_;
};

}  // namespace heapgraph::analysis
