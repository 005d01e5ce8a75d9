/* SPDX-License-Identifier: BSD-3-Clause
 * The measured window of a callgrind run ([run] measure_from): callgrind
 * simulates caches from the first poll and collects costs only from the
 * poll that reaches measure_from packets to the end of the run, so one
 * process gives steady-state costs per packet without start-up, exit or
 * the cold first packets (listrx-bench's cachegrind backend). Outside
 * valgrind the client requests are a few no-op instructions, taken twice
 * per run. */
#ifndef LISTRX_MEASURE_H
#define LISTRX_MEASURE_H

#include <stdbool.h>

/* Built with valgrind/callgrind.h: the client requests exist. */
bool lrx_measure_available(void);
/* CALLGRIND_START_INSTRUMENTATION: cache simulation on, collection off
 * (callgrind --instr-atstart=no --collect-atstart=no). */
void lrx_measure_instrument(void);
/* CALLGRIND_TOGGLE_COLLECT: costs from here on count (called again: stop). */
void lrx_measure_toggle_collect(void);

#endif
