#include "loader_steps.h"

namespace heapgraph {

void LoaderFrame::check_single_dump(const std::string& holder) {
    info_.dumps_in_file = 1;
    if (options_.dump_index != 0)
        throw BadRequest(info_.path + ": --dump-index " + std::to_string(options_.dump_index) + " is out of range: " +
                         holder + " holds 1 heap dump, numbered 0");
}

void LoaderFrame::check_dump_index(std::uint32_t dumps) {
    info_.dumps_in_file = dumps;
    info_.dump_index = options_.dump_index;
    if (options_.dump_index >= dumps)
        throw BadRequest(info_.path + ": --dump-index " + std::to_string(options_.dump_index) +
                         " is out of range: the file holds " + std::to_string(dumps) + " heap dump(s), numbered from 0");
}

LoadedDump LoaderFrame::finish(LoadedDump loaded) {
    clock_.stop();
    loaded.timings.insert(loaded.timings.begin(), timings_.begin(), timings_.end());
    loaded.info = std::move(info_);
    return loaded;
}

}  // namespace heapgraph
