// Leak suspects, shortest paths from the GC roots and top consumers by package: the facts of
// Eclipse MAT's FindLeaksQuery, LeakHunterQuery and TopConsumers2Query, restated (read, not
// copied; docs/suspects.md says where we differ):
//   1. threshold = threshold_percent (10 in the leak hunter) of the reachable heap, the
//      super root's retained size, rounded down;
//   2. single suspects: the super root's children, biggest first, while retained > threshold;
//   3. group suspects: the remaining children grouped by class (class objects under
//      java.lang.Class), a group's size the sum of its members' retained sizes; every class
//      whose sum > threshold;
//   4. accumulation point of a single suspect: from the suspect, step to its biggest
//      dominator-tree child while child / parent >= big_drop_ratio (0.7); the node where the
//      ratio first drops below 0.7 is the point; a leaf is the point; after 1000 steps none;
//   5. accumulation point of a group: merge the shortest paths from the roots of up to
//      max_paths (10,000) instances into a tree keyed by node, level by level; from the
//      level's record with the most paths, descend while it carries more than
//      (int)(0.8 * instances) paths: with no deeper level, or when the biggest child's summed
//      retained size of its instances over the parent's drops below 0.7, the record's node
//      is the point; a record with too few paths ends the search with no point;
//   6. all suspects sorted by retained size desc, single before group on ties.
// Paths follow a BFS parent tree from the roots that skips the referents of
// java.lang.ref.Reference and Finalizer.unfinalized (MAT's `excludes`), with a weak fallback.
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "graph.h"
#include "node_bits.h"
#include "slot_name.h"

namespace heapgraph::graph {

namespace {

constexpr std::size_t kMaxDepth = 1000;

// The class each class object describes, by binary search over (node, class index) pairs.
class ClassObjects {
public:
    explicit ClassObjects(const HeapGraph& g) : g_(g) {
        for (std::uint32_t i = 0; i < g.classes.size(); ++i)
            if (g.classes[i].node != kNoNode) pairs_.push_back({g.classes[i].node, i});
        std::sort(pairs_.begin(), pairs_.end());
    }
    // The class a node belongs to, class objects counting as the class they describe.
    std::uint32_t own_class(NodeId v) const {
        if (g_.types.kind(v) != NodeKind::class_object) return g_.types.class_index(v);
        auto it = std::lower_bound(pairs_.begin(), pairs_.end(), std::pair<NodeId, std::uint32_t>{v, 0});
        return it != pairs_.end() && it->first == v ? it->second : g_.types.class_index(v);
    }
    const std::string& name(NodeId v) const { return g_.classes[own_class(v)].name; }

private:
    const HeapGraph& g_;
    std::vector<std::pair<NodeId, std::uint32_t>> pairs_;
};

bool is_weak(std::span<const Edge> weak, NodeId from, NodeId to) {
    auto it = std::lower_bound(weak.begin(), weak.end(), Edge{from, to}, [](const Edge& a, const Edge& b) {
        return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
    return it != weak.end() && it->from == from && it->to == to;
}

// First in, first out, in blocks of 4 MB, each let go once taken: it holds what is queued and
// a block more. A vector cut at its front held up to twice that, and while it grew its old
// block beside the new one (on the 2 GB BigHeap dump 32 + 64 MB at the dominator step's peak).
class NodeQueue {
public:
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    void push(NodeId v) {
        if (blocks_.empty() || blocks_.back().size() == kBlock) blocks_.emplace_back().reserve(kBlock);
        blocks_.back().push_back(v);
        ++size_;
    }
    // The node `ahead` places behind the front (ahead < size()). Every block but the last is
    // full, and the first's taken nodes stay until it goes.
    NodeId peek(std::size_t ahead) const {
        ahead += head_;
        return blocks_[ahead / kBlock][ahead % kBlock];
    }
    NodeId take() {
        const NodeId v = blocks_.front()[head_];
        --size_;
        if (++head_ == kBlock) blocks_.pop_front(), head_ = 0;
        return v;
    }

private:
    static constexpr std::size_t kBlock = (std::size_t{4} << 20) / sizeof(NodeId);
    std::deque<HugeVector<NodeId>> blocks_;
    std::size_t head_ = 0, size_ = 0;
};

class PathSearch {
public:
    PathSearch(const HeapGraph& g, std::span<const Edge> weak, const Progress& progress, NodeBits&& shared)
        : g_(g), weak_(weak), tick_(progress, g.node_count()), seen_(g.node_count()), weak_source_(g.node_count()) {
        const NodeId n = g.node_count();
        if (shared.empty()) tree_.parent.keep_all(n);
        else tree_.parent.keep_shared(n, std::move(shared), g.root_nodes);
        tree_.slot.assign(n);
        tree_.weak = NodeBits(n);  // only the weak nodes are set
        // Most nodes have no weak edge: mark those that do, so the strong pass searches the
        // weak list only for them (a search per edge cost seconds on a 33M-object heap).
        for (const Edge& e : weak_) weak_source_.set(e.from);
    }

    PathTree run() {
        for (NodeId r : g_.root_nodes) visit_root(r, false);
        bfs(true);
        // Reached only through a weak edge: continue from each such edge's target.
        for (const Edge& e : weak_)
            if (seen(e.from) && !seen(e.to)) reach(e.from, e.to, true);
        bfs(false);
        if (tree_.parent.compact()) tree_.parent.keep_unreached(unseen());
        for (NodeId v = 0; v < g_.node_count(); ++v)
            if (!seen(v)) {
                visit_root(v, true);
                bfs(false);
            }
        tick_.finish();
        tree_.slot.finish();
        return std::move(tree_);
    }

private:
    bool seen(NodeId v) const { return seen_.test(v); }
    NodeBits unseen() const {
        NodeBits bits(g_.node_count());
        for (std::size_t i = 0; i < bits.words(); ++i) bits.word(i) = ~seen_.word(i);
        if (const std::size_t tail = g_.node_count() % 64) bits.word(bits.words() - 1) &= (std::uint64_t{1} << tail) - 1;
        return bits;
    }

    void visit_root(NodeId v, bool weak) {
        if (seen(v)) return;
        seen_.set(v);
        if (weak) tree_.weak.set(v);
        queue_.push(v);
    }

    // `slot`: where `to` sits in from's row (searched for when not given: rare weak edges
    // only, as a search per edge would be quadratic in a big array's row). `weak`: the edge
    // is weak or `from` was reached through one.
    void reach(NodeId from, NodeId to, bool weak, std::size_t slot = SIZE_MAX) {
        seen_.set(to);
        tree_.parent.set(to, from);
        if (weak) tree_.weak.set(to);
        if (slot == SIZE_MAX) {
            std::span<const NodeId> row = g_.out.of(from);
            slot = static_cast<std::size_t>(std::find(row.begin(), row.end(), to) - row.begin());
        }
        tree_.slot.set(to, static_cast<std::uint32_t>(slot));
        queue_.push(to);
    }

    // The queue says which rows come next: their offsets are asked for kAhead nodes ahead,
    // their targets half as far (the offsets have come in by then).
    static constexpr std::size_t kAhead = 16;

    void bfs(bool strong_only) {
        while (!queue_.empty()) {
            if (queue_.size() > kAhead) g_.out.prefetch(queue_.peek(kAhead));
            if (queue_.size() > kAhead / 2) __builtin_prefetch(g_.out.targets.data() + g_.out.begin(queue_.peek(kAhead / 2)));
            const NodeId v = queue_.take();
            tick_.step();  // each node leaves the queue once
            std::span<const NodeId> row = g_.out.of(v);
            const bool check_weak = strong_only && weak_source_.test(v);
            const bool weak = !strong_only && tree_.weak.test(v);  // the strong pass reaches no weak node
            for (std::size_t slot = 0; slot < row.size(); ++slot)
                if (!seen(row[slot]) && !(check_weak && is_weak(weak_, v, row[slot]))) reach(v, row[slot], weak, slot);
        }
    }

    const HeapGraph& g_;
    std::span<const Edge> weak_;
    PathTree tree_;
    Ticker tick_;
    NodeBits seen_, weak_source_;  // bits: every edge tests one
    NodeQueue queue_;
};


class SuspectFinder {
public:
    SuspectFinder(const HeapGraph& g, const Retained& r, const PathTree& paths, const SuspectOptions& o)
        : g_(g), r_(r), paths_(paths), o_(o), classes_(g) {
        for (const GcRoot& root : g.roots)
            if (g.root_kind_names[root.kind] == "thread_object") threads_.push_back(root.node);
        std::sort(threads_.begin(), threads_.end());
    }

    std::vector<Suspect> run(std::uint64_t* left_out) {
        std::vector<Candidate> candidates = find_candidates();
        if (left_out) *left_out = candidates.size() > o_.max_suspects ? candidates.size() - o_.max_suspects : 0;
        if (candidates.size() > o_.max_suspects) candidates.resize(o_.max_suspects);
        std::vector<std::vector<ClassShare>> shares = top_classes(candidates);
        std::vector<Suspect> out;
        for (std::size_t k = 0; k < candidates.size(); ++k) {
            Candidate& c = candidates[k];
            out.push_back(c.group ? group(c.class_index, std::move(c.members), c.retained) : single(c.node));
            out.back().top_classes = std::move(shares[k]);
            out.back().path_omitted = cut_path(out.back().path);
        }
        return out;
    }

private:
    // A suspect before its path and consumers are worked out: with a threshold near 0 every
    // top-level dominator qualifies, and only the reported ones are worth building.
    struct Candidate {
        bool group = false;
        NodeId node = kNoNode;
        std::uint32_t class_index = 0;
        std::vector<NodeId> members;
        std::uint64_t retained = 0;
    };

    std::vector<Candidate> find_candidates() const {
        const auto& retained = r_.tree.retained_bytes;
        const std::uint64_t threshold = static_cast<std::uint64_t>(
            static_cast<long double>(o_.threshold_percent) * r_.tree.super_root_retained_bytes / 100);
        // The top-level dominators in node order, so that their sizes and classes (and their
        // top positions, in top_classes) are read in sequence: in files, in the order of their
        // sizes each read was a fault. The sort below orders the candidates.
        std::vector<NodeId> top = r_.top;
        std::sort(top.begin(), top.end());
        std::vector<Candidate> out;
        std::map<std::uint32_t, Candidate> by_class;  // class objects under java.lang.Class
        for (NodeId v : top) {
            if (retained[v] > threshold) {
                out.push_back({false, v, 0, {}, retained[v]});
                continue;
            }
            const std::uint32_t c = g_.types.class_index(v);
            Candidate& group = by_class.try_emplace(c, Candidate{true, kNoNode, c, {}, 0}).first->second;
            group.members.push_back(v);
            group.retained += retained[v];
        }
        for (auto& [c, group] : by_class)
            if (group.retained > threshold) out.push_back(std::move(group));
        std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
            if (a.retained != b.retained) return a.retained > b.retained;
            if (a.group != b.group) return !a.group;
            return a.group ? a.class_index < b.class_index : a.node < b.node;
        });
        return out;
    }

private:
    bool is_thread(NodeId v) const { return std::binary_search(threads_.begin(), threads_.end(), v); }

    NodeId biggest_child(NodeId v) const {
        NodeId best = kNoNode;
        for (NodeId c : r_.children.of(v))
            if (best == kNoNode || r_.tree.retained_bytes[c] > r_.tree.retained_bytes[best] ||
                (r_.tree.retained_bytes[c] == r_.tree.retained_bytes[best] && c < best))
                best = c;
        return best;
    }

    NodeId accumulation_point(NodeId v) const {
        double parent_bytes = static_cast<double>(r_.tree.retained_bytes[v]);
        for (std::size_t depth = 0; depth < kMaxDepth; ++depth) {
            NodeId child = biggest_child(v);
            if (child == kNoNode) return v;
            double child_bytes = static_cast<double>(r_.tree.retained_bytes[child]);
            if (child_bytes / parent_bytes < o_.big_drop_ratio) return v;
            v = child, parent_bytes = child_bytes;
        }
        return biggest_child(v) == kNoNode ? v : kNoNode;
    }

    // The first object up the path from the roots whose class is not a platform class
    // (MAT searches inbound references breadth first; we have no in rows here).
    NodeId referrer_of(NodeId v) const {
        for (NodeId up = paths_.parent[v]; up != kNoNode; up = paths_.parent[up])
            if (!platform_class(classes_.name(up)) || is_thread(up)) return up;
        return kNoNode;
    }

    void describe_holder(Suspect& s, NodeId subject) const {
        if (is_thread(subject)) {
            s.thread = subject;
            return;
        }
        if (!platform_class(classes_.name(subject))) return;
        s.referrer = referrer_of(subject);
        if (s.referrer != kNoNode && is_thread(s.referrer)) s.thread = s.referrer;
    }

    Suspect single(NodeId v) const {
        Suspect s;
        s.node = v;
        s.class_index = classes_.own_class(v);
        s.retained_bytes = r_.tree.retained_bytes[v];
        s.accumulation_point = accumulation_point(v);
        s.path = path_from_root(paths_, s.accumulation_point != kNoNode ? s.accumulation_point : v);
        s.path_weak = paths_.weak.test(s.path.back());
        describe_holder(s, v);
        return s;
    }

    struct Record {
        NodeId node;
        std::vector<std::uint32_t> paths;  // indexes into the sampled paths through this node
        std::uint64_t retained = 0;        // of the instances those paths end at
    };

    // One level of MAT's merged paths: the paths in `through` grouped by their node at
    // `depth`, most paths first (ties: node id).
    std::vector<Record> level(const std::vector<std::vector<NodeId>>& sampled, const std::vector<std::uint32_t>& through,
                              std::size_t depth) const {
        std::map<NodeId, Record> records;
        for (std::uint32_t p : through) {
            if (sampled[p].size() <= depth) continue;
            Record& rec = records.try_emplace(sampled[p][depth], Record{sampled[p][depth], {}, 0}).first->second;
            rec.paths.push_back(p);
            rec.retained += r_.tree.retained_bytes[sampled[p].back()];
        }
        std::vector<Record> out;
        for (auto& [node, rec] : records) out.push_back(std::move(rec));
        std::stable_sort(out.begin(), out.end(),
                         [](const Record& a, const Record& b) { return a.paths.size() > b.paths.size(); });
        return out;
    }

    // `members` by node (find_candidates).
    Suspect group(std::uint32_t c, std::vector<NodeId> members, std::uint64_t sum) const {
        Suspect s;
        s.group = true;
        s.class_index = c;
        s.retained_bytes = sum;
        // Evenly spaced rather than MAT's random sample: the report must not vary by run.
        std::vector<std::vector<NodeId>> sampled;
        std::size_t n = std::min(members.size(), o_.max_paths), steps = 0;
        for (std::size_t k = 0; k < n && steps < o_.max_path_steps; ++k) {
            sampled.push_back(path_from_root(paths_, members[k * members.size() / n]));
            steps += sampled.back().size();
        }
        n = sampled.size();
        std::vector<std::uint32_t> all(n);
        for (std::uint32_t k = 0; k < n; ++k) all[k] = k;
        const std::size_t needed = static_cast<std::size_t>(o_.group_accumulation_ratio * static_cast<double>(n));
        std::vector<Record> records = level(sampled, all, 0);
        std::vector<NodeId> common;
        for (std::size_t depth = 0; !records.empty() && records[0].paths.size() > needed; ++depth) {
            const Record& parent = records[0];
            common.push_back(parent.node);
            std::vector<Record> children = level(sampled, parent.paths, depth + 1);
            if (children.empty() || static_cast<double>(children[0].retained) / static_cast<double>(parent.retained) <
                                        o_.big_drop_ratio) {
                s.accumulation_point = parent.node;
                break;
            }
            records = std::move(children);
        }
        NodeId largest = *std::min_element(members.begin(), members.end(), [&](NodeId a, NodeId b) {
            const auto& rb = r_.tree.retained_bytes;
            return rb[a] != rb[b] ? rb[a] > rb[b] : a < b;
        });
        s.path = s.accumulation_point != kNoNode ? common : path_from_root(paths_, largest);
        s.path_weak = !s.path.empty() && paths_.weak.test(s.path.back());
        if (s.accumulation_point != kNoNode) describe_holder(s, s.accumulation_point);
        s.instances = std::move(members);
        return s;
    }

    // Counts by class: instances in a row per class index (a hash lookup per object cost a
    // second on the 2 GB BigHeap dump), class objects, few, in a map of their own.
    struct Shares {
        std::vector<ClassShare> by_class;
        std::unordered_map<NodeId, ClassShare> class_objects;
    };
    Shares no_shares() const {
        Shares s{std::vector<ClassShare>(g_.classes.size(), ClassShare{kNoNode, 0}), {}};
        for (std::uint32_t c = 0; c < s.by_class.size(); ++c) s.by_class[c].class_index = c;
        return s;
    }
    void count(Shares& s, NodeId v) const {
        ClassShare* row;
        if (g_.types.kind(v) == NodeKind::class_object) {
            auto [it, fresh] = s.class_objects.try_emplace(v);
            if (fresh) it->second = {v, classes_.own_class(v)};
            row = &it->second;
        } else {
            row = &s.by_class[g_.types.class_index(v)];
        }
        ++row->objects;
        row->shallow_bytes += g_.shallow_bytes[v];
    }

    // Objects in each candidate's dominator subtrees, by class (class objects by themselves):
    // MAT's top consumers of the minimum retained set. A candidate is made of top-level
    // dominators, and a node lies in the subtree of the one its top_index names, so one pass
    // over the nodes in node order, on every core, counts them all and reads each column in
    // sequence (a walk of each subtree read them at random: in files, a fault per node; the
    // 8x replica's suspects cover 87% of its heap). Sums: the same for any split.
    std::vector<std::vector<ClassShare>> top_classes(const std::vector<Candidate>& candidates) const {
        if (candidates.empty()) return {};  // no pass over the nodes for nothing
        // By position in r_.top: the candidate holding that top-level dominator, 1-based (0: none).
        std::vector<std::uint32_t> owner(r_.top.size(), 0);
        for (std::uint32_t k = 0; k < candidates.size(); ++k) {
            const Candidate& c = candidates[k];
            if (!c.group) owner[r_.top_index[c.node]] = k + 1;
            for (NodeId m : c.members) owner[r_.top_index[m]] = k + 1;
        }
        using Local = std::vector<Shares>;
        tbb::enumerable_thread_specific<Local> local([&] { return Local(candidates.size(), no_shares()); });
        tbb::parallel_for(tbb::blocked_range<NodeId>(0, g_.node_count(), 1 << 16), [&](const auto& range) {
            Local& shares = local.local();
            for (NodeId v = range.begin(); v != range.end(); ++v)
                if (r_.in_tree.test(v))
                    if (const std::uint32_t k = owner[r_.top_index[v]]; k != 0) count(shares[k - 1], v);
        });
        std::vector<std::vector<ClassShare>> out;
        for (std::size_t k = 0; k < candidates.size(); ++k) {
            Shares all = no_shares();
            for (const Local& shares : local) add(all, shares[k]);
            out.push_back(top_rows(all));
        }
        return out;
    }

    static void add(Shares& to, const Shares& from) {
        for (std::size_t c = 0; c < from.by_class.size(); ++c) {
            to.by_class[c].objects += from.by_class[c].objects;
            to.by_class[c].shallow_bytes += from.by_class[c].shallow_bytes;
        }
        for (const auto& [node, row] : from.class_objects) {
            auto [it, fresh] = to.class_objects.try_emplace(node, row);
            if (!fresh) it->second.objects += row.objects, it->second.shallow_bytes += row.shallow_bytes;
        }
    }

    // The classes with the most shallow bytes, at most options.top_classes of them.
    std::vector<ClassShare> top_rows(const Shares& all) const {
        std::vector<ClassShare> rows;
        for (const ClassShare& row : all.by_class)
            if (row.objects) rows.push_back(row);
        for (auto& [node, row] : all.class_objects) rows.push_back(row);
        std::sort(rows.begin(), rows.end(), [](const ClassShare& a, const ClassShare& b) {
            if (a.shallow_bytes != b.shallow_bytes) return a.shallow_bytes > b.shallow_bytes;
            if (a.class_index != b.class_index) return a.class_index < b.class_index;
            return a.class_node < b.class_node;
        });
        if (rows.size() > o_.top_classes) rows.resize(o_.top_classes);
        return rows;
    }

    const HeapGraph& g_;
    const Retained& r_;
    const PathTree& paths_;
    const SuspectOptions& o_;
    ClassObjects classes_;
    std::vector<NodeId> threads_;
};

}  // namespace

PathTree shortest_path_tree(const HeapGraph& graph, std::span<const Edge> weak_edges, const Progress& progress,
                            NodeBits shared) {
    return PathSearch(graph, weak_edges, progress, std::move(shared)).run();
}

void PathParents::keep_all(std::size_t nodes) {
    *this = {};
    nodes_ = nodes;
    all_.assign(nodes, kNoNode);
}

void PathParents::keep_shared(std::size_t nodes, NodeBits&& shared, std::span<const NodeId> roots) {
    *this = {};
    nodes_ = nodes, compact_ = true;
    shared_ = RankedBits(std::move(shared));
    shared_parent_.assign(shared_.count(), kNoNode);
    roots_.assign(roots.begin(), roots.end());
}

void PathParents::keep_unreached(NodeBits&& unreached) {
    unreached_ = RankedBits(std::move(unreached));
    unreached_parent_.assign(unreached_.count(), kNoNode);
}

void PathParents::set(NodeId v, NodeId parent) {
    if (!compact_) all_[v] = parent;
    else if (shared_.test(v)) shared_parent_[shared_.rank(v)] = parent;
    else if (unreached_.test(v)) unreached_parent_[unreached_.rank(v)] = parent;
}

NodeId PathParents::operator[](NodeId v) const {
    if (!compact_) return all_[v];
    if (shared_.test(v)) return shared_parent_[shared_.rank(v)];
    if (unreached_.test(v)) return unreached_parent_[unreached_.rank(v)];
    if (std::binary_search(roots_.begin(), roots_.end(), v)) return kNoNode;
    if (!idom_) throw std::logic_error("a path parent read before the dominator tree was attached");
    const NodeId d = (*idom_)[v];
    return d == kSuperRoot || d == kUnreached ? kNoNode : d;
}

std::vector<NodeId> path_from_root(const PathTree& tree, NodeId v) {
    std::vector<NodeId> path;
    for (NodeId x = v; x != kNoNode && path.size() <= tree.parent.size(); x = tree.parent[x]) path.push_back(x);
    std::reverse(path.begin(), path.end());
    return path;
}

std::vector<PathEdge> path_edges(const PathTree& tree, std::span<const NodeId> path) {
    std::vector<PathEdge> edges;
    for (NodeId v : path)
        if (tree.parent[v] != kNoNode) edges.push_back({tree.parent[v], v, tree.slot[v]});
    return edges;
}

std::string slot_name(const HeapGraph& g, const FieldNames& names, NodeId from, std::uint32_t own_class,
                      std::uint32_t slot) {
    auto exact = std::lower_bound(names.exact.begin(), names.exact.end(), std::pair{from, slot},
                                  [](const NamedEdge& e, const std::pair<NodeId, std::uint32_t>& key) {
                                      return e.from != key.first ? e.from < key.first : e.slot < key.second;
                                  });
    if (exact != names.exact.end() && exact->from == from && exact->slot == slot) return exact->name;
    if (g.types.kind(from) == NodeKind::class_object)
        return own_class < names.class_edges.size() && slot < names.class_edges[own_class].size()
                   ? names.class_edges[own_class][slot]
                   : std::string();
    const std::uint32_t class_edge = g.classes[g.types.class_index(from)].node != kNoNode;
    if (class_edge && slot == 0) return "<class>";
    // Without nulls in the row, the slot is the field only when no reference field is null.
    const std::uint32_t c = g.types.class_index(from);
    if (g.types.kind(from) != NodeKind::instance || c >= names.instance_fields.size() ||
        g.out.rows() != g.node_count())
        return {};
    const std::size_t refs = g.out.degree(from) - class_edge;
    return refs == names.instance_fields[c].total ? names.instance_field(c, slot - class_edge) : std::string();
}

std::string edge_name(const HeapGraph& graph, const FieldNames& names, const PathTree& tree, NodeId v) {
    NodeId from = tree.parent[v];
    if (from == kNoNode) return {};
    return slot_name(graph, names, from, ClassObjects(graph).own_class(from), tree.slot[v]);
}

std::vector<Suspect> find_suspects(const HeapGraph& graph, const Retained& retained, const PathTree& paths,
                                   const SuspectOptions& options, std::uint64_t* left_out) {
    return SuspectFinder(graph, retained, paths, options).run(left_out);
}

std::uint64_t cut_path(std::vector<NodeId>& path) {
    if (path.size() <= kPathHeadSteps + kPathTailSteps) return 0;
    const std::uint64_t omitted = path.size() - kPathHeadSteps - kPathTailSteps;
    path.erase(path.begin() + kPathHeadSteps, path.end() - kPathTailSteps);
    return omitted;
}

bool platform_class(std::string_view name) {
    for (std::string_view prefix : {"java.", "javax.", "sun.", "com.sun.", "jdk."})
        if (name.starts_with(prefix)) return true;
    return false;
}

std::vector<PackageRow> retained_by_package(const HeapGraph& graph, const Retained& retained) {
    std::map<std::string, PackageRow> rows;
    ClassObjects classes(graph);
    for (NodeId v : retained.top) {
        const std::string& name = classes.name(v);
        std::size_t dot = name.find('.');
        if (dot == std::string::npos) {
            PackageRow& row = rows["<default>"];
            ++row.dominators, row.retained_bytes += retained.tree.retained_bytes[v];
        }
        for (; dot != std::string::npos; dot = name.find('.', dot + 1)) {
            PackageRow& row = rows[name.substr(0, dot)];
            ++row.dominators, row.retained_bytes += retained.tree.retained_bytes[v];
        }
    }
    std::vector<PackageRow> out;
    for (auto& [name, row] : rows) {
        row.package = name;
        out.push_back(std::move(row));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const PackageRow& a, const PackageRow& b) { return a.retained_bytes > b.retained_bytes; });
    return out;
}

}  // namespace heapgraph::graph
