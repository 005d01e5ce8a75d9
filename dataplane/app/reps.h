/* SPDX-License-Identifier: BSD-3-Clause
 * --reps N: perf stat -r for listrx: N runs, each a fresh process, then
 * the median and [min-max] of throughput, ns/packet and the counts. */
#ifndef LISTRX_REPS_H
#define LISTRX_REPS_H

#include <stdbool.h>
#include <stdio.h>

#define LRX_REPS_MAX 1000

struct lrx_reps_args {
	int argc;
	char **argv;         /* the command line to run again (argv[0] first) */
	const bool *skip;    /* argv[i] left out (--reps and its value) */
	unsigned reps;
	const char *json_path; /* the summary of the reps, "-" = stdout, "" = none */
	FILE *human;         /* per-rep lines and the summary */
};

/* Returns the exit status: 0, or the first failing rep's. */
int lrx_reps_run(const struct lrx_reps_args *a);

#endif
