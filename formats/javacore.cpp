// Reads what heap analysis needs out of an IBM/OpenJ9 javacore (the text thread dump written
// beside a PHD): the Thread objects of live threads ("3XMTHREADINFO" lines) and which loader
// loaded which class ("2CLTEXTCLLOADER" / "2CLTEXTCLLOAD" / "3CLTEXTCLASS" lines). The rules
// follow OpenJ9 DTFJ's javacore parser (ThreadInfoLineRule, ThreadSectionParser,
// ClassLoaderSectionParser), restated in docs/heap-graph.md.
#include <algorithm>
#include <charconv>
#include <map>

#include "formats.h"

namespace heapgraph {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// The hex number after `key` ("TID:0x..."), or nullopt. `digits` gets its text.
std::optional<ObjectId> hex_after(std::string_view line, std::string_view key, std::string_view* digits = nullptr) {
    std::size_t found = line.find(key);
    if (found == std::string_view::npos) return std::nullopt;
    std::string_view hex = line.substr(found + key.size());
    ObjectId value = 0;
    auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
    if (ec != std::errc()) return std::nullopt;
    if (digits) *digits = hex.substr(0, static_cast<std::size_t>(ptr - hex.data()));
    return value;
}

bool alive(std::string_view line) {
    std::size_t at = line.find("state:");
    if (at == std::string_view::npos) return false;
    std::string_view state = line.substr(at + 6);
    state = state.substr(0, state.find_first_of(", )"));
    return state == "R" || state == "CW" || state == "P" || state == "B" || state == "MW";
}

struct PendingThread {
    std::optional<ObjectId> object, tid;
    bool tid_is_j9 = false, has_info1 = false, alive = false;
};

// 1.4.2 writes no Thread object: its TID is one, unless an info1 line follows or the TID
// starts "0x0" (a Java 5 J9VMThread).
std::optional<ObjectId> thread_object(const PendingThread& t) {
    if (!t.alive) return std::nullopt;
    if (t.object) return t.object;
    if (t.tid && !t.has_info1 && !t.tid_is_j9) return t.tid;
    return std::nullopt;
}

PendingThread read_thread_line(std::string_view line) {
    PendingThread t;
    t.alive = alive(line);
    t.object = hex_after(line, "java/lang/Thread:0x");
    std::string_view digits;
    if ((t.tid = hex_after(line, "TID:0x", &digits))) t.tid_is_j9 = digits.starts_with('0');
    else t.tid = hex_after(line, "J9VMThread:0x"), t.tid_is_j9 = true;
    return t;
}

// "Loader sun/misc/Launcher$AppClassLoader(0x017ADDF0), Shadow 0x00BADF58, Parent ..."
// gives the name, the address in parentheses and the Shadow address when there is one.
struct LoaderLine {
    std::string name;
    ObjectId address = 0;
    std::optional<ObjectId> shadow;
};
std::optional<LoaderLine> read_loader_line(std::string_view line) {
    std::size_t at = line.find("Loader ");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = line.substr(at + 7);
    std::size_t open = rest.find("(0x");
    if (open == std::string_view::npos) return std::nullopt;
    LoaderLine loader{std::string(rest.substr(0, open)), hex_after(rest, "(0x").value_or(0), std::nullopt};
    loader.shadow = hex_after(rest, "Shadow 0x");
    return loader;
}

// "java/security/BasicPermissionCollection(0x02108150)"
std::optional<Javacore::Class> read_class_line(std::string_view rest) {
    rest = trim(rest);
    std::size_t open = rest.rfind("(0x");
    if (open == std::string_view::npos) return std::nullopt;
    return Javacore::Class{std::string(rest.substr(0, open)), hex_after(rest.substr(open), "(0x").value_or(0)};
}

// J9's thread state codes as java.lang.Thread.State names.
std::string thread_state(std::string_view line) {
    std::size_t at = line.find("state:");
    if (at == std::string_view::npos) return {};
    std::string_view code = line.substr(at + 6);
    code = code.substr(0, code.find_first_of(", )"));
    if (code == "R") return "RUNNABLE";
    if (code == "CW" || code == "P") return "WAITING";
    if (code == "B" || code == "MW") return "BLOCKED";
    if (code == "Z") return "TERMINATED";
    return std::string(code);
}

// "3XMTHREADINFO      "main" TID:0x..., state:R, prio=5": the name between the first and the
// last quote on the line (a name may hold quotes).
Javacore::Thread read_thread_info(std::string_view line) {
    Javacore::Thread t;
    std::size_t open = line.find('"'), close = line.rfind('"');
    if (open != std::string_view::npos && close > open) t.name = std::string(line.substr(open + 1, close - open - 1));
    t.state = thread_state(line.substr(close == std::string_view::npos ? 0 : close));
    return t;
}

// "at java/io/FileInputStream.read(FileInputStream.java:213)", "(Native Method)",
// "(Compiled Code)", "(Bytecode PC:12)".
std::optional<Javacore::Frame> read_frame_line(std::string_view line) {
    std::size_t at = line.find(" at ");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = trim(line.substr(at + 4));
    std::size_t open = rest.find('('), dot = rest.substr(0, open).rfind('.');
    if (open == std::string_view::npos || dot == std::string_view::npos) return std::nullopt;
    Javacore::Frame f;
    f.class_name = java_class_name(rest.substr(0, dot));
    f.method = std::string(rest.substr(dot + 1, open - dot - 1));
    std::string_view where = rest.substr(open + 1);
    where = where.substr(0, where.rfind(')'));
    if (where == "Native Method") f.line = -3;
    else if (where == "Compiled Code") f.line = -2;
    else if (std::size_t colon = where.rfind(':'); colon != std::string_view::npos && !where.starts_with("Bytecode")) {
        f.source = std::string(where.substr(0, colon));
        std::from_chars(where.data() + colon + 1, where.data() + where.size(), f.line);
    } else if (!where.starts_with("Bytecode")) {
        f.source = std::string(where);
    }
    return f;
}

class JavacoreReader {
public:
    void line(std::string_view line) {
        if (line.starts_with("3XMTHREADINFO ")) {
            finish_thread();
            thread_ = read_thread_line(line);
            core_.threads.push_back(read_thread_info(line));
            listed_ = true;
        } else if (line.starts_with("3XMJAVALTHREAD") && listed_) {
            if (line.find("isDaemon:true") != std::string_view::npos) core_.threads.back().daemon = true;
            else if (line.find("isDaemon:false") != std::string_view::npos) core_.threads.back().daemon = false;
        } else if (line.starts_with("4XESTACKTRACE") && listed_) {
            if (auto frame = read_frame_line(line)) core_.threads.back().frames.push_back(std::move(*frame));
        } else if (line.starts_with("NULL") || line.starts_with("0SECTION") || line.starts_with("1XMTHDINFO")) {
            listed_ = false;
        } else if (line.starts_with("3XMTHREADINFO1") && thread_) {
            thread_->has_info1 = true;
        } else if (line.starts_with("2CLTEXTCLLOADER")) {
            if (auto loader = read_loader_line(line))
                objects_[loader->address] = loader->shadow.value_or(loader->address);
        } else if (line.starts_with("2CLTEXTCLLOAD ")) {
            if (auto loader = read_loader_line(line)) {
                auto known = objects_.find(loader->address);
                core_.loaders.push_back({loader->name, known != objects_.end() ? known->second : loader->address, {}});
            }
        } else if (line.starts_with("3CLTEXTCLASS") && !core_.loaders.empty()) {
            if (auto cls = read_class_line(line.substr(12))) core_.loaders.back().classes.push_back(std::move(*cls));
        }
    }

    Javacore finish() {
        finish_thread();
        drop_repeated_threads();
        return std::move(core_);
    }

private:
    // Some javacores list a thread twice (the current thread, then all): keep the first,
    // with the frames of whichever listing has them.
    void drop_repeated_threads() {
        std::vector<Javacore::Thread> kept;
        for (Javacore::Thread& t : core_.threads) {
            auto same = std::find_if(kept.begin(), kept.end(), [&](const Javacore::Thread& k) {
                return k.name == t.name && k.object == t.object && k.state == t.state;
            });
            if (same == kept.end()) kept.push_back(std::move(t));
            else if (same->frames.empty()) same->frames = std::move(t.frames);
        }
        core_.threads = std::move(kept);
    }

    void finish_thread() {
        if (!thread_) return;
        if (!core_.threads.empty()) core_.threads.back().object = thread_object(*thread_);  // needs the info1 line
        std::optional<ObjectId> object = thread_object(*thread_);
        thread_.reset();
        auto& threads = core_.thread_objects;
        if (object && *object && std::find(threads.begin(), threads.end(), *object) == threads.end())
            threads.push_back(*object);
    }

    Javacore core_;
    std::optional<PendingThread> thread_;
    bool listed_ = false;  // lines belong to the last thread listed
    std::map<ObjectId, ObjectId> objects_;  // loader address in parentheses -> heap object
};

}  // namespace

Javacore read_javacore(std::string_view text) {
    JavacoreReader reader;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        reader.line(text.substr(at, end - at));
        at = end + 1;
    }
    return reader.finish();
}

}  // namespace heapgraph
