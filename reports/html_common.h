// Escaping shared by the HTML pages (internal to reports/). A dump's strings reach a page
// either as HTML text (html_escape) or inside JSON embedded in a <script> element
// (script_safe), where `<`, `>`, `&`, U+2028 and U+2029 become \uXXXX: no string can close
// the element, and JSON.parse reads them back unchanged.
#pragma once

#include <string>

namespace heapgraph::reports::html {

inline std::string script_safe(const std::string& json) {
    std::string out;
    out.reserve(json.size() + json.size() / 16);
    for (std::size_t i = 0; i < json.size(); ++i) {
        char c = json[i];
        if (c == '<') out += "\\u003c";
        else if (c == '>') out += "\\u003e";
        else if (c == '&') out += "\\u0026";
        else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' && (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
            out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
            i += 2;
        } else out += c;
    }
    return out;
}

inline std::string html_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace heapgraph::reports::html
