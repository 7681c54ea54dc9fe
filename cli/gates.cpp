// The CI gates of analyze and diff (cli/gates.h).
#include "gates.h"

#include <cmath>
#include <cstdio>

namespace heapgraph::cli {

namespace {

std::string with_percent(std::int64_t bytes, std::uint64_t baseline) {
    char text[96];
    std::snprintf(text, sizeof text, "%lld bytes (%.2f%% of the baseline's reachable heap)", static_cast<long long>(bytes),
                  baseline ? 100.0 * static_cast<double>(bytes) / static_cast<double>(baseline) : 0.0);
    return text;
}

std::optional<std::string> growth_gate(const DiffArgs& args, const reports::Diff& diff, std::uint64_t base) {
    if (args.fail_on_growth.empty()) return std::nullopt;
    std::uint64_t limit = *growth_limit(args.fail_on_growth, base);
    if (diff.reachable_growth_bytes() <= static_cast<std::int64_t>(limit)) return std::nullopt;
    std::string top = diff.suspects.empty() ? std::string("no growth suspect")
                                            : "top growth suspect " + diff.suspects.front().signature + " +" +
                                                  std::to_string(diff.suspects.front().growth_bytes) + " bytes";
    return "gate --fail-on-growth " + args.fail_on_growth + ": reachable heap grew by " +
           with_percent(diff.reachable_growth_bytes(), base) + ", above " + std::to_string(limit) + " bytes; " + top;
}

// "12.5" for 12.5, as an ostream prints a double: the gates' lines quote the option as given.
std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

}  // namespace

reports::IndexedFacts gate_facts(const analysis::Findings& f, const std::vector<Warning>& warnings) {
    reports::IndexedFacts facts{.warnings = warnings, .reachable_bytes = f.retained.tree.super_root_retained_bytes};
    for (const graph::Suspect& s : f.suspects)
        facts.suspects.push_back({s.group ? std::to_string(s.instances.size()) + " instances of " + f.graph.classes[s.class_index].name
                                          : graph::node_class_name(f.graph, s.node),
                                  s.retained_bytes});
    return facts;
}

std::optional<std::string> suspect_gate(double fail_on_suspect, const reports::IndexedFacts& facts) {
    if (fail_on_suspect < 0) return std::nullopt;
    const double total = static_cast<double>(facts.reachable_bytes);
    for (const reports::IndexedSuspect& s : facts.suspects) {
        double percent = total > 0 ? 100.0 * static_cast<double>(s.retained_bytes) / total : 0;
        if (percent <= fail_on_suspect) continue;
        char share[64];
        std::snprintf(share, sizeof share, "%.2f%% of the reachable heap", percent);
        return "gate --fail-on-suspect " + number(fail_on_suspect) + "%: leak suspect " + s.what + " retains " +
               std::to_string(s.retained_bytes) + " bytes (" + share + ")";
    }
    return std::nullopt;
}

std::optional<std::uint64_t> growth_limit(const std::string& text, std::uint64_t baseline) {
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (!std::isfinite(value)) return std::nullopt;
    std::string unit = text.substr(used);
    double scale = unit == "%" ? static_cast<double>(baseline) / 100 : unit.empty() || unit == "B" ? 1
                 : unit == "KB" ? 1024.0 : unit == "MB" ? 1048576.0 : unit == "GB" ? 1073741824.0 : -1;
    if (scale < 0 || value < 0 || value * scale >= 0x1p62) return std::nullopt;  // a cast past 2^64 is undefined
    return static_cast<std::uint64_t>(value * scale);
}

std::optional<std::string> diff_gate(const DiffArgs& args, const reports::Diff& diff) {
    const std::uint64_t base = diff.series.front().retained_bytes_total;
    if (auto line = growth_gate(args, diff, base)) return line;
    if (args.fail_on_suspect < 0) return std::nullopt;
    for (const reports::GrowthSuspect& s : diff.suspects)
        if (100.0 * static_cast<double>(s.growth_bytes) > args.fail_on_suspect * static_cast<double>(base))
            return "gate --fail-on-suspect " + number(args.fail_on_suspect) + "%: growth suspect " + s.class_name +
                   " grew by " + with_percent(s.growth_bytes, base) + " through " + s.signature;
    return std::nullopt;
}

}  // namespace heapgraph::cli
