// The analysis stage (analysis.h): each analysis once, edges released as early as they can be.
#include <chrono>
#include <cstdio>

#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/task_group.h>

#include "analysis.h"
#include "content.h"
#include "objects.h"

namespace heapgraph::analysis {

namespace {

// A bar for a graph step, drawn by the caller's progress printer (none when it has none).
graph::Progress bar(const Options& options, const char* stage) {
    if (!options.progress) return {};
    return [&options, stage](std::uint64_t done, std::uint64_t total) { options.progress({stage, done, total, "objects"}); };
}

// "condensed to 5.0M of 31.4M objects (16%); step 5.09 s (numbering 2.11 s; rewrite 0.51 s, search 2.00 s,
// sums 0.44 s), 6.2M objects/s; paths 3.27 s and collections 0.75 s alongside, 0.15 s waited on": the
// nodes the general algorithm searched, the dominator step's own time (the numbering, and the
// main parts of the rest), the walks that ran beside it, and what the step spent on them
// (running one itself or waiting) before its sums.
std::string dominators_note(const graph::DominatorTree& tree, const std::string& walks) {
    const std::uint64_t reached = tree.reached;
    const double step = tree.numbering_seconds + tree.search_seconds;
    char text[320];
    std::snprintf(text, sizeof text,
                  "condensed to %.1fM of %.1fM objects (%.0f%%); step %.2f s (numbering %.2f s; rewrite %.2f s, search "
                  "%.2f s, sums %.2f s), %.1fM objects/s; %s alongside, %.2f s waited on",
                  tree.condensed_nodes / 1e6, reached / 1e6,
                  reached ? 100.0 * static_cast<double>(tree.condensed_nodes) / reached : 0.0, step, tree.numbering_seconds,
                  tree.rewrite_seconds, tree.semi_seconds, tree.sums_seconds, step > 0 ? reached / step / 1e6 : 0.0,
                  walks.c_str(), tree.waited_seconds);
    return text;
}

// Seconds `work` took: what runs beside a stage is named in that stage's note.
template <typename Work>
double seconds_of(Work&& work) {
    const auto started = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

// Walks over the out rows, beside the dominator step: the paths (the longest, so first),
// then the collections. Each releases the file-backed pages it touched once done: they are
// not read again until the suspects.
// `seconds` gets each walk's time, for the dominator stage's note.
std::vector<std::function<void()>> edge_walks(const Input& in, Findings& f, const Options& options,
                                              std::vector<graph::NodeId>& to_read, std::vector<double>& seconds) {
    seconds.assign(options.report ? 2 : 1, 0.0);
    // The paths keep the parents of the objects with referrer rows only (graph::PathParents):
    // their bits are taken here, as the dominator step may free the rows before the walk runs.
    // Without the rows every parent is kept.
    auto shared = std::make_shared<graph::NodeBits>();
    if (in.graph.in.rows() == in.graph.node_count() && in.graph.node_count() > 0)
        *shared = graph::nonempty_rows(in.graph.in, in.graph.node_count());
    std::vector<std::function<void()>> walks{[&in, &f, &seconds, shared] {
        seconds[0] = seconds_of([&] {
            f.paths = graph::shortest_path_tree(in.graph, in.weak_edges, {}, std::move(*shared));
            f.paths.release_pages();
        });
    }};
    if (options.report)
        walks.push_back([&in, &f, &to_read, &seconds] {
            seconds[1] = seconds_of([&] {
                f.collections = graph::count_collections(in.graph);
                f.collections_counted = true;
                to_read = property_nodes(in.graph);
                in.graph.types.release_pages();
            });
        });
    return walks;
}

// The walks run beside the dominator step's numbering of the nodes, its last use of the
// out rows, and beside its search (neither reads what the other writes; with one thread
// one runs after the other).
// `to_read`: objects whose records the value pass is to read, found along the out rows.
void dominators_and_walks(Input& in, Findings& f, const Options& options, StageClock& clock,
                          std::vector<graph::NodeId>& to_read) {
    clock.start("dominators");
    // PHD and classic text record no roots, so "unreachable" says nothing there: like MAT,
    // keep every object.
    f.keep_unreachable = options.keep_unreachable || f.dump.roots_inferred;
    std::vector<double> seconds;
    f.retained = graph::compute_retained(
        in.graph, {.keep_unreachable = f.keep_unreachable,
                   .release_edges = options.release_edges,
                   .beside = edge_walks(in, f, options, to_read, seconds),
                   .progress = bar(options, "dominators"),
                   .before_release = options.before_changes});
    f.paths.parent.attach_dominators(f.retained.tree.idom);
    if (options.before_changes) options.before_changes();
    // The summary and histograms read it; the index keeps the graph before it is set.
    if (in.graph.reachable.words() == 0) in.graph.reachable = std::move(f.retained.reachable);
    char walks[96];
    if (options.report)
        std::snprintf(walks, sizeof walks, "paths %.2f s and collections %.2f s", seconds[0], seconds[1]);
    else
        std::snprintf(walks, sizeof walks, "paths %.2f s", seconds[0]);
    clock.note(dominators_note(f.retained.tree, walks));
}

void find_suspects_and_holders(const Input& in, Findings& f, const Options& options) {
    if (options.report)
        f.suspects = graph::find_suspects(in.graph, f.retained, f.paths, {.threshold_percent = options.suspect_threshold},
                                          &f.suspects_left_out);
    if (options.holders) {
        graph::HolderOptions holder_options;
        f.holders = graph::select_holders(f.retained, holder_options);
        f.holder_min_percent = holder_options.min_percent;
    }
    f.retained.top_index = {};  // the suspects' only use
}

// The edges of every reported path: the suspects' paths (array slots too: "[12]") and the
// ends of the holders' paths (their array slots stay "[]").
std::vector<graph::PathEdge> reported_path_edges(const Input& in, const Findings& f) {
    std::vector<graph::NodeId> nodes;
    for (const graph::Suspect& s : f.suspects) nodes.insert(nodes.end(), s.path.begin(), s.path.end());
    std::vector<graph::PathEdge> edges = graph::path_edges(f.paths, nodes);
    for (const graph::PathEdge& e : graph::path_edges(f.paths, graph::holder_path_tails(f.paths, f.holders)))
        if (in.graph.types.kind(e.from) != graph::NodeKind::object_array) edges.push_back(e);
    return edges;
}

// The records the edges leave, for the value pass to locate (sorted, distinct).
std::vector<ObjectId> edge_sources(const Findings& f, std::span<const graph::PathEdge> edges) {
    std::vector<ObjectId> sources;
    for (const graph::PathEdge& e : edges) sources.push_back(f.addresses[e.from]);
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    return sources;
}

// Names the edges from their source records (those the value pass located are read where
// they lie; a pass over the dump finds the rest), then each path's steps.
void name_paths(Input& in, Findings& f, std::span<const graph::PathEdge> edges, std::span<const RecordSpan> located) {
    if (in.name_edges && !edges.empty()) in.name_edges(edges, located);
    static const graph::FieldNames no_names;
    const graph::FieldNames& names = in.field_names ? *in.field_names : no_names;
    for (const graph::Suspect& s : f.suspects) {
        std::vector<std::string>& fields = f.suspect_fields.emplace_back();
        for (graph::NodeId v : s.path)
            fields.push_back(f.paths.parent[v] == graph::kNoNode ? std::string()
                                                                 : graph::edge_name(in.graph, names, f.paths, v));
    }
    graph::name_holders(in.graph, f.paths, names, f.holders);
}

// "value tables read back alongside: 0.31 s".
std::string value_tables_note(double seconds) {
    char text[64];
    std::snprintf(text, sizeof text, "value tables read back alongside: %.2f s", seconds);
    return text;
}

// The value reader's pass over the dump.
DumpValues read_values(Input& in, const ValueRequest& request) {
    DumpValues values;
    if (in.read_values) values = in.read_values(request);
    else values.unavailable = "no dump to read values from";
    return values;
}

// The value pass reads the dump back (in parallel) and locates the records of the paths'
// edge sources on the way, so naming them reads those records where they lie and does not
// walk the dump a second time (2 GB BigHeap dump: a serial walk of 1.6 s beside the pass).
// Without a report there is no value pass: the naming walks the dump itself. The stage's
// note gives the value pass's own time.
void name_paths_and_read_values(Input& in, Findings& f, const Options& options, ValueRequest request,
                                DumpValues& values, StageClock& clock) {
    clock.start("path names");
    const std::vector<graph::PathEdge> edges = reported_path_edges(in, f);
    if (!options.report) return name_paths(in, f, edges, {});
    request.locate = edge_sources(f, edges);
    const double values_seconds = seconds_of([&] { values = read_values(in, request); });
    name_paths(in, f, edges, values.located);
    char note[96];
    std::snprintf(note, sizeof note, "value pass %.2f s, %llu of %llu chunks read", values_seconds,
                  static_cast<unsigned long long>(values.chunks_read), static_cast<unsigned long long>(values.chunks));
    clock.note(note);
}

// The analyses of what the value pass read. `seconds`: the duplicate check's and the
// collection capacities' own times, for the stage's note.
void analyse_contents(Input& in, Findings& f, const Options& options, const DumpValues& values,
                      const InspectedNodes& inspected, double (&seconds)[2]) {
    ContentFindings& c = f.content;
    inspect_objects(f, values, inspected, c);
    if (!values.available) {
        c.unavailable = values.unavailable;
        f.warnings.push_back({"values_unavailable", 1,
                              c.unavailable + ": duplicate strings and arrays, system properties, collection "
                                              "capacities and object fields are not computed"});
        javacore_threads(f, in.javacore_threads, c);
        return;
    }
    c.values_read = true;
    seconds[1] = seconds_of([&] { f.capacities = collection_capacities(f, values); });
    find_threads(f, values, c);
    find_system_properties(values, c);
    seconds[0] = seconds_of([&] { find_duplicates(in.graph, f.retained.in_tree, f.addresses, values, options.top, c); });
    if (c.split_arrays)
        f.warnings.push_back({"values_split_arrays", c.split_arrays,
                              "primitive arrays split by a segment boundary: their contents are not compared"});
}

// The tables the reports show, side by side: each walks the graph or the tree on its own.
void make_tables(Findings& f, const Options& options) {
    const graph::HeapGraph& g = f.graph;
    Findings& out = f;
    tbb::parallel_invoke([&] { out.summary = graph::summarize(g); },
                         [&] {
                             graph::RetainedTables tables = graph::retained_tables(g, f.retained, options.report);
                             out.retained_by_class = std::move(tables.by_class);
                             out.class_loaders = std::move(tables.loaders);
                         },
                         [&] { out.histogram = graph::class_histogram(g, f.retained.in_tree, true); },
                         [&] {
                             if (options.report)
                                 out.unreachable_histogram = graph::class_histogram(g, f.retained.in_tree, false);
                         },
                         [&] { if (options.report) out.packages = graph::retained_by_package(g, f.retained); },
                         [&] { out.dominators = graph::top_dominators(f.retained, options.top); });
}

// The tables read the graph and the dominator tree only, the content analyses the values:
// neither reads what the other writes, and each leaves a core idle in its serial parts
// (the duplicates' sorts and group sums, the tables' tree walk). The stage's note gives the
// tables' own time, and the duplicate check's and the capacities'.
void analyse_contents_and_make_tables(Input& in, Findings& f, const Options& options, const DumpValues& values,
                                      const InspectedNodes& inspected, StageClock& clock) {
    clock.start("values");
    double tables_seconds = 0, seconds[2] = {};
    tbb::parallel_invoke([&] { analyse_contents(in, f, options, values, inspected, seconds); },
                         [&] { tables_seconds = seconds_of([&] { make_tables(f, options); }); });
    char note[128];
    std::snprintf(note, sizeof note, "duplicates %.2f s, capacities %.2f s; tables alongside: %.2f s", seconds[0],
                  seconds[1], tables_seconds);
    clock.note(note);
}

// While it lives, heap blocks freed go back to the system (graph::keep_heap_blocks).
struct HeapBlocksGiven {
    HeapBlocksGiven() { graph::keep_heap_blocks(false); }
    ~HeapBlocksGiven() { graph::keep_heap_blocks(true); }
    HeapBlocksGiven(const HeapBlocksGiven&) = delete;
    HeapBlocksGiven& operator=(const HeapBlocksGiven&) = delete;
};

}  // namespace

Findings analyse(Input in, const Options& options) {
    Findings f{.dump = std::move(in.dump), .graph = in.graph, .addresses = in.addresses, .tool_version = HEAPGRAPH_VERSION};
    f.top = options.top;
    f.suspect_threshold = options.suspect_threshold;
    f.warnings = std::move(in.warnings);
    f.timings = std::move(in.timings);
    std::optional<HeapBlocksGiven> given_back;  // outlives what the block below frees at its end
    {
        StageClock clock(f.timings, options.progress);
        std::vector<graph::NodeId> to_read;
        dominators_and_walks(in, f, options, clock, to_read);
        clock.start("suspects");
        // The suspects keep one core: the value tables are read back on the other.
        double prepared_seconds = 0;
        bool prepared = false;
        tbb::task_group preparing;
        if (options.report && in.prepare_values)
            preparing.run([&] { prepared_seconds = seconds_of([&] { prepared = in.prepare_values(); }); });
        find_suspects_and_holders(in, f, options);
        InspectedNodes inspected;
        if (options.report) {
            inspected = inspected_nodes(f, options.top, options.inspect);
            to_read.insert(to_read.end(), inspected.all.begin(), inspected.all.end());
        }
        preparing.wait();
        if (prepared) clock.note(value_tables_note(prepared_seconds));
        DumpValues values;
        name_paths_and_read_values(in, f, options, value_request(f.addresses, std::move(to_read)), values, clock);
        // The suspects and holders keep their own paths, so the tree goes before the values
        // stage, the run's other peak: 281 MB on the 2 GB BigHeap dump, and 2.2 GB of column
        // files on its 8x replica while the duplicate check reads the dump back.
        f.paths = {};
        // Nor are the blocks freed from here on kept for reuse (graph/column.h; the pool gives
        // back what it kept): the values stage reads the dump back, and kept blocks would add
        // to its pages (2 GB BigHeap dump: 2.23 GB against 2.12 GB).
        given_back.emplace();
        if (options.report) {
            analyse_contents_and_make_tables(in, f, options, values, inspected, clock);
        } else {
            clock.start("tables");
            make_tables(f, options);
        }
    }
    return f;
}

Findings analyse(LoadedDump& dump, const Options& options) {
    Input in{.dump = dump.info, .graph = dump.graph, .addresses = dump.addresses, .weak_edges = dump.weak_edges,
             .field_names = &dump.field_names, .warnings = dump.warnings, .timings = std::move(dump.timings),
             .javacore_threads = dump.javacore_threads};
    in.name_edges = [&dump, &options](std::span<const graph::PathEdge> edges, std::span<const RecordSpan> located) {
        name_edges(dump, edges, options.progress, located);
    };
    in.read_values = [&dump, &options](const ValueRequest& request) { return read_values(dump, request, options.progress); };
    in.prepare_values = [&dump] { return prepare_values(dump); };
    return analyse(std::move(in), options);
}

}  // namespace heapgraph::analysis
