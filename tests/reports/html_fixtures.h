// Fixtures for the HTML report tests: heaps whose class and field names are HTML and script
// payloads, as an HPROF file (through the whole pipeline) and as a hand-built graph (names
// that HPROF cannot carry: a '/' in a class name becomes '.').
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis.h"
#include "graph.h"
#include "reports.h"
#include "test_support.h"

namespace heapgraph::test {

inline const std::string kImgPayload = "<img src=x onerror=alert(1)>";
inline const std::string kScriptPayload = "</script><script>alert(1)</script>";
inline const std::string kSvgPayload = "<svg onload=alert(2)>&amp;\"'";

// Two classes named by payloads; an instance of the first, a JNI global root, holds an
// instance of the second through a field whose name is the </script> payload.
inline std::vector<std::uint8_t> payload_hprof() {
    ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0);  // header, id size 8, timestamp
    auto string_record = [&](std::uint64_t id, const std::string& s) {
        b.u1(0x01).u4(0).u4(static_cast<std::uint32_t>(8 + s.size())).id(id).text(s);  // STRING id "s"
    };
    string_record(0x50, kImgPayload);
    string_record(0x51, kSvgPayload);
    string_record(0x52, kScriptPayload);
    b.u1(0x02).u4(0).u4(24).u4(1).id(0x100).u4(0).id(0x50);  // LOAD CLASS 0x100 named 0x50
    b.u1(0x02).u4(0).u4(24).u4(2).id(0x110).u4(0).id(0x51);  // LOAD CLASS 0x110 named 0x51
    ByteBuilder s;
    s.u1(0x20).id(0x100).u4(0).id(0).id(0).id(0).id(0).id(0).id(0).u4(8);  // CLASS DUMP 0x100, instances 8 bytes
    s.u2(0).u2(0).u2(1).id(0x52).u1(2);                                   // no pool, no statics, field 0x52: object
    s.u1(0x20).id(0x110).u4(0).id(0).id(0).id(0).id(0).id(0).id(0).u4(0);  // CLASS DUMP 0x110, no fields
    s.u2(0).u2(0).u2(0);
    s.u1(0x21).id(0x200).u4(0).id(0x100).u4(8).id(0x300);  // INSTANCE 0x200 of 0x100, field -> 0x300
    s.u1(0x21).id(0x300).u4(0).id(0x110).u4(0);            // INSTANCE 0x300 of 0x110
    s.u1(0x05).id(0x100).u1(0x05).id(0x110);                // ROOT STICKY CLASS 0x100, 0x110
    s.u1(0x01).id(0x200).id(0x900);                         // ROOT JNI GLOBAL 0x200 (ref 0x900)
    b.u1(0x1C).u4(0).u4(static_cast<std::uint32_t>(s.size())).text(std::string(s.bytes.begin(), s.bytes.end()));
    b.u1(0x2C).u4(0).u4(0);  // HEAP DUMP END
    return b.bytes;
}

// A root object of the </script> class holds an array whose class name carries U+2028 and
// a `</script` without the '>'; that array holds an <img> object.
struct PayloadGraph {
    graph::HeapGraph graph;
    graph::Retained retained;
    AddressIndex addresses;
};

inline PayloadGraph payload_graph() {
    graph::HeapInput in;
    in.classes = {{kScriptPayload, graph::kNoNode, graph::kNoNode},
                  {kImgPayload, graph::kNoNode, graph::kNoNode},
                  {"line\u2028separator\u2029</script[]", graph::kNoNode, graph::kNoNode}};
    in.types.push_back(graph::NodeKind::instance, 0), in.types.push_back(graph::NodeKind::object_array, 2);
    in.types.push_back(graph::NodeKind::instance, 1);
    in.shallow_bytes = {24, 40, 16};
    in.edges = {{0, 1}, {1, 2}};
    in.roots = {{0, 0, true}};
    in.root_kind_names = {"jni_global"};
    PayloadGraph out{graph::build_heap_graph(std::move(in)), {},
                     AddressIndex::of(std::vector<std::uint64_t>{0x1000, 0x2000, 0x3000})};
    out.retained = graph::compute_retained(out.graph, graph::RetainedOptions{});
    return out;
}

// The findings of a graph built by a test, as a dump at `path` would give them.
// The findings read `addresses` while they live.
inline analysis::Findings analysis_of(graph::HeapGraph& g, const AddressIndex& addresses,
                                      const std::string& path) {
    DumpInfo dump;
    dump.path = path;
    dump.format = "hprof";
    return analysis::analyse({.dump = dump, .graph = g, .addresses = addresses}, {.release_edges = false});
}

}  // namespace heapgraph::test
