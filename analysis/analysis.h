// The analysis stage: a loaded heap graph in, Findings out. Every analysis runs here, once,
// in the order that lets the graph's edges be released early (docs/pipeline.md):
//   collections, paths (need the out rows) -> dominators (release the rows) -> suspects and
//   holders -> path names (read back from the dump) -> tables (histograms, consumers ...).
// Reports (reports/) only write Findings; they call no graph algorithm.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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

// A frame of a thread's stack (HPROF STACK FRAME, or a javacore's "at" line).
struct ThreadFrame {
    std::string class_name{}, method{}, signature{}, source{};
    std::int32_t line = 0;  // > 0 a line; 0 none, -1 unknown, -2 compiled, -3 native (HPROF)
    std::uint64_t locals = 0;                 // objects this frame's roots name (first frame only)
    std::uint64_t locals_retained_bytes = 0;  // of those the thread alone keeps alive
};

// A thread: its thread object, fields read from it, and its stack.
struct ThreadRow {
    graph::NodeId node = graph::kNoNode;
    std::string name;
    bool name_cut = false;
    std::optional<bool> daemon;
    std::string state;                 // java.lang.Thread.State from threadStatus; "" unknown
    std::optional<std::int64_t> tid;   // Thread.tid
    std::uint64_t retained_bytes = 0;  // the thread object's, its locals hung from it (MAT)
    std::uint64_t locals = 0;          // objects its frames hold
    bool stack_known = false;          // a stack trace was found for it
    std::vector<ThreadFrame> frames;   // top first
};

struct SystemProperty {
    std::string key, value;
    bool value_cut = false;
};

// A field or an element as the inspector shows it: a value as text, or a reference.
struct ShownValue {
    std::string name;   // field name, or "[i]"
    std::string type;   // "int", "boolean", ...; "object" for a reference
    std::string value{};  // primitives as text; references: the target String's text, if one
    bool text = false;    // a reference to a String whose text `value` holds
    bool value_cut = false;
    std::uint64_t ref = 0;  // a reference's address (0: null)
    graph::NodeId ref_node = graph::kNoNode;
};

// An object of the report opened in the HTML inspector: its fields or first elements.
struct InspectedObject {
    graph::NodeId node = graph::kNoNode;
    bool read = false;         // its record was read (HPROF)
    bool in_report = false;    // one of the `top` largest or on a suspect path: in the JSON report
    std::uint64_t length = 0;  // arrays: elements
    std::vector<ShownValue> fields{};    // instances: own class's fields first (class objects: statics)
    std::vector<ShownValue> elements{};  // arrays: the first kInspectedElements
};
inline constexpr std::size_t kInspectedElements = 32;
inline constexpr std::size_t kPropertyChars = 2000;

// What the value reader found (empty lists and a reason where the format holds no values).
struct ContentFindings {
    bool values_read = false;
    std::string unavailable;  // why not
    std::vector<DuplicateString> duplicate_strings;  // the `top` most wasteful groups
    std::vector<DuplicateArray> duplicate_arrays;
    std::uint64_t string_groups = 0, string_wasted_bytes = 0;  // over all groups
    std::uint64_t array_groups = 0, array_wasted_bytes = 0;
    std::uint64_t split_arrays = 0;  // arrays a segment boundary cuts: not compared
    std::string threads_from;        // "hprof" (stack traces), "javacore", "" none
    std::vector<ThreadRow> threads;  // by retained bytes, then name
    bool properties_found = false;   // java.lang.System's props was found and read
    std::vector<SystemProperty> system_properties;  // by key
    std::uint64_t properties_skipped = 0;  // entries whose key or value is no String
    std::vector<InspectedObject> objects;  // by node
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
    // Objects whose fields the inspector gets: this many of the largest (the HTML page embeds
    // them all; the JSON report's `objects` holds the `top` largest and the suspect paths).
    std::size_t inspect = 1000;
    std::function<void(const ProgressEvent&)> progress{};
    // Called before the analysis first changes the graph it was given (frees its rows, names
    // path edges): a reader of it on another thread (the index keeping it) finishes first.
    std::function<void()> before_changes{};
};

// A heap graph and what the analysis needs beside it; analyse(LoadedDump&) fills it from a
// loaded dump. `name_edges` reads exact names of path edges back into `field_names` (HPROF).
struct Input {
    DumpInfo dump{};
    graph::HeapGraph& graph;
    NodeAddresses addresses{};  // by node id
    std::span<const graph::Edge> weak_edges{};
    graph::FieldNames* field_names = nullptr;
    std::vector<Warning> warnings{};
    std::vector<StageTiming> timings{};  // of the load, continued by the analysis
    // Names path edges; `located`: records the value pass found (pipeline.h, name_edges).
    std::function<void(std::span<const graph::PathEdge>, std::span<const RecordSpan>)> name_edges{};
    // Reads field values and array contents (HPROF); unset: nothing to read them from.
    std::function<DumpValues(const ValueRequest&)> read_values{};
    // Work read_values can have done before it is called (the value tables a decode
    // collected, read back and sorted): run beside the suspects; false when there was none.
    std::function<bool()> prepare_values{};
    // The threads a javacore lists (PHD and classic text, --javacore), for `threads`.
    std::span<const Javacore::Thread> javacore_threads{};
};

struct Findings {
    DumpInfo dump{};
    const graph::HeapGraph& graph;
    NodeAddresses addresses{};
    std::string tool_version{};
    std::size_t top = 100;
    double suspect_threshold = 10;
    bool keep_unreachable = false;  // as used: asked for, or the format has no roots
    std::vector<Warning> warnings{};
    std::vector<StageTiming> timings{};

    graph::Summary summary{};
    graph::PathTree paths{};  // empty once the paths are named (analyse): suspects and holders keep theirs
    graph::Retained retained{};
    bool collections_counted = false;
    graph::Column<graph::CollectionCount> collections{};
    // Per collection: its backing array's length (the capacity), when known.
    std::vector<std::optional<std::uint32_t>> capacities{};
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
