// Terminal progress bars and the --timings table. The CLI decides whether to show bars
// (--progress=auto shows them only when stderr is a terminal).
#include <chrono>
#include <cstdio>
#include <iomanip>

#include "reports.h"

namespace heapgraph::reports {

namespace {

double now_seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string human(double value, const char* unit) {
    const char* scales[] = {"", "k", "M", "G", "T"};
    int scale = 0;
    double base = std::string(unit) == "B" ? 1024 : 1000;
    while (value >= base && scale < 4) value /= base, ++scale;
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %s%s", value, scales[scale], unit);
    return text;
}

}  // namespace

void ProgressPrinter::update(const char* stage, std::uint64_t done, std::uint64_t total, const char* unit) {
    std::lock_guard lock(mutex_);
    double now = now_seconds();
    if (stage_ != stage) {
        if (!stage_.empty()) out_ << "\n";
        stage_ = stage;
        stage_started_ = now;
        last_draw_ = 0;
    }
    if (now - last_draw_ < 0.1 && done < total) return;
    last_draw_ = now;
    const int width = 30;
    double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    int filled = static_cast<int>(fraction * width);
    double elapsed = now - stage_started_;
    double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    double eta = rate > 0 ? static_cast<double>(total - std::min(done, total)) / rate : 0;
    out_ << "\r" << std::left << std::setw(8) << stage << " [" << std::string(filled, '=')
         << (filled < width ? ">" : "") << std::string(std::max(0, width - filled - 1), ' ') << "] "
         << human(static_cast<double>(done), unit) << "/" << human(static_cast<double>(total), unit) << "  "
         << human(rate, unit) << "/s  ETA " << static_cast<int>(eta) << "s   " << std::flush;
}

void ProgressPrinter::finish() {
    std::lock_guard lock(mutex_);
    if (!stage_.empty()) out_ << "\n" << std::flush;
    stage_.clear();
}

void print_timings(const std::vector<StageTiming>& timings, std::ostream& out) {
    StageTiming total;
    total.stage = "total";
    out << "stage        seconds   peak RSS    user  system     faults\n";
    auto row = [&](const StageTiming& t, bool peak) {
        out << std::left << std::setw(12) << t.stage << std::right << std::setw(8) << std::fixed << std::setprecision(2)
            << t.seconds << "   " << std::setw(9) << (peak ? human(static_cast<double>(t.peak_rss_bytes), "B") : "")
            << std::setw(8) << t.user_seconds << std::setw(8) << t.system_seconds << std::setw(11)
            << human(static_cast<double>(t.page_faults), "") << (t.note.empty() ? "" : "   " + t.note) << "\n";
    };
    for (const StageTiming& t : timings) {
        row(t, true);
        total.seconds += t.seconds, total.user_seconds += t.user_seconds, total.system_seconds += t.system_seconds;
        total.page_faults += t.page_faults;
    }
    row(total, false);
}

}  // namespace heapgraph::reports
