/* SPDX-License-Identifier: BSD-3-Clause
 * The app's side of the report model (stats.h): reads the run into it. */
#ifndef LISTRX_REPORT_FILL_H
#define LISTRX_REPORT_FILL_H

#include "stats.h"

struct lrx_app;

/* Reads the run into r (while it runs, for telemetry and the periodic
 * line, or after it). r is large: allocate it (lrx_report_alloc). */
void lrx_report_fill(struct lrx_report *r, const struct lrx_app *app);
/* Only the totals and the run time: what the periodic line needs. */
void lrx_report_fill_totals(struct lrx_totals *t, double *seconds,
			    const struct lrx_app *app);
/* Copies every stage's maps into r (freed by lrx_report_free). Returns 0
 * or -ENOMEM (r then has the maps it could copy). */
int lrx_report_fill_maps(struct lrx_report *r, const struct lrx_app *app);

#endif
