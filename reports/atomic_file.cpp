// Reports and snapshots are written to a temporary file beside the target, then renamed over
// it: a run that fails or is killed midway never leaves a half-written file under the
// target's name, and never damages the file that was there.
#include <sys/stat.h>
#include <climits>
#include <csignal>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "reports.h"

namespace heapgraph::reports {

namespace {

// Temporary files being written, for the SIGINT/SIGTERM handler: fixed slots, because a
// handler may not allocate or lock. A writer claims a slot, copies its path in, then marks
// it used; the handler reads only used slots.
struct TempSlot {
    std::atomic<bool> claimed{false}, used{false};
    char path[PATH_MAX];
};
TempSlot g_temp_slots[16];

void on_fatal_signal(int signal) {
    for (TempSlot& slot : g_temp_slots)
        if (slot.used.load(std::memory_order_acquire)) ::unlink(slot.path);
    std::signal(signal, SIG_DFL);  // then die of the signal, as the caller expects
    std::raise(signal);
}

// Registers `path` for removal on a signal while it lives (unregistered past 16 at once).
class TempRegistration {
public:
    explicit TempRegistration(const std::string& path) {
        if (path.size() >= PATH_MAX) return;
        for (TempSlot& candidate : g_temp_slots) {
            bool expected = false;
            if (!candidate.claimed.compare_exchange_strong(expected, true, std::memory_order_acquire)) continue;
            std::memcpy(candidate.path, path.c_str(), path.size() + 1);
            candidate.used.store(true, std::memory_order_release);
            slot_ = &candidate;
            return;
        }
    }
    ~TempRegistration() {
        if (!slot_) return;
        slot_->used.store(false, std::memory_order_release);
        slot_->claimed.store(false, std::memory_order_release);
    }
    TempRegistration(const TempRegistration&) = delete;
    TempRegistration& operator=(const TempRegistration&) = delete;

private:
    TempSlot* slot_ = nullptr;
};

// A new file beside `path` with a short name (a 250-byte name plus a suffix would pass
// NAME_MAX), created with the mode a plain create would give (mkstemp makes it 0600).
std::string create_temp_beside(const std::string& path) {
    std::filesystem::path target(path);
    std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string temp = (dir / ".heapgraph-XXXXXX").string();
    int fd = ::mkstemp(temp.data());
    if (fd < 0) throw std::runtime_error(path + ": cannot create a temporary file in " + dir.string() + ": " + std::strerror(errno));
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    ::close(fd);
    return temp;
}

}  // namespace

void remove_temp_files_on_signals() {
    struct sigaction action {};
    action.sa_handler = on_fatal_signal;
    sigemptyset(&action.sa_mask);
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);
}

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
    std::string temp = create_temp_beside(path);
    TempRegistration registered(temp);
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) {
            std::remove(temp.c_str());
            throw std::runtime_error(path + ": cannot create " + temp + ": " + std::strerror(errno));
        }
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
