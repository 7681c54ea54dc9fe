// The analysis stage: a loaded heap graph in, Findings out. Every analysis runs here, once,
// in the order that lets the graph's edges be released early (docs/pipeline.md):
//   collections, paths (need the out rows) -> dominators (release the rows) -> suspects and
//   holders -> path names (read back from the dump) -> tables (histograms, consumers ...).
// Reports (reports/) only write Findings; they call no graph algorithm.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "graph.h"
#include "pipeline.h"
#include "values.h"

namespace heapgraph::analysis {

// A group of equal java.lang.String values (analysis/content.cpp).
struct DuplicateString {
    std::string value;          // UTF-8, at most kValueChars characters
    bool value_cut = false;     // the value was longer
    std::uint64_t length = 0;   // in UTF-16 code units (String.length())
    std::uint64_t count = 0;    // String objects with this value
    std::uint64_t arrays = 0;   // distinct backing arrays among them
    std::uint64_t wasted_bytes = 0;  // all but one String and one array
    graph::NodeId example = graph::kNoNode;
};

// A group of primitive arrays with equal type, length and contents.
struct DuplicateArray {
    graph::NodeId example = graph::kNoNode;
    std::uint64_t length = 0, count = 0, wasted_bytes = 0;
    std::string first_elements;  // "[0, 7, 14, ...]"
};

// What the value reader found (empty lists and a reason where the format holds no values).
struct ContentFindings {
    bool values_read = false;
    std::string unavailable;  // why not
    std::vector<DuplicateString> duplicate_strings;  // the `top` most wasteful groups
    std::vector<DuplicateArray> duplicate_arrays;
    std::uint64_t string_groups = 0, string_wasted_bytes = 0;  // over all groups
    std::uint64_t array_groups = 0, array_wasted_bytes = 0;
    std::uint64_t split_arrays = 0;  // arrays a segment boundary cuts: not compared
};
inline constexpr std::size_t kValueChars = 200;

struct Options {
    std::size_t top = 100;           // rows of the dominator and consumer tables
    double suspect_threshold = 10;   // percent of the reachable heap
    bool keep_unreachable = false;   // MAT's -keep_unreachable_objects (PHD and classic: always)
    // What to compute: everything the reports show, or only what a snapshot needs (diff).
    bool report = true;
    bool holders = false;            // the holders a snapshot keeps (--save, diff)
    bool release_edges = true;       // free the out and in rows once the dominators are known
    std::function<void(const ProgressEvent&)> progress{};
};

// A heap graph and what the analysis needs beside it; analyse(LoadedDump&) fills it from a
// loaded dump. `name_edges` reads exact names of path edges back into `field_names` (HPROF).
struct Input {
    DumpInfo dump{};
    graph::HeapGraph& graph;
    std::span<const std::uint64_t> addresses{};  // by node id
    std::span<const graph::Edge> weak_edges{};
    graph::FieldNames* field_names = nullptr;
    std::vector<Warning> warnings{};
    std::vector<StageTiming> timings{};  // of the load, continued by the analysis
    std::function<void(std::span<const graph::PathEdge>)> name_edges{};
    // Reads field values and array contents (HPROF); unset: nothing to read them from.
    std::function<DumpValues()> read_values{};
};

struct Findings {
    DumpInfo dump{};
    const graph::HeapGraph& graph;
    std::span<const std::uint64_t> addresses{};
    std::string tool_version{};
    std::size_t top = 100;
    double suspect_threshold = 10;
    bool keep_unreachable = false;  // as used: asked for, or the format has no roots
    std::vector<Warning> warnings{};
    std::vector<StageTiming> timings{};

    graph::Summary summary{};
    graph::PathTree paths{};
    graph::Retained retained{};
    bool collections_counted = false;
    std::vector<graph::CollectionCount> collections{};
    std::vector<graph::HistogramRow> histogram{}, unreachable_histogram{};  // in and out of the tree
    std::vector<std::uint64_t> retained_by_class{};                       // by class index
    std::vector<graph::NodeId> dominators{};                              // the `top` biggest
    std::vector<graph::LoaderRow> class_loaders{};
    std::vector<graph::PackageRow> packages{};
    std::vector<graph::Suspect> suspects{};
    // Per suspect, per step of its path: the name of the edge into the step ("" unknown).
    std::vector<std::vector<std::string>> suspect_fields{};
    std::uint64_t suspects_left_out = 0;  // past SuspectOptions::max_suspects
    std::vector<graph::Holder> holders{};
    double holder_min_percent = 0;
    ContentFindings content{};
};

Findings analyse(Input input, const Options& options);
// A loaded dump: edge names are read back from it (name_edges), its timings continued.
Findings analyse(LoadedDump& dump, const Options& options);

}  // namespace heapgraph::analysis
