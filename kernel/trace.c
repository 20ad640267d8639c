// SPDX-License-Identifier: GPL-2.0
/*
 * The one file that creates ordma's tracepoints
 * (include/trace/events/ordma.h, found through the module's include path;
 * Documentation/ordma/tracing.rst). It knows nothing else of the module.
 */
#define CREATE_TRACE_POINTS
#include <trace/events/ordma.h>
