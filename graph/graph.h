// The heap graph library's headers, by concern: the graph itself (CSR, roots, histograms),
// dominators and retained sizes, collections, suspects and paths, holders. Include the one
// you need; this umbrella is for code that uses all of them.
#pragma once

#include "collections.h"
#include "dominators.h"
#include "heap_graph.h"
#include "holders.h"
#include "suspects.h"
