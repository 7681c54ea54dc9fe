// Public interface of the format readers: one header per format, and what they share.
// Each format's decoder turns one chunk of bytes into plain records or a DecodeError;
// the pipeline feeds the records to its heap sink (pipeline/edge_blocks.h).
#pragma once

#include "common.h"
#include "hprof.h"
#include "phd.h"
#include "classic.h"
#include "javacore.h"
