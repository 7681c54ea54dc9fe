#include "checks.h"

#include <cctype>

#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "pipeline.h"

namespace heapgraph::cli {

namespace {

// The same file, existing or not: by inode when both exist, else by canonical path.
bool same_file(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    std::error_code ea, eb;
    auto ca = std::filesystem::weakly_canonical(a, ea), cb = std::filesystem::weakly_canonical(b, eb);
    return !ea && !eb && ca == cb;
}

bool is_device(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode));
}

std::string mebibytes(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f MiB", static_cast<double>(bytes) / 1048576.0);
    return text;
}

// What bounded the process: the address-space limit, a cgroup's limit, the memory available.
std::string memory_budget() {
    std::string out;
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        out += "address-space limit " + mebibytes(limit.rlim_cur) + "; ";
    if (std::uint64_t cgroup = graph::cgroup_memory_max_bytes()) out += "cgroup limit " + mebibytes(cgroup) + "; ";
    const std::uint64_t available = graph::mem_available_bytes();
    return out + (available ? "MemAvailable " + mebibytes(available) : "MemAvailable unknown");
}

}  // namespace

std::optional<std::string> output_conflict(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const NamedPath& out = outputs[i];
        if (out.path.empty()) return out.option + ": an empty file name";
        for (const NamedPath& in : inputs)
            if (out.path != "-" && same_file(out.path, in.path))
                return out.option + " " + out.path + " is the input " + in.path + " (" + in.option +
                       "): refusing to overwrite it";
        for (std::size_t j = 0; j < i; ++j) {
            const NamedPath& earlier = outputs[j];
            bool both_stdout = out.path == "-" && earlier.path == "-";
            bool same = out.path != "-" && earlier.path != "-" && !is_device(out.path) && same_file(out.path, earlier.path);
            if (both_stdout || same)
                return earlier.option + " and " + out.option + " both write " + (both_stdout ? "stdout" : out.path) +
                       ": give each output its own file";
        }
    }
    return std::nullopt;
}

std::string check_finite(const std::string& text) {
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value)) return "expected a finite number, found '" + text + "'";
    return "";
}

std::string check_count(const std::string& text, unsigned long long max) {
    bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
    errno = 0;
    unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
    if (!digits || errno == ERANGE || value > max)
        return "expected a whole number from 0 to " + std::to_string(max) + ", found '" + text + "'";
    return "";
}

std::optional<std::uint64_t> parse_size(const std::string& text) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;  // stod skips spaces
    std::size_t used = 0;
    double number = 0;
    try {
        number = std::stod(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    std::string unit = text.substr(used);
    for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    static const std::pair<const char*, double> kUnits[] = {
        {"", 1}, {"B", 1}, {"K", 0x1p10}, {"KB", 0x1p10}, {"KIB", 0x1p10}, {"M", 0x1p20}, {"MB", 0x1p20}, {"MIB", 0x1p20},
        {"G", 0x1p30}, {"GB", 0x1p30}, {"GIB", 0x1p30}, {"T", 0x1p40}, {"TB", 0x1p40}, {"TIB", 0x1p40}};
    for (const auto& [name, scale] : kUnits) {
        const double bytes = number * scale;
        if (unit == name && std::isfinite(bytes) && bytes >= 1 && bytes < 0x1p63)
            return static_cast<std::uint64_t>(bytes);
    }
    return std::nullopt;
}

std::string check_size(const std::string& text) {
    return parse_size(text) ? "" : "expected a size such as 4096, 512M or 2G (at least 1 byte), found '" + text + "'";
}

std::string out_of_memory_line(const std::string& file, const std::string& stage) {
    return file + ": out of memory in stage '" + stage + "' (peak RSS " + mebibytes(peak_rss_bytes()) +
           "; memory budget: " + memory_budget() + ")";
}

}  // namespace heapgraph::cli
