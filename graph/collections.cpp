// Collection sizes from the shape of the heap graph, as Eclipse MAT counts them when it has no
// field values (IBM PHD dumps). MAT's sources: org.eclipse.mat.internal.collectionextract,
// KnownCollectionInfo (which class gets which extractor), HashedMapCollectionExtractorBase
// (getMapSize, resolveNextSameField), HashMapCollectionExtractor (getBackingArray),
// ConcurrentHashMapCollectionExtractor, TreeMapCollectionExtractor, ExtractionUtils
// (followOnlyNonArrayOutgoingReference, getOnlyArrayField). Our graph keeps no field names or
// values for any format, so the same rule serves HPROF, where MAT reads the `size` fields.
//
// A collection's class picks a rule: its own name, else the nearest super class with a rule
// (LinkedHashMap counts as HashMap, Properties as Hashtable, Stack as Vector, a user's
// subclass as its JDK parent). The super class is the class object's edge after its type
// edge (docs/heap-graph.md). The rules, with "targets" meaning out-edges that are not to
// class objects:
//
//   1. Holder. HashSet, LinkedHashSet, TreeSet and jar.Attributes keep their data in one
//      inner map: follow the only instance target (MAT's "map.table": one hop per '.').
//   2. hashed (HashMap, Hashtable, WeakHashMap, ThreadLocalMap, CHM$Segment, Java 8 CHM):
//      the table is the holder's only object array (several: the one whose class ends in
//      Entry[], Node[] or Segment[]; none: the map is empty). Each table slot starts a walk
//      along targets of the same class as the node walked from, counting each node once
//      across the whole map: the `next` chains, and LinkedHashMap's before/after links.
//      Slots that hold java.lang.Object are skipped, as in MAT.
//   3. A sentinel the holder points to is not an entry: the Java 6/7 LinkedHashMap header
//      and LinkedList header. It is the holder's single edge to its class, and its own
//      targets are all of its class (no key, no value). MAT's field-based count never meets
//      it; its structural walk would count it (its own comment on the header is commented
//      out), which is why LinkedHashMap would read 46 instead of 45.
//   4. Java 6 ConcurrentHashMap: when the table's elements are Segments, the size is the sum
//      of the segments' sizes, each walked on its own (MAT). A Java 8 TreeBin slot walks its
//      TreeNodes.
//   5. tree (TreeMap): the root is the holder's only target whose class name ends in
//      "$Entry"; the size is the number of entries reached from it along same-class links
//      (left, right, parent). MAT's field-less code finds the root the same way but gives up
//      when the map has any other instance field set (comparator, entrySet); we do not.
//   6. array (ArrayList, Vector, ArrayDeque, PriorityQueue, CopyOnWriteArrayList and, one
//      hop in, CopyOnWriteArraySet): the
//      non-null slots of the only object array, MAT's fallback when `size` is unknown. A list
//      that holds nulls counts fewer entries than its `size`.
//   7. linked (LinkedList): the same-class nodes reached from the holder's node targets
//      ($Entry, $Node, $Link), minus a sentinel (rule 3).
//
// Not done: IdentityHashMap (keys and values share one array and our edges drop null slots,
// so pairs cannot be told apart). Capacities: the graph keeps no array lengths, so the walk
// names the backing array (CollectionCount::backing) and the value reader gives its length.
#include "graph.h"
#include "node_bits.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace heapgraph::graph {

namespace {

struct KnownCollection {
    const char* name;
    CollectionShape shape;
    std::uint8_t hops = 0;      // rule 1: inner maps to follow first
    bool segments = false;      // rule 4
    bool inner_chm = false;     // Java 9+ Properties: the entries live in a CHM field
};

// Index 0 is "no rule". Aliases below map classes to these rows when no super class is known.
constexpr std::array<KnownCollection, 19> kKnown{{
    {"", CollectionShape::none},
    {"java.util.HashMap", CollectionShape::hashed},
    {"java.util.Hashtable", CollectionShape::hashed},
    {"java.util.Properties", CollectionShape::hashed, 0, false, true},
    {"java.util.WeakHashMap", CollectionShape::hashed},
    {"java.lang.ThreadLocal$ThreadLocalMap", CollectionShape::hashed},
    {"java.util.concurrent.ConcurrentHashMap$Segment", CollectionShape::hashed},
    {"java.util.concurrent.ConcurrentHashMap", CollectionShape::hashed, 0, true},
    {"java.util.HashSet", CollectionShape::hashed, 1},
    {"java.util.jar.Attributes", CollectionShape::hashed, 1},
    {"java.util.TreeMap", CollectionShape::tree},
    {"java.util.TreeSet", CollectionShape::tree, 1},
    {"java.util.ArrayList", CollectionShape::array},
    {"java.util.Vector", CollectionShape::array},
    {"java.util.ArrayDeque", CollectionShape::array},
    {"java.util.PriorityQueue", CollectionShape::array},
    {"java.util.LinkedList", CollectionShape::linked},
    {"java.util.concurrent.CopyOnWriteArrayList", CollectionShape::array},
    {"java.util.concurrent.CopyOnWriteArraySet", CollectionShape::array, 1},
}};
constexpr std::uint8_t kSegmentRule = 6, kChmRule = 7;
static_assert(std::string_view(kKnown[kSegmentRule].name) == "java.util.concurrent.ConcurrentHashMap$Segment");
static_assert(std::string_view(kKnown[kChmRule].name) == "java.util.concurrent.ConcurrentHashMap");

// Classes that inherit a rule, for dumps that name no super class (some PHDs).
constexpr std::array<std::pair<const char*, const char*>, 3> kAliases{{
    {"java.util.LinkedHashMap", "java.util.HashMap"},
    {"java.util.LinkedHashSet", "java.util.HashSet"},
    {"java.util.Stack", "java.util.Vector"},
}};

std::uint8_t rule_of_name(std::string_view name) {
    for (const auto& [alias, target] : kAliases)
        if (name == alias) name = target;
    for (std::uint8_t r = 1; r < kKnown.size(); ++r)
        if (name == kKnown[r].name) return r;
    return 0;
}

bool ends_with_any(std::string_view name, std::initializer_list<std::string_view> suffixes) {
    return std::any_of(suffixes.begin(), suffixes.end(), [&](std::string_view s) { return name.ends_with(s); });
}

constexpr NodeId kAmbiguous = kSuperRoot;  // more than one candidate: size unknown

}  // namespace

class CollectionSizer::Walker {
public:
    explicit Walker(const HeapGraph& graph);
    std::uint8_t rule(NodeId v) const;
    CollectionShape shape(NodeId v) const;
    std::optional<std::uint64_t> size(NodeId v);

    std::optional<std::uint64_t> size_as(NodeId v, std::uint8_t rule);
    std::optional<std::uint64_t> hashed_size(NodeId holder, bool segments, bool fallback_to_chm);
    std::optional<std::uint64_t> table_size(NodeId holder, NodeId table);
    std::optional<std::uint64_t> tree_size(NodeId holder);
    std::optional<std::uint64_t> array_size(NodeId holder);
    std::uint64_t non_null_slots(NodeId array) const;
    std::uint64_t linked_size(NodeId holder);
    std::uint64_t count_same_class(std::span<const NodeId> starts);
    bool sentinel(NodeId holder, NodeId v) const;
    NodeId inner_collection(NodeId v) const;
    void mark(NodeId v);
    bool marked(NodeId v) const { return seen_.test(v); }
    void clear_marks();

    const HeapGraph& graph_;
    std::vector<std::uint8_t> rule_;  // per class index: index into the known classes, 0 none
    NodeBits seen_;  // cleared through touched_
    std::vector<NodeId> touched_, extra_, starts_;
    BackingArray backing_;  // of the last size()

    // A table or array shape that has no array yet: no entries, capacity 0.
    std::uint64_t no_array() {
        backing_.none = true;
        return 0;
    }
};

CollectionSizer::Walker::Walker(const HeapGraph& graph)
    : graph_(graph), rule_(graph.classes.size(), 0), seen_(graph.node_count()) {
    std::unordered_map<NodeId, std::uint32_t> class_of_object;
    for (std::uint32_t c = 0; c < graph.classes.size(); ++c)
        if (graph.classes[c].node != kNoNode) class_of_object.emplace(graph.classes[c].node, c);
    // The super class: the class object's first target after its type (java.lang.Class).
    constexpr std::uint32_t kNoClass = 0xFFFFFFFFu;
    auto super_of = [&](std::uint32_t c) -> std::uint32_t {
        NodeId node = graph.classes[c].node;
        if (node == kNoNode || graph.out.empty() || graph.classes[c].name == "java.lang.Object") return kNoClass;
        std::span<const NodeId> row = graph.out.of(node);
        std::size_t i = !row.empty() && row[0] == graph.classes[graph.types.class_index(node)].node;
        if (i >= row.size() || graph.types.kind(row[i]) != NodeKind::class_object) return kNoClass;
        auto found = class_of_object.find(row[i]);
        return found == class_of_object.end() ? kNoClass : found->second;
    };
    for (std::uint32_t c = 0; c < graph.classes.size(); ++c) {
        std::uint32_t k = c;
        for (int depth = 0; depth < 64 && k != kNoClass; ++depth) {  // bounded: a broken chain may loop
            if ((rule_[c] = rule_of_name(graph.classes[k].name))) break;
            std::uint32_t up = super_of(k);
            if (up == k) break;
            k = up;
        }
    }
}

std::uint8_t CollectionSizer::Walker::rule(NodeId v) const {
    return graph_.types.kind(v) == NodeKind::instance ? rule_[graph_.types.class_index(v)] : 0;
}

CollectionShape CollectionSizer::Walker::shape(NodeId v) const { return kKnown[rule(v)].shape; }

std::optional<std::uint64_t> CollectionSizer::Walker::size(NodeId v) {
    backing_ = {};
    if (shape(v) == CollectionShape::none || graph_.out.empty()) return std::nullopt;
    std::optional<std::uint64_t> n = size_as(v, rule_[graph_.types.class_index(v)]);
    clear_marks();
    return n;
}

std::optional<std::uint64_t> CollectionSizer::Walker::size_as(NodeId v, std::uint8_t rule) {
    const KnownCollection& known = kKnown[rule];
    NodeId holder = v;
    for (int hop = 0; hop < known.hops; ++hop) {
        holder = inner_collection(holder);
        if (holder == kNoNode) return 0;
        if (holder == kAmbiguous) return std::nullopt;
    }
    switch (known.shape) {
        case CollectionShape::hashed: return hashed_size(holder, known.segments, known.inner_chm);
        case CollectionShape::tree: return tree_size(holder);
        case CollectionShape::array: return array_size(holder);
        case CollectionShape::linked: return linked_size(holder);
        case CollectionShape::none: break;
    }
    return std::nullopt;
}

// MAT's followOnlyNonArrayOutgoingReference: the only instance the object points to. Where
// a subclass adds fields, the only one that is itself a known collection.
NodeId CollectionSizer::Walker::inner_collection(NodeId v) const {
    NodeId only = kNoNode, known = kNoNode;
    int targets = 0, known_targets = 0;
    for (NodeId t : graph_.out.of(v)) {
        if (graph_.types.kind(t) != NodeKind::instance || t == only) continue;
        only = t;
        ++targets;
        if (rule_[graph_.types.class_index(t)] && t != known) {
            known = t;
            ++known_targets;
        }
    }
    if (targets <= 1) return only;
    return known_targets == 1 ? known : kAmbiguous;
}

std::optional<std::uint64_t> CollectionSizer::Walker::hashed_size(NodeId holder, bool segments, bool inner_chm) {
    NodeId table = kNoNode, named = kNoNode;
    int tables = 0, named_tables = 0;
    for (NodeId t : graph_.out.of(holder)) {
        if (graph_.types.kind(t) != NodeKind::object_array || t == table) continue;
        table = t;
        ++tables;
        if (ends_with_any(graph_.classes[graph_.types.class_index(t)].name, {"Entry[]", "Node[]", "Segment[]"})) {
            named = t;
            ++named_tables;
        }
    }
    if (tables > 1) {
        if (named_tables != 1) return std::nullopt;
        table = named;
    }
    if (tables == 0) {
        if (!inner_chm) return no_array();
        // Java 9+ Properties: an empty Hashtable part and the entries in its `map` field.
        NodeId chm = kNoNode;
        for (NodeId t : graph_.out.of(holder))
            if (graph_.types.kind(t) == NodeKind::instance && rule_[graph_.types.class_index(t)] == kChmRule) {
                if (chm != kNoNode && chm != t) return std::nullopt;
                chm = t;
            }
        return chm == kNoNode ? no_array() : size_as(chm, kChmRule);
    }
    if (segments) {
        std::uint64_t total = 0;
        bool any_segment = false;
        for (NodeId s : graph_.out.of(table)) {
            if (graph_.types.kind(s) != NodeKind::instance || rule_[graph_.types.class_index(s)] != kSegmentRule) continue;
            any_segment = true;
            clear_marks();  // each segment is counted on its own, as in MAT
            std::optional<std::uint64_t> n = hashed_size(s, false, false);
            if (!n) return std::nullopt;
            total += *n;
        }
        clear_marks();
        backing_ = {};  // a table per segment: no one capacity
        if (any_segment) return total;
    }
    backing_ = {.slots_used = non_null_slots(table), .node = table};
    return table_size(holder, table);
}

std::optional<std::uint64_t> CollectionSizer::Walker::table_size(NodeId holder, NodeId table) {
    starts_.clear();
    for (NodeId e : graph_.out.of(table)) {
        if (graph_.types.kind(e) != NodeKind::instance) continue;
        const std::string& name = graph_.classes[graph_.types.class_index(e)].name;
        if (name == "java.lang.Object" || name.ends_with("$ForwardingNode")) continue;
        if (name == "java.util.concurrent.ConcurrentHashMap$TreeBin") {
            for (NodeId n : graph_.out.of(e))
                if (graph_.types.kind(n) == NodeKind::instance &&
                    graph_.classes[graph_.types.class_index(n)].name.ends_with("$TreeNode"))
                    starts_.push_back(n);
            continue;
        }
        starts_.push_back(e);
    }
    for (NodeId t : graph_.out.of(holder)) {
        if (graph_.types.kind(t) != NodeKind::instance) continue;
        bool entry_class = std::any_of(starts_.begin(), starts_.end(), [&](NodeId s) {
            return graph_.types.class_index(s) == graph_.types.class_index(t);
        });
        if (entry_class && sentinel(holder, t)) mark(t);
    }
    return count_same_class(starts_);
}

std::optional<std::uint64_t> CollectionSizer::Walker::tree_size(NodeId holder) {
    NodeId root = kNoNode;
    for (NodeId t : graph_.out.of(holder)) {
        if (graph_.types.kind(t) != NodeKind::instance || t == root) continue;
        if (!graph_.classes[graph_.types.class_index(t)].name.ends_with("$Entry")) continue;
        if (root != kNoNode) return std::nullopt;
        root = t;
    }
    if (root == kNoNode) return 0;
    return count_same_class(std::span<const NodeId>(&root, 1));
}

std::optional<std::uint64_t> CollectionSizer::Walker::array_size(NodeId holder) {
    NodeId array = kNoNode;
    for (NodeId t : graph_.out.of(holder)) {
        if (graph_.types.kind(t) != NodeKind::object_array || t == array) continue;
        if (array != kNoNode) return std::nullopt;
        array = t;
    }
    if (array == kNoNode) return no_array();
    backing_ = {.slots_used = non_null_slots(array), .node = array};
    return backing_.slots_used;
}

// Every edge of an object array but the implicit one to its class is a non-null slot,
// class objects too.
std::uint64_t CollectionSizer::Walker::non_null_slots(NodeId array) const {
    std::span<const NodeId> row = graph_.out.of(array);
    NodeId array_class = graph_.classes[graph_.types.class_index(array)].node;
    return row.size() - (!row.empty() && array_class != kNoNode && row[0] == array_class);
}

std::uint64_t CollectionSizer::Walker::linked_size(NodeId holder) {
    starts_.clear();
    for (NodeId t : graph_.out.of(holder)) {
        if (graph_.types.kind(t) != NodeKind::instance || marked(t)) continue;
        if (!ends_with_any(graph_.classes[graph_.types.class_index(t)].name, {"$Entry", "$Node", "$Link"})) continue;
        if (!sentinel(holder, t)) {
            starts_.push_back(t);
            continue;
        }
        mark(t);
        for (NodeId n : graph_.out.of(t))
            if (graph_.types.kind(n) == NodeKind::instance) starts_.push_back(n);
    }
    return count_same_class(starts_);
}

// Rule 3: the holder's single edge to v's class, and v points only to its own class.
bool CollectionSizer::Walker::sentinel(NodeId holder, NodeId v) const {
    std::uint32_t c = graph_.types.class_index(v);
    int edges = 0;
    for (NodeId t : graph_.out.of(holder)) edges += graph_.types.kind(t) == NodeKind::instance && graph_.types.class_index(t) == c;
    if (edges != 1) return false;
    bool any = false;
    for (NodeId t : graph_.out.of(v)) {
        if (graph_.types.kind(t) == NodeKind::class_object) continue;
        if (graph_.types.kind(t) != NodeKind::instance || graph_.types.class_index(t) != c) return false;
        any = true;
    }
    return any;
}

// MAT's getMapSize: from each start not yet seen, count the nodes reached along targets of
// the same class as the node they leave. The order of the walk does not change the count.
std::uint64_t CollectionSizer::Walker::count_same_class(std::span<const NodeId> starts) {
    std::uint64_t count = 0;
    for (NodeId s : starts) {
        if (marked(s) || graph_.types.kind(s) != NodeKind::instance ||
            graph_.classes[graph_.types.class_index(s)].name == "java.lang.Object")
            continue;
        mark(s);
        extra_.assign(1, s);
        while (!extra_.empty()) {
            NodeId j = extra_.back();
            extra_.pop_back();
            ++count;
            for (NodeId t : graph_.out.of(j))
                if (graph_.types.kind(t) == NodeKind::instance && graph_.types.class_index(t) == graph_.types.class_index(j) && !marked(t)) {
                    mark(t);
                    extra_.push_back(t);
                }
        }
    }
    return count;
}

void CollectionSizer::Walker::mark(NodeId v) {
    seen_.set(v);
    touched_.push_back(v);
}

void CollectionSizer::Walker::clear_marks() {
    for (NodeId v : touched_) seen_.clear_word_of(v);
    touched_.clear();
}

CollectionSizer::CollectionSizer(const HeapGraph& graph) : walker_(std::make_unique<Walker>(graph)) {}
CollectionSizer::~CollectionSizer() = default;
std::string_view CollectionSizer::treated_as(NodeId v) const { return kKnown[walker_->rule(v)].name; }
std::uint8_t CollectionSizer::rule(NodeId v) const { return walker_->rule(v); }
std::string_view CollectionCount::counted_as() const { return kKnown[rule].name; }
CollectionShape CollectionSizer::shape(NodeId v) const { return walker_->shape(v); }
std::optional<std::uint64_t> CollectionSizer::size(NodeId v) { return walker_->size(v); }
const BackingArray& CollectionSizer::backing() const { return walker_->backing_; }

std::optional<std::uint64_t> collection_size(const HeapGraph& graph, NodeId v) {
    return CollectionSizer(graph).size(v);
}

Column<CollectionCount> count_collections(const HeapGraph& graph, const Progress& progress) {
    Column<CollectionCount> out;
    CollectionSizer sizer(graph);
    Ticker tick(progress, graph.node_count());
    for (NodeId v = 0; v < graph.node_count(); ++v, tick.step())
        if (sizer.shape(v) != CollectionShape::none) {
            const std::optional<std::uint64_t> entries = sizer.size(v);
            const BackingArray& backing = sizer.backing();
            out.push_back({.node = v, .backing_node = backing.node, .shape = sizer.shape(v), .rule = sizer.rule(v),
                           .sized = entries.has_value(), .backing_none = backing.none, .entry_count = entries.value_or(0),
                           .slots_used = backing.slots_used});
        }
    out.shrink_to_fit();  // the doublings' room goes
    tick.finish();
    return out;
}

}  // namespace heapgraph::graph
