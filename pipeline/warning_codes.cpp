// The warning registry (warning_codes.h). docs/report-schema.md's table says the same.
#include "warning_codes.h"

#include <algorithm>
#include <array>

namespace heapgraph {

namespace {

constexpr std::array<WarningCode, 17> kCodes{{
    {"roots_to_missing_objects", "root records that name addresses the dump does not contain",
     "those roots are skipped; what only they hold shows as unreachable"},
    {"system_classes_as_roots", "no ROOT STICKY CLASS records, so bootstrap classes were made roots (as MAT does)",
     "none: the usual reading of such dumps"},
    {"referents_unread",
     "Reference objects whose referent could not be read back from the file (a record split across segments)",
     "leak-suspect paths may run through their referents"},
    {"phd_class_refs_dropped", "J9 writes an object's class as its first reference: those references are dropped, as DTFJ does",
     "none: the object keeps its class edge"},
    {"javacore_threads_missing", "threads of the --javacore whose thread object is not in the dump",
     "their stacks add no roots"},
    {"dangling_references",
     "more than a fifth of all references name addresses the dump does not contain (the count is always in "
     "summary.dangling_references)",
     "far more than HotSpot's usual omissions: the dump may be damaged or filtered; what the missing objects held "
     "shows as unreachable"},
    {"unnamed_classes", "classes with no LOAD CLASS name record", "shown as `<unnamed class 0x…>`"},
    {"class_name_strings_missing", "LOAD CLASS records whose name string id has no STRING record (the first is named by offset)",
     "their classes are shown as `<unnamed class 0x…>`"},
    {"empty_class_names", "LOAD CLASS records whose name string is empty (the first is named by offset)",
     "shown as `<unnamed class 0x…>`"},
    {"arrays_without_class_dump", "object arrays whose array class has no CLASS DUMP", "those arrays have no class edge"},
    {"heap_dump_end_missing", "the last run of segments has no HEAP DUMP END",
     "none in a complete file; a sign of truncation otherwise"},
    {"stray_heap_dump_end", "a HEAP DUMP END with no segments open", "none: the record is skipped"},
    {"classic_trailer_mismatch", "a classic text file's `// Breakdown` trailer disagrees with the records read",
     "none for the figures, which count the records; the file may have been edited or cut"},
    {"truncated", "the dump is cut short and was read with `--allow-truncated`: where it ends and what was lost",
     "objects and references past the cut are missing (docs/hardening.md)"},
    {"values_unavailable", "the format records no field values or array contents (PHD, classic text)",
     "duplicate strings and arrays and system properties are empty; collection capacities and fill ratios are null; inspected objects have no fields; threads come only from a --javacore"},
    {"values_split_arrays", "primitive arrays whose record a segment boundary splits in the file",
     "their contents are not compared: they join no duplicate group"},
    {"truncated_output",
     "the report was cut to stay bounded: names over 1,024 bytes, sections over 50,000 rows, suspects past the 100 "
     "biggest, suspect paths over 100 steps (see `path_omitted`); the message lists each cut",
     "the rows left out are the smallest; nothing a real dump holds comes near these limits except by mistake or malice"},
}};

}  // namespace

std::span<const WarningCode> warning_codes() { return kCodes; }

std::size_t warning_rank(std::string_view code) {
    return static_cast<std::size_t>(
        std::find_if(kCodes.begin(), kCodes.end(), [&](const WarningCode& w) { return w.code == code; }) - kCodes.begin());
}

}  // namespace heapgraph
