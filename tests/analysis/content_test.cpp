// The content analyses (analysis/content.cpp) on the planted dump: data/gen/ContentDemo.java
// plants duplicate strings and arrays and writes the figures it knows (the JVM's own object
// sizes, Instrumentation.getObjectSize) to contentdemo.expected.json.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <oneapi/tbb/task_arena.h>

#include <set>

#include "analysis.h"
#include "content.h"
#include "edge_names.h"
#include "test_support.h"
#include "values.h"

namespace {

using namespace heapgraph;
using Json = nlohmann::json;

Json expected_figures() {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("samples/contentdemo.expected.json"));
    return Json::parse(bytes.begin(), bytes.end());
}

}  // namespace

// Findings hold a reference to the graph, so they are made where the dump lives.
TEST_CASE("duplicate strings equal the planted program's own counts and wasted bytes") {
    LoadedDump dump = load_dump(test::data_path("samples/contentdemo.hprof.gz"), {});
    analysis::Findings f = analysis::analyse(dump, {.top = 1000});
    REQUIRE(f.content.values_read);
    const Json expected = expected_figures();
    REQUIRE(expected["strings"].size() == 5);
    for (const Json& planted : expected["strings"]) {
        CAPTURE(planted["name"].get<std::string>());
        auto row = std::find_if(f.content.duplicate_strings.begin(), f.content.duplicate_strings.end(),
                                [&](const analysis::DuplicateString& d) { return d.value == planted["value"].get<std::string>(); });
        REQUIRE(row != f.content.duplicate_strings.end());
        CHECK(row->count == planted["count"].get<std::uint64_t>());
        CHECK(row->arrays == planted["distinct_arrays"].get<std::uint64_t>());
        CHECK(row->length == planted["length"].get<std::uint64_t>());
        CHECK(row->wasted_bytes == planted["wasted_bytes"].get<std::uint64_t>());
        CHECK(dump.graph.shallow_bytes[row->example] == planted["string_shallow"].get<std::uint64_t>());
    }
    // Sorted by wasted bytes: the 20,000 copies first.
    CHECK(f.content.duplicate_strings.front().value == "planted-duplicate-alpha");
    for (std::size_t i = 1; i < f.content.duplicate_strings.size(); ++i)
        CHECK(f.content.duplicate_strings[i - 1].wasted_bytes >= f.content.duplicate_strings[i].wasted_bytes);
}

TEST_CASE("duplicate primitive arrays equal the planted program's own counts and wasted bytes") {
    LoadedDump dump = load_dump(test::data_path("samples/contentdemo.hprof.gz"), {});
    analysis::Findings f = analysis::analyse(dump, {.top = 1000});
    const Json expected = expected_figures();
    REQUIRE(expected["arrays"].size() == 3);
    for (const Json& planted : expected["arrays"]) {
        const std::string type = planted["element_type"].get<std::string>() + "[]";
        CAPTURE(type);
        auto row = std::find_if(f.content.duplicate_arrays.begin(), f.content.duplicate_arrays.end(),
                                [&](const analysis::DuplicateArray& d) {
                                    return dump.graph.classes[dump.graph.types.class_index(d.example)].name == type &&
                                           d.length == planted["length"].get<std::uint64_t>() &&
                                           d.count == planted["count"].get<std::uint64_t>();
                                });
        REQUIRE(row != f.content.duplicate_arrays.end());
        CHECK(row->wasted_bytes == planted["wasted_bytes"].get<std::uint64_t>());
        CHECK(dump.graph.shallow_bytes[row->example] == planted["array_shallow"].get<std::uint64_t>());
    }
    // int[100] holds i * 7: the row shows its first elements.
    auto ints = std::find_if(f.content.duplicate_arrays.begin(), f.content.duplicate_arrays.end(),
                             [](const analysis::DuplicateArray& d) { return d.length == 100 && d.count == 500; });
    REQUIRE(ints != f.content.duplicate_arrays.end());
    CHECK(ints->first_elements == "[0, 7, 14, 21, 28, 35, 42, 49, ...]");
}

TEST_CASE("the value reader's records do not depend on the thread count") {
    LoadedDump dump = load_dump(test::data_path("samples/contentdemo.hprof.gz"), {});
    DumpValues two = read_values(dump);
    tbb::task_arena one_thread(1);
    DumpValues one = one_thread.execute([&] { return read_values(dump); });
    REQUIRE(one.strings.size() == two.strings.size());
    REQUIRE(one.arrays.size() == two.arrays.size());
    for (std::size_t i = 0; i < one.arrays.size(); ++i) {
        CHECK(one.arrays[i].address == two.arrays[i].address);
        CHECK(one.arrays[i].hash == two.arrays[i].hash);
    }
    CHECK(one.strings.size() >= 29010);  // the planted strings alone
    CHECK_FALSE(one.utf16_big_endian);   // x86: StringUTF16.HI_BYTE_SHIFT is 0
}

TEST_CASE("formats without values give empty content sections and a values_unavailable warning") {
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20100209.165721.4484.phd"), {});
    analysis::Findings f = analysis::analyse(dump, {});
    CHECK_FALSE(f.content.values_read);
    CHECK(f.content.unavailable.find("no field values") != std::string::npos);
    CHECK(f.content.duplicate_strings.empty());
    auto w = std::find_if(f.warnings.begin(), f.warnings.end(), [](const Warning& w) { return w.code == "values_unavailable"; });
    CHECK(w != f.warnings.end());
}

namespace {

// Values read from a made-up dump `file` (8-byte ids), with no records yet.
DumpValues values_over(const std::vector<std::uint8_t>& file) {
    auto source = std::make_shared<DumpSource>();
    source->file = Bytes(file.data(), file.size());
    source->id_size = 8;
    DumpValues values;
    values.available = true;
    values.source = source;
    return values;
}

// The duplicates find_duplicates() gives on the graph of `in`, every node counted, inside an
// arena of `threads` (by default, the machine's).
analysis::ContentFindings duplicates_of(graph::HeapInput&& in, const std::vector<std::uint64_t>& addresses,
                                        const DumpValues& values, int threads = tbb::task_arena::automatic) {
    const std::size_t n = addresses.size();
    graph::HeapGraph g = graph::build_heap_graph(std::move(in));
    const AddressIndex index = AddressIndex::of(addresses);
    graph::NodeBits counted(n);
    for (graph::NodeId v = 0; v < n; ++v) counted.set(v);
    analysis::ContentFindings out;
    tbb::task_arena(threads).execute([&] { analysis::find_duplicates(g, counted, index, values, 10, out); });
    return out;
}

// Duplicate arrays among byte[4] arrays laid end to end in a made-up `file`, each hashed as
// the decode hashes it, found inside an arena of `threads`.
analysis::ContentFindings arrays_grouped(const std::vector<std::uint8_t>& file, int threads) {
    const std::uint64_t n = file.size() / 4;
    DumpValues values = values_over(file);
    std::vector<std::uint64_t> addresses;
    for (std::uint64_t i = 0; i < n; ++i) {
        addresses.push_back(0x100 + 0x10 * i);
        values.arrays.push_back({addresses.back(), 4 * i, 4, static_cast<std::uint8_t>(BasicType::byte),
                                 content_hash(Bytes(file.data() + 4 * i, 4))});
    }
    graph::HeapInput in;
    in.classes = {{"byte[]", graph::kNoNode, graph::kNoNode}};
    in.types.assign(n, graph::NodeKind::primitive_array, 0);
    in.shallow_bytes.assign(n, 24);
    return duplicates_of(std::move(in), addresses, values, threads);
}

// Arrays of four equal bytes, `contents[i]` the i-th array's.
std::vector<std::uint8_t> arrays_of(const std::vector<std::uint8_t>& contents) {
    std::vector<std::uint8_t> file;
    for (std::uint8_t c : contents) file.insert(file.end(), {c, c, c, c});
    return file;
}

// Duplicate strings among Strings whose byte[] values all hold `value`, String i with
// coder `coders[i]` (0 Latin-1, 1 UTF-16), each value hashed as the decode hashes it.
analysis::ContentFindings strings_grouped(const std::vector<std::uint8_t>& value, const std::vector<std::int8_t>& coders) {
    const std::size_t n = coders.size();
    std::vector<std::uint8_t> file;
    for (std::size_t i = 0; i < n; ++i) file.insert(file.end(), value.begin(), value.end());
    DumpValues values = values_over(file);
    std::vector<std::uint64_t> addresses;  // the Strings, then their arrays: node order
    graph::HeapInput in;
    in.classes = {{"java.lang.String", graph::kNoNode, graph::kNoNode}, {"byte[]", graph::kNoNode, graph::kNoNode}};
    in.types.assign(2 * n, graph::NodeKind::instance, 0);
    for (std::size_t i = 0; i < n; ++i) {
        addresses.push_back(0x100 + 0x10 * i);
        values.strings.push_back({addresses.back(), 0x1000 + 0x20 * i, -1, -1, coders[i]});
    }
    for (std::size_t i = 0; i < n; ++i) {
        addresses.push_back(0x1000 + 0x20 * i);
        in.types.set(n + i, graph::NodeKind::primitive_array, 1);
        values.arrays.push_back({addresses.back(), value.size() * i, static_cast<std::uint32_t>(value.size()),
                                 static_cast<std::uint8_t>(BasicType::byte), content_hash(Bytes(file.data() + value.size() * i, value.size()))});
    }
    in.shallow_bytes.assign(2 * n, 24);
    return duplicates_of(std::move(in), addresses, values);
}

}  // namespace

TEST_CASE("strings group by contents and coder: the same bytes as Latin-1 and as UTF-16 are two values") {
    const std::vector<std::uint8_t> value = {'a', 0, 'b', 0};  // "a\0b\0" in Latin-1; "ab" little-endian UTF-16
    analysis::ContentFindings out = strings_grouped(value, {0, 0, 1});
    REQUIRE(out.duplicate_strings.size() == 1);
    CHECK(out.duplicate_strings[0].count == 2);
    CHECK(out.duplicate_strings[0].arrays == 2);
    CHECK(out.duplicate_strings[0].length == 4);
    CHECK(out.duplicate_strings[0].wasted_bytes == 48);  // one String and one array
    CHECK(out.string_groups == 1);
    out = strings_grouped(value, {1, 1, 0});
    REQUIRE(out.duplicate_strings.size() == 1);
    CHECK(out.duplicate_strings[0].count == 2);
    CHECK(out.duplicate_strings[0].length == 2);
    out = strings_grouped(value, {0, 1});
    CHECK(out.duplicate_strings.empty());
    CHECK(out.string_groups == 0);
}

TEST_CASE("arrays group by contents: equal ones join, a different one does not") {
    // Three byte[4] arrays: two equal, one different.
    analysis::ContentFindings out = arrays_grouped({1, 2, 3, 4, 1, 2, 3, 4, 9, 9, 9, 9}, 1);
    REQUIRE(out.duplicate_arrays.size() == 1);
    CHECK(out.duplicate_arrays[0].count == 2);
    CHECK(out.duplicate_arrays[0].wasted_bytes == 24);
    CHECK(out.duplicate_arrays[0].first_elements == "[1, 2, 3, 4]");
}

TEST_CASE("contents laid out in halves or mixed: the same groups at any thread count") {
    // The first layout holds A then B; the second mixes them, with one C.
    std::vector<std::uint8_t> halves(40, 1), mixed(40, 1);
    std::fill(halves.begin() + 20, halves.end(), 2);
    std::fill(mixed.begin() + 10, mixed.begin() + 25, 2);
    mixed.back() = 3;
    for (int threads : {1, 2, 3, 8}) {
        CAPTURE(threads);
        analysis::ContentFindings out = arrays_grouped(arrays_of(halves), threads);
        REQUIRE(out.duplicate_arrays.size() == 2);
        CHECK(out.duplicate_arrays[0].count == 20);
        CHECK(out.duplicate_arrays[1].count == 20);
        CHECK(out.duplicate_arrays[0].first_elements != out.duplicate_arrays[1].first_elements);
        out = arrays_grouped(arrays_of(mixed), threads);
        REQUIRE(out.duplicate_arrays.size() == 2);
        CHECK(out.duplicate_arrays[0].count == 24);  // A: 10 + 14
        CHECK(out.duplicate_arrays[0].wasted_bytes == 23 * 24);
        CHECK(out.duplicate_arrays[0].first_elements == "[1, 1, 1, 1]");
        CHECK(out.duplicate_arrays[1].count == 15);  // B
        CHECK(out.duplicate_arrays[1].first_elements == "[2, 2, 2, 2]");
        CHECK(out.array_groups == 2);
    }
}

namespace {

struct JcmdFrame {
    std::string class_name, method;
    std::int32_t line = 0;  // 0: none (native)
    bool native = false;
};

// The "at class.method(module/File.java:123)" lines of one thread in jcmd Thread.print.
std::vector<JcmdFrame> jcmd_frames(const std::string& dump, const std::string& thread) {
    std::vector<JcmdFrame> out;
    std::size_t at = dump.find("\"" + thread + "\"");
    REQUIRE(at != std::string::npos);
    std::size_t end = dump.find("\n\n", at);
    std::string block = dump.substr(at, end - at);
    std::size_t pos = 0;
    while ((pos = block.find("\tat ", pos)) != std::string::npos) {
        std::size_t open = block.find('(', pos), close = block.find(')', open);
        std::string name = block.substr(pos + 4, open - pos - 4), where = block.substr(open + 1, close - open - 1);
        JcmdFrame f;
        f.class_name = name.substr(0, name.rfind('.'));
        f.method = name.substr(name.rfind('.') + 1);
        f.native = where.find("Native Method") != std::string::npos;
        if (std::size_t colon = where.rfind(':'); colon != std::string::npos) f.line = std::stoi(where.substr(colon + 1));
        out.push_back(f);
        pos = close;
    }
    return out;
}

}  // namespace

TEST_CASE("threads: names, states and frames equal jcmd Thread.print's, the planted locals sit in their frames") {
    LoadedDump dump = load_dump(test::data_path("samples/contentdemo.hprof.gz"), {});
    analysis::Findings f = analysis::analyse(dump, {});
    REQUIRE(f.content.threads_from == "hprof");
    std::vector<std::uint8_t> text = test::read_file(test::data_path("samples/contentdemo.threads.txt"));
    const std::string jcmd(text.begin(), text.end());
    const Json expected = expected_figures();
    REQUIRE(expected["threads"].size() == 3);
    for (const Json& planted : expected["threads"]) {
        const std::string name = planted["name"].get<std::string>();
        CAPTURE(name);
        auto row = std::find_if(f.content.threads.begin(), f.content.threads.end(),
                                [&](const analysis::ThreadRow& t) { return t.name == name; });
        REQUIRE(row != f.content.threads.end());
        CHECK(row->daemon == planted["daemon"].get<bool>());
        CHECK(row->state == planted["state"].get<std::string>());
        std::vector<JcmdFrame> frames = jcmd_frames(jcmd, name);
        REQUIRE(frames.size() == planted["frame_count"].get<std::size_t>());
        REQUIRE(row->frames.size() == frames.size());
        for (std::size_t i = 0; i < frames.size(); ++i) {
            CAPTURE(i);
            CHECK(row->frames[i].class_name == frames[i].class_name);
            CHECK(row->frames[i].method == frames[i].method);
            if (frames[i].native) CHECK(row->frames[i].line == -3);
            else CHECK(row->frames[i].line == frames[i].line);
        }
        // Each big local is held by its frame alone, so its frame's locals retain at least it.
        std::uint64_t locals_bytes = 0;
        for (const Json& local : planted["big_locals"]) {
            const auto& frame = row->frames[local["frame_index"].get<std::size_t>()];
            CHECK(frame.locals_retained_bytes == local["shallow"].get<std::uint64_t>());
            locals_bytes += local["shallow"].get<std::uint64_t>();
        }
        CHECK(row->retained_bytes > locals_bytes);
    }
}

TEST_CASE("system properties: the planted keys, the hostile value as it was set") {
    LoadedDump dump = load_dump(test::data_path("samples/contentdemo.hprof.gz"), {});
    analysis::Findings f = analysis::analyse(dump, {});
    REQUIRE(f.content.properties_found);
    CHECK(f.content.properties_skipped == 0);
    const Json expected = expected_figures();
    for (const Json& planted : expected["system_properties"]) {
        auto row = std::find_if(f.content.system_properties.begin(), f.content.system_properties.end(),
                                [&](const analysis::SystemProperty& p) { return p.key == planted["key"].get<std::string>(); });
        REQUIRE(row != f.content.system_properties.end());
        CHECK(row->value == planted["value"].get<std::string>());
    }
    auto version = std::find_if(f.content.system_properties.begin(), f.content.system_properties.end(),
                                [](const analysis::SystemProperty& p) { return p.key == "java.vm.version"; });
    REQUIRE(version != f.content.system_properties.end());
    CHECK(version->value == expected["java_vm_version"].get<std::string>());
    CHECK(std::is_sorted(f.content.system_properties.begin(), f.content.system_properties.end(),
                         [](const auto& a, const auto& b) { return a.key < b.key; }));
}

TEST_CASE("collections: capacities and collision ratios of the planted collections") {
    LoadedDump dump = load_dump(test::data_path("samples/contentdemo.hprof.gz"), {});
    analysis::Findings f = analysis::analyse(dump, {});
    REQUIRE(f.capacities.size() == f.collections.size());
    const Json expected = expected_figures();
    for (const Json& planted : expected["collections"]) {
        const std::string name = planted["name"].get<std::string>(), cls = planted["class"].get<std::string>();
        CAPTURE(name);
        // Maps: the buckets in use too (the colliding map's 1,000 keys share one bucket).
        const bool map = planted.contains("buckets_used");
        std::uint64_t found = 0;
        for (std::size_t i = 0; i < f.collections.size(); ++i) {
            const graph::CollectionCount& c = f.collections[i];
            if (dump.graph.classes[dump.graph.types.class_index(c.node)].name != cls || c.entries() != planted["size"].get<std::uint64_t>() ||
                f.capacities[i] != planted["capacity"].get<std::uint32_t>() ||
                (map && c.slots_used != planted["buckets_used"].get<std::uint64_t>()))
                continue;
            ++found;
        }
        // Empty default lists: other empty ArrayLists of the JDK look the same, so at least the planted ones.
        if (name == "empty-default-list") CHECK(found >= planted["count"].get<std::uint64_t>());
        else CHECK(found == planted["count"].get<std::uint64_t>());
    }
}

TEST_CASE("inspector: the largest objects' fields, references with their String text") {
    LoadedDump dump = load_dump(test::data_path("samples/contentdemo.hprof.gz"), {});
    analysis::Findings f = analysis::analyse(dump, {});
    REQUIRE(!f.content.objects.empty());
    // java.lang.System's class object: its statics, props pointing at the Properties.
    auto system = std::find_if(f.content.objects.begin(), f.content.objects.end(), [&](const analysis::InspectedObject& o) {
        return graph::node_class_name(dump.graph, o.node) == "class java.lang.System";
    });
    REQUIRE(system != f.content.objects.end());
    CHECK(system->read);
    auto field = [&](const analysis::InspectedObject& o, const std::string& name) {
        auto it = std::find_if(o.fields.begin(), o.fields.end(), [&](const analysis::ShownValue& v) { return v.name == name; });
        REQUIRE(it != o.fields.end());
        return *it;
    };
    analysis::ShownValue props = field(*system, "props");
    REQUIRE(props.ref_node != graph::kNoNode);
    CHECK(graph::node_class_name(dump.graph, props.ref_node) == "java.util.Properties");
    analysis::ShownValue separator = field(*system, "lineSeparator");
    CHECK(separator.text);
    CHECK(separator.value == "\n");
    // Every suspect's path is inspectable.
    std::set<graph::NodeId> inspected;
    for (const analysis::InspectedObject& o : f.content.objects) inspected.insert(o.node);
    for (const graph::Suspect& s : f.suspects)
        for (graph::NodeId v : s.path) CHECK(inspected.count(v) == 1);
}

TEST_CASE("threads from a javacore (PHD): names, states, daemon and every frame as the javacore lists them") {
    LoadOptions options;
    options.javacore = test::data_path("phd/javacore.20160404.083909.9480.0003.txt");
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20160404.083909.9480.0002.phd"), options);
    analysis::Findings f = analysis::analyse(dump, {});
    REQUIRE(f.content.threads_from == "javacore");
    CHECK(f.content.threads.size() == 17);  // 17 threads listed once each; the current one is listed twice
    std::vector<std::uint8_t> bytes = test::read_file(options.javacore);
    const std::string text(bytes.begin(), bytes.end());
    // main's frames, as the lines after its 3XMTHREADINFO line give them.
    std::size_t at = text.find("3XMTHREADINFO      \"main\"");
    REQUIRE(at != std::string::npos);
    std::vector<std::string> lines;
    for (std::size_t pos = text.find('\n', at) + 1; pos < text.size();) {
        std::size_t end = text.find('\n', pos);
        std::string line = text.substr(pos, end - pos);
        if (line.starts_with("NULL") || line.starts_with("3XMTHREADINFO ")) break;
        if (line.starts_with("4XESTACKTRACE")) lines.push_back(line.substr(line.find("at ") + 3));
        pos = end + 1;
    }
    auto main = std::find_if(f.content.threads.begin(), f.content.threads.end(), [](const auto& t) { return t.name == "main"; });
    REQUIRE(main != f.content.threads.end());
    CHECK(main->state == "RUNNABLE");
    CHECK(main->daemon == false);
    CHECK(main->retained_bytes > 0);
    REQUIRE(main->frames.size() == lines.size());
    REQUIRE(!lines.empty());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const analysis::ThreadFrame& frame = main->frames[i];
        std::string where = frame.line == -3 ? "Native Method" : frame.source + ":" + std::to_string(frame.line);
        std::string name = frame.class_name;
        std::replace(name.begin(), name.end(), '.', '/');
        CHECK(lines[i].starts_with(name + "." + frame.method + "(" + where + ")"));
    }
    auto attach = std::find_if(f.content.threads.begin(), f.content.threads.end(), [](const auto& t) { return t.name == "Attachment 55094"; });
    REQUIRE(attach != f.content.threads.end());
    CHECK(attach->daemon == true);
    REQUIRE(attach->node != graph::kNoNode);
    CHECK(dump.addresses.address_of(attach->node) == 0xFFEB23F0u);
}

TEST_CASE("DumpValues::array_near finds what array() finds, from any hint") {
    DumpValues values;
    for (ObjectId address : {0x100, 0x110, 0x140, 0x1000, 0x1008, 0x9000}) values.arrays.push_back({.address = address});
    std::vector<ObjectId> asked = {0x1, 0x100, 0x108, 0x110, 0x140, 0x141, 0x1000, 0x1008, 0x8fff, 0x9000, 0x9001};
    for (std::size_t start = 0; start < values.arrays.size() + 3; ++start)
        for (ObjectId address : asked) {
            CAPTURE(start);
            CAPTURE(address);
            std::size_t hint = start;
            CHECK(values.array_near(address, hint) == values.array(address));
            CHECK(hint < values.arrays.size());
        }
    // In address order one hint carries from each to the next.
    std::size_t hint = 0;
    for (ObjectId address : asked) CHECK(values.array_near(address, hint) == values.array(address));
    DumpValues none;
    hint = 5;
    CHECK(none.array_near(0x100, hint) == nullptr);
}
