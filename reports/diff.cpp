// `heapgraph diff` (docs/diff.md): per-class deltas and growth suspects over a series of
// snapshots, baseline first, in the spirit of Eclipse MAT's histogram comparison and its
// suspects2 (FindLeaksQuery2). The steps:
//   1. class deltas: histogram rows matched by class name; a class absent from a dump counts
//      zero there (new and vanished classes); rows with no change are only counted;
//   2. holders matched by signature: holders of one dump that share a signature are summed,
//      except one nested under another of the same signature (counted once);
//   3. growth = retained in the last dump - in the baseline; a growth suspect grew by more than
//      growth_threshold_percent of the baseline's reachable heap;
//   4. a suspect gives way to a child holder (its parent in the last dump) that is a suspect
//      too and grew by at least explained_ratio of its growth: the deepest holder that still
//      explains the growth is reported, as MAT's accumulation point is;
//   5. order: with 3+ dumps those that grew in every interval first; then growth desc, then
//      signature. Output depends only on the inputs.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "reports.h"

namespace heapgraph::reports {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxGrowers = 50;

struct Matched {
    std::string class_name;
    std::vector<graph::HolderStep> path;
    std::vector<std::uint64_t> retained;
    std::vector<std::uint8_t> present;
    std::set<std::string> parents;  // parent signatures in the last dump
};

std::string grouped(std::int64_t value) {
    std::string digits = std::to_string(value < 0 ? -value : value), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (value < 0 ? "-" : "") + out;
}

std::string percent_text(double part, double whole) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f%%", whole > 0 ? 100 * part / whole : 0.0);
    return text;
}

std::vector<ClassDelta> class_deltas(const std::vector<Snapshot>& series, std::uint64_t& unchanged) {
    std::map<std::string, ClassDelta> rows;
    const std::size_t n = series.size();
    for (std::size_t d = 0; d < n; ++d)
        for (const SnapshotClass& c : series[d].histogram) {
            ClassDelta& row = rows[c.name];
            if (row.present.empty()) {
                row.name = c.name;
                row.present.assign(n, 0);
                row.count.assign(n, 0), row.shallow_bytes.assign(n, 0), row.retained_bytes.assign(n, 0);
            }
            row.present[d] = 1;
            row.count[d] += c.count, row.shallow_bytes[d] += c.shallow_bytes, row.retained_bytes[d] += c.retained_bytes;
        }
    std::vector<ClassDelta> out;
    unchanged = 0;
    for (auto& [name, row] : rows) {
        bool same = true;
        for (std::size_t d = 1; d < n; ++d)
            same = same && row.present[d] == row.present[0] && row.count[d] == row.count[0] &&
                   row.shallow_bytes[d] == row.shallow_bytes[0] && row.retained_bytes[d] == row.retained_bytes[0];
        if (same) ++unchanged;
        else out.push_back(std::move(row));
    }
    auto delta = [](const std::vector<std::uint64_t>& v) { return static_cast<std::int64_t>(v.back() - v.front()); };
    std::stable_sort(out.begin(), out.end(), [&](const ClassDelta& a, const ClassDelta& b) {
        if (delta(a.shallow_bytes) != delta(b.shallow_bytes)) return delta(a.shallow_bytes) > delta(b.shallow_bytes);
        return delta(a.count) > delta(b.count);
    });
    return out;
}

std::map<std::string, Matched> match_holders(const std::vector<Snapshot>& series) {
    std::map<std::string, Matched> matched;
    const std::size_t n = series.size();
    for (std::size_t d = 0; d < n; ++d) {
        const auto& holders = series[d].holders;
        for (const SnapshotHolder& h : holders) {
            bool nested = false;  // under a holder of the same signature: already in its size
            for (std::uint32_t p = h.parent; p != graph::kNoHolder && !nested; p = holders[p].parent)
                nested = holders[p].signature == h.signature;
            if (nested) continue;
            Matched& m = matched[h.signature];
            if (m.present.empty()) {
                m.class_name = h.class_name, m.path = h.path;
                m.retained.assign(n, 0), m.present.assign(n, 0);
            }
            m.present[d] = 1;
            m.retained[d] += h.retained_bytes;
            if (d + 1 == n && h.parent != graph::kNoHolder) m.parents.insert(holders[h.parent].signature);
        }
    }
    return matched;
}

GrowthSuspect suspect_of(const std::string& signature, const Matched& m) {
    GrowthSuspect s;
    s.signature = signature, s.class_name = m.class_name, s.path = m.path;
    s.retained_bytes = m.retained, s.present = m.present;
    s.growth_bytes = static_cast<std::int64_t>(m.retained.back()) - static_cast<std::int64_t>(m.retained.front());
    s.every_interval = m.retained.size() > 1;
    for (std::size_t d = 1; d < m.retained.size(); ++d) s.every_interval = s.every_interval && m.retained[d] > m.retained[d - 1];
    return s;
}

std::string describe(const GrowthSuspect& s, const Diff& diff) {
    const double base = static_cast<double>(diff.series.front().retained_bytes_total);
    std::string series;
    for (std::size_t d = 0; d < s.retained_bytes.size(); ++d)
        series += (d ? " -> " : "") + (s.present[d] ? grouped(static_cast<std::int64_t>(s.retained_bytes[d])) : std::string("absent"));
    std::string text = s.class_name + " grew by " + grouped(s.growth_bytes) + " bytes (" +
                       percent_text(static_cast<double>(s.growth_bytes), base) + " of the baseline's reachable heap)";
    if (!s.present.front()) text += ", new since the baseline";
    if (diff.series.size() > 2 && s.every_interval) text += ", in every interval";
    text += ": " + series + " bytes over " + std::to_string(diff.series.size()) + " dumps. Held through " + s.signature + ".";
    return text;
}

}  // namespace

Diff diff_snapshots(std::vector<Snapshot> series, const DiffOptions& options) {
    Diff diff;
    diff.series = std::move(series);
    diff.options = options;
    diff.threshold_bytes = static_cast<std::uint64_t>(options.growth_threshold_percent *
                                                      static_cast<double>(diff.series.front().retained_bytes_total) / 100);
    diff.classes = class_deltas(diff.series, diff.unchanged_classes);
    std::map<std::string, Matched> matched = match_holders(diff.series);
    std::vector<GrowthSuspect> grown;
    for (const auto& [signature, m] : matched) {
        GrowthSuspect s = suspect_of(signature, m);
        if (s.growth_bytes > 0) grown.push_back(std::move(s));
    }
    auto by_growth = [](const GrowthSuspect& a, const GrowthSuspect& b) {
        if (a.growth_bytes != b.growth_bytes) return a.growth_bytes > b.growth_bytes;
        return a.signature < b.signature;
    };
    std::sort(grown.begin(), grown.end(), by_growth);
    std::map<std::string, std::int64_t> suspect_growth;
    for (const GrowthSuspect& s : grown)
        if (s.growth_bytes > static_cast<std::int64_t>(diff.threshold_bytes)) suspect_growth[s.signature] = s.growth_bytes;
    std::set<std::string> explained;  // suspects with a child suspect that explains their growth
    for (const auto& [signature, growth] : suspect_growth)
        for (const std::string& parent : matched[signature].parents) {
            auto it = suspect_growth.find(parent);
            if (it != suspect_growth.end() && parent != signature &&
                static_cast<double>(growth) >= options.explained_ratio * static_cast<double>(it->second))
                explained.insert(parent);
        }
    for (GrowthSuspect& s : grown) s.description = describe(s, diff);
    for (const GrowthSuspect& s : grown)
        if (suspect_growth.count(s.signature) && !explained.count(s.signature)) diff.suspects.push_back(s);
    if (diff.series.size() > 2)
        std::stable_partition(diff.suspects.begin(), diff.suspects.end(), [](const GrowthSuspect& s) { return s.every_interval; });
    grown.resize(std::min(grown.size(), kMaxGrowers));
    diff.growers = std::move(grown);
    return diff;
}

namespace {

Json numbers(const std::vector<std::uint64_t>& values) { return Json(values); }

Json suspect_json(const GrowthSuspect& s, const Diff& diff) {
    Json path = Json::array();
    for (const graph::HolderStep& step : s.path)
        path.push_back(Json{{"class", step.class_name}, {"field", step.via.empty() ? Json(nullptr) : Json(step.via)}});
    double base = static_cast<double>(diff.series.front().retained_bytes_total);
    return Json{{"signature", s.signature},
                {"class", s.class_name},
                {"path", std::move(path)},
                {"retained_bytes", numbers(s.retained_bytes)},
                {"present", Json(std::vector<bool>(s.present.begin(), s.present.end()))},
                {"growth_bytes", s.growth_bytes},
                {"percent_of_baseline", base > 0 ? std::round(10000.0 * static_cast<double>(s.growth_bytes) / base) / 100 : 0.0},
                {"grew_every_interval", s.every_interval},
                {"description", s.description}};
}

Json dump_json(const Snapshot& s) {
    return Json{{"source", s.source},
                {"kind", s.from_dump ? "dump" : "snapshot"},
                {"dump_path", s.dump_path},
                {"format", s.format},
                {"dump_bytes", s.dump_bytes},
                {"objects", s.objects},
                {"reachable_objects", s.reachable_objects},
                {"retained_bytes_total", s.retained_bytes_total},
                {"classes", s.classes},
                {"holders", s.holders.size()},
                {"holder_min_percent", s.holder_min_percent}};
}

}  // namespace

std::string diff_json(const Diff& diff, const std::string& tool_version) {
    Json out;
    out["schema"] = "heapgraph-diff/1";
    out["tool"] = Json{{"name", "heapgraph"}, {"version", tool_version}};
    Json dumps = Json::array();
    for (const Snapshot& s : diff.series) dumps.push_back(dump_json(s));
    out["dumps"] = std::move(dumps);
    out["reachable_growth_bytes"] = diff.reachable_growth_bytes();
    out["growth_threshold_percent"] = diff.options.growth_threshold_percent;
    out["growth_threshold_bytes"] = diff.threshold_bytes;
    Json suspects = Json::array();
    for (const GrowthSuspect& s : diff.suspects) suspects.push_back(suspect_json(s, diff));
    out["growth_suspects"] = std::move(suspects);
    Json growers = Json::array();
    for (const GrowthSuspect& s : diff.growers) growers.push_back(suspect_json(s, diff));
    out["top_growers"] = std::move(growers);
    Json classes = Json::array();
    for (const ClassDelta& c : diff.classes) {
        auto delta = [](const std::vector<std::uint64_t>& v) { return static_cast<std::int64_t>(v.back() - v.front()); };
        std::string status = !c.present.front() ? "new" : !c.present.back() ? "vanished" : "changed";
        classes.push_back(Json{{"class", c.name},
                               {"status", status},
                               {"count", numbers(c.count)},
                               {"shallow_bytes", numbers(c.shallow_bytes)},
                               {"retained_bytes", numbers(c.retained_bytes)},
                               {"count_delta", delta(c.count)},
                               {"shallow_delta", delta(c.shallow_bytes)},
                               {"retained_delta", delta(c.retained_bytes)}});
    }
    out["class_deltas"] = std::move(classes);
    out["unchanged_classes"] = diff.unchanged_classes;
    return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace heapgraph::reports
