// The javacore an IBM/OpenJ9 JVM writes with a PHD: a pure reader (javacore.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common.h"

namespace heapgraph {

// The javacore an IBM/OpenJ9 JVM writes with a PHD (research notes: OpenJ9 DTFJ's javacore
// parser and how Eclipse MAT uses it for a PHD).
struct Javacore {
    // The java/lang/Thread objects of the threads that were alive (states R, CW, P, B, MW),
    // once each, in file order. Java 7+ javacores name them ("java/lang/Thread:0x..."); IBM
    // 1.4.2 ones give only a TID, which there is the Thread object (no "3XMTHREADINFO1"
    // line follows); J9 2.4 (Java 6) ones give only the J9VMThread, which is no heap object.
    std::vector<ObjectId> thread_objects;
    struct Class {
        std::string name;  // as written: "java/lang/String"
        ObjectId address = 0;  // J9: the J9Class, not the heap class; 1.4.2: the heap class
    };
    // "2CLTEXTCLLOAD" sections: each loader's heap object and the classes it loaded. The
    // object is the address in parentheses, or the "Shadow" address (1.4.2); 0 for none.
    struct Loader {
        std::string name;  // "*System*", "sun/misc/Launcher$AppClassLoader"
        ObjectId object = 0;
        std::vector<Class> classes;
    };
    std::vector<Loader> loaders;
    // Every thread the THREADS section lists ("3XMTHREADINFO"), once each, in file order:
    // name, state (J9's code as Thread.State: R RUNNABLE, CW and P WAITING, B and MW BLOCKED,
    // Z TERMINATED; others as written), daemon ("3XMJAVALTHREAD ... isDaemon:"), its Thread
    // object when the line names one, and its Java frames ("4XESTACKTRACE at ...").
    struct Frame {
        std::string class_name;  // Java form: "java.io.FileInputStream"
        std::string method, source;
        std::int32_t line = 0;   // > 0 a line; -3 native, -2 compiled code, 0 none (as HPROF)
    };
    struct Thread {
        std::string name, state;
        std::optional<bool> daemon;
        std::optional<ObjectId> object;
        std::vector<Frame> frames;
    };
    std::vector<Thread> threads;
};
Javacore read_javacore(std::string_view text);

}  // namespace heapgraph
