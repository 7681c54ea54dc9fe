// Reports and snapshots are written to a temporary file beside the target, then renamed over
// it: a run that fails or is killed midway never leaves a half-written file under the
// target's name, and never damages the file that was there.
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
        try {
            write(out);  // may throw midway (out of memory, a report that fails): no temp file stays
        } catch (...) {
            out.close();
            std::remove(temp.c_str());
            throw;
        }
        out.close();  // flushes; a full disk shows here at the latest
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
