// PHD through the pipeline: every file in data/phd loads with its record counts, every
// object is reachable from the inferred roots or counted apart, and thread counts agree.
#include <doctest/doctest.h>

#include <chrono>
#include <map>

#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;

TEST_CASE("phd pipeline: each PHD loads with its measured counts and MAT's root rule") {
    struct Case {
        const char* file;
        std::uint64_t classes, instances, object_arrays, primitive_arrays;
        const char* version;
    };
    for (Case c : {Case{"phd/heapdump.20100112.141124.11580.0002.phd", 411, 2720, 555, 1583, "PHD 5 (J9)"},
                   Case{"phd/heapdump.20100209.165721.4484.phd", 341, 2479, 209, 1701, "PHD 5"},
                   Case{"phd/heapdump.20160404.083909.9480.0002.phd", 917, 33647, 1073, 20618, "PHD 6 (J9)"}}) {
        CAPTURE(c.file);
        LoadedDump dump = load_dump(test::data_path(c.file), {});
        graph::Summary s = graph::summarize(dump.graph);
        CHECK(dump.info.format == "phd");
        CHECK(dump.info.format_version == c.version);
        CHECK(s.classes == c.classes);
        CHECK(s.instances == c.instances);
        CHECK(s.object_arrays == c.object_arrays);
        CHECK(s.primitive_arrays == c.primitive_arrays);
        CHECK(dump.graph.root_kind_names[0] == "system_class");
        CHECK(s.gc_roots_by_kind[0] > 0);
        CHECK(s.gc_roots_by_kind[1] > 0);
        CHECK(s.reachable_objects + s.unreachable_objects == s.objects);
    }
}

TEST_CASE("phd pipeline: the v6 dump's array sizes come from its records") {
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20160404.083909.9480.0002.phd"), {});
    std::uint64_t array_bytes = 0;
    for (graph::NodeId v = 0; v < dump.graph.node_count(); ++v)
        if (dump.graph.types.kind(v) == graph::NodeKind::object_array || dump.graph.types.kind(v) == graph::NodeKind::primitive_array)
            array_bytes += dump.graph.shallow_bytes[v];
    CHECK(array_bytes == 1'998'032);  // PROVENANCE: the v6 file's array instance sizes
}

TEST_CASE("phd pipeline: JSON is byte-identical for 1 and 2 threads") {
    std::string file = test::data_path("phd/heapdump.20160404.083909.9480.0002.phd");
    test::Run one = test::run("analyze " + file + " --threads 1 --json - 2>/dev/null");
    test::Run two = test::run("analyze " + file + " --threads 2 --json - 2>/dev/null");
    CHECK(one.code == 0);
    CHECK(one.out == two.out);
}

TEST_CASE("phd pipeline: the CLI keeps every object of a PHD, as MAT does") {
    // The IBM 1.4.2 dump has objects in cycles that nothing outside references: with no real
    // roots they cannot be told from live ones, so they are kept and rooted.
    test::Run r = test::run("analyze " + test::data_path("phd/heapdump.20100209.165721.4484.phd") + " --json - 2>/dev/null");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"keep_unreachable\": true") != std::string::npos);
    CHECK(r.out.find("\"unreachable_histogram\": []") != std::string::npos);
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20100209.165721.4484.phd"), {});
    CHECK(graph::summarize(dump.graph).unreachable_objects > 0);  // before keeping them
}

TEST_CASE("phd pipeline: --javacore adds the thread objects a javacore names as roots") {
    LoadOptions options;
    options.javacore = test::data_path("phd/javacore.20160404.083909.9480.0003.txt");
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20160404.083909.9480.0002.phd"), options);
    graph::Summary s = graph::summarize(dump.graph);
    REQUIRE(dump.graph.root_kind_names.size() == 3);
    CHECK(dump.graph.root_kind_names[2] == "thread_object");
    CHECK(s.gc_roots_by_kind[2] == 16);  // 16 live threads with "java/lang/Thread:0x", all in the dump
    CHECK(dump.warnings.size() == 1);    // the class-ref quirk only: no thread is missing
    // The 2010 javacore names J9VMThreads only, no Thread objects: nothing to add.
    options.javacore = test::data_path("phd/javacore.20100112.141124.11580.0003.txt");
    LoadedDump old = load_dump(test::data_path("phd/heapdump.20100112.141124.11580.0002.phd"), options);
    CHECK(graph::summarize(old.graph).gc_roots_by_kind[2] == 0);
}

TEST_CASE("phd pipeline: javacore thread lines give their Thread object addresses") {
    std::string text =
        "1CITHREADS\n"
        "3XMTHREADINFO      \"main\" J9VMThread:0x0000000002D00500, j9thread_t:0x00000000007A75C0, "
        "java/lang/Thread:0x00000000FFB23D90, state:R, prio=5\n"
        "3XMTHREADINFO      \"old\" TID:0x000CBD00, j9thread_t:0x00295524, state:R, prio=5\n"
        "3XMTHREADINFO1            (native thread ID:0x1, java/lang/Thread:0x00000000DEADBEE0)\n";
    CHECK(read_javacore(text).thread_objects == std::vector<ObjectId>{0xFFB23D90});
}

namespace {

// Classes per loader, by the loader object's address (0: the bootstrap loader).
std::map<ObjectId, std::uint64_t> classes_by_loader(const LoadedDump& dump) {
    std::map<ObjectId, std::uint64_t> counts;
    for (const graph::ClassInfo& c : dump.graph.classes)
        if (c.node != graph::kNoNode) ++counts[c.loader == graph::kNoNode ? 0 : dump.addresses.address_of(c.loader)];
    return counts;
}

}  // namespace

TEST_CASE("phd pipeline: the 2016 dump's classes go to the loaders its javacore lists, from the dump alone") {
    // DTFJ's rule (the loader a class record references; the loader of java/lang/Class is the
    // bootstrap loader) against the javacore's "Number of loaded classes" per loader.
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20160404.083909.9480.0002.phd"), {});
    std::map<ObjectId, std::uint64_t> expected{
        {0, 906}, {0xFFB23C78, 1}, {0xFFB23CE0, 9}, {0xFFC61C50, 1}};  // *System*, Ext, App, Delegating
    CHECK(classes_by_loader(dump) == expected);
    // MAT's SYSTEM_CLASS roots: the bootstrap loader object and its classes.
    CHECK(graph::summarize(dump.graph).gc_roots_by_kind[0] == 906 + 1);
}

TEST_CASE("phd pipeline: a javacore moves the classes it lists to their loaders") {
    LoadOptions options;
    options.javacore = test::data_path("phd/javacore.20100112.141124.11580.0003.txt");
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20100112.141124.11580.0002.phd"), options);
    std::map<ObjectId, std::uint64_t> expected{{0, 395}, {0xCFD6D0, 16}};  // the javacore's counts
    CHECK(classes_by_loader(dump) == expected);
    // Alone, J9 2.4 records name a loader in only some classes, and the bootstrap loader's
    // object defines too few java/lang classes to be recognised: those classes keep it.
    LoadedDump alone = load_dump(test::data_path("phd/heapdump.20100112.141124.11580.0002.phd"), {});
    std::map<ObjectId, std::uint64_t> found = classes_by_loader(alone);
    CHECK(found[0xCFD6D0] == 16);
    CHECK(found[0] + found[0xCF6898] == 395);
    CHECK(graph::summarize(alone.graph).gc_roots_by_kind[0] == found[0]);
}

TEST_CASE("phd pipeline: an IBM 1.4.2 javacore gives Thread objects by TID and loaders by Shadow address") {
    LoadOptions options;
    options.javacore = test::data_path("phd/javacore.20100209.165721.4484.txt");
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20100209.165721.4484.phd"), options);
    CHECK(graph::summarize(dump.graph).gc_roots_by_kind[2] == 4);  // 4 live threads, each listed once
    CHECK(classes_by_loader(dump)[0x00BADF58] == 16);  // AppClassLoader's 16, at its Shadow object
}

TEST_CASE("phd pipeline: javacore thread states and loader sections are read as DTFJ reads them") {
    std::string text =
        "3XMTHREADINFO      \"a\" (TID:0xBAE1B8, sys_thread_t:0x2B2460, state:R, native ID:0xE38) prio=5\n"
        "3XMTHREADINFO      \"dead\" (TID:0xBAE200, sys_thread_t:0x2B2460, state:Z, native ID:0xE38) prio=5\n"
        "3XMTHREADINFO      \"j9\" TID:0x000CBD00, j9thread_t:0x00295524, state:R, prio=5\n"
        "3XMTHREADINFO1            (native thread ID:0x1)\n"
        "3XMTHREADINFO      \"a\" (TID:0xBAE1B8, sys_thread_t:0x2B2460, state:R, native ID:0xE38) prio=5\n"
        "2CLTEXTCLLOADER\t\t-----ta- Loader x/App(0x017ADDF0), Shadow 0x00BADF58, Parent *none*(0x0)\n"
        "2CLTEXTCLLOAD  \t\tLoader x/App(0x017ADDF0)\n"
        "3CLTEXTCLASS   \t\t\tx/Main(0x00BA1668)\r\n";
    Javacore core = read_javacore(text);
    CHECK(core.thread_objects == std::vector<ObjectId>{0xBAE1B8});
    REQUIRE(core.loaders.size() == 1);
    CHECK(core.loaders[0].name == "x/App");
    CHECK(core.loaders[0].object == 0x00BADF58);
    REQUIRE(core.loaders[0].classes.size() == 1);
    CHECK(core.loaders[0].classes[0].name == "x/Main");
    CHECK(core.loaders[0].classes[0].address == 0x00BA1668);
}

namespace {

test::ByteBuilder phd_header_32bit_j9() {
    test::ByteBuilder b;
    b.id_size = 4;
    b.bytes.reserve(1 << 20);             // also keeps gcc 12 from a false -Wstringop-overflow
    b.u2(18).text("portable heap dump");  // UTF magic
    b.u4(6).u4(4);                        // version 6; flags: J9, 32-bit
    b.u1(1).u1(2);                        // start of header, end of header
    b.u1(2);                              // start of dump
    return b;
}

}  // namespace

TEST_CASE("phd pipeline: a long chain of super classes costs time in proportion to its length") {
    // Each class record names the one before as its super class: finding the class loader
    // classes once walked the whole chain above every class, 50,000^2 / 2 steps for a 1.2 MB file.
    constexpr std::uint32_t kClasses = 50000;
    test::ByteBuilder b = phd_header_32bit_j9();
    auto class_record = [&](std::uint64_t gap_flags, std::uint64_t gap, int gap_bytes, std::uint64_t super) {
        b.u1(6);                      // class record
        b.u1(gap_flags);              //   flags: gap size in the top two bits, byte references
        b.u(gap, gap_bytes);          //   gap in 4-byte units
        b.u4(16);                     //   instance size
        b.u4(super);                  //   super class
        b.u2(1).u1('C');              //   name "C"
        b.u4(0);                      //   no references
    };
    class_record(0x80, 0x00C00000 >> 2, 4, 0);  // at 0xC00000 (an int gap), no super class
    for (std::uint32_t i = 1; i < kClasses; ++i)
        class_record(0x00, 4, 1, 0x00C00000 + 16 * (i - 1));  // 16 bytes on; super: the one before
    b.u1(3);  // end of dump
    auto start = std::chrono::steady_clock::now();
    LoadedDump dump = load_dump_bytes(b.bytes, "chain.phd", {});
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(graph::summarize(dump.graph).classes == kClasses);
    CHECK(seconds < 3.0);
}
