// The files readers open themselves (a dump, a javacore, a snapshot): read-only and without
// blocking, because open() on a FIFO with no writer waits for ever, and only when regular.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace heapgraph {

// The file's content is nothing we recognise, or it cannot be opened.
class UnreadableDump : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An open descriptor. Throws UnreadableDump "LABELpath: is a directory, not a regular file"
// (label: "" for a dump, "--javacore " for an option's file).
int open_regular_file(const std::string& path, const std::string& label = "");
// The whole content of a small regular file, opened as above; a file of more than `limit`
// bytes is refused (UnreadableDump naming its size) before it is read.
std::string read_regular_file(const std::string& path, const std::string& label = "",
                              std::uint64_t limit = std::numeric_limits<std::uint64_t>::max());

}  // namespace heapgraph
