#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "reports.h"

namespace heapgraph::reports {

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
    // Devices and pipes (/dev/null, /dev/stdout, a fifo) cannot be replaced by a rename:
    // renaming over /dev/null would swap the device node for a regular file.
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
        std::ofstream out(path, std::ios::binary);
        write(out);
        out.flush();
        if (!out) throw std::runtime_error(path + ": write failed");
        return;
    }
    std::string temp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error(path + ": cannot create " + temp + ": " + std::strerror(errno));
        write(out);
        out.flush();
        if (!out) {
            std::remove(temp.c_str());
            throw std::runtime_error(path + ": write failed (disk full?)");
        }
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
        int error = errno;
        std::remove(temp.c_str());
        throw std::runtime_error(path + ": cannot rename into place: " + std::strerror(error));
    }
}

}  // namespace heapgraph::reports
