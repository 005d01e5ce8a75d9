/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LISTRX_SUMMARY_H
#define LISTRX_SUMMARY_H

#include <stdio.h>

#include "app.h"
#include "json.h"
#include "stats.h"

/* The exit report: ports and queues, lcores, stages (VPP show runtime
 * style), drops by reason. */
void lrx_summary_print(const struct lrx_app *app, FILE *out);
/* The summary as JSON at path; returns 0 or -errno. */
int lrx_summary_write_json(const struct lrx_app *app, const char *path);
/* The summary object into an open writer (telemetry reuses parts). */
void lrx_summary_json(const struct lrx_app *app, struct lrx_json *j);
/* One line of periodic stats: rates since prev, totals; updates prev. */
void lrx_stats_line(const struct lrx_app *app, struct lrx_totals *prev,
		    double *prev_seconds, FILE *out);

#endif
