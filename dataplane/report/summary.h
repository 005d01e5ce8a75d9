/* SPDX-License-Identifier: BSD-3-Clause
 * Renderers of the report model (stats.h) to text and JSON. They read the
 * model only, one short function per section. */
#ifndef LISTRX_SUMMARY_H
#define LISTRX_SUMMARY_H

#include <stdio.h>

#include "json.h"
#include "stats.h"

/* The periodic line's second part, over the period */
enum lrx_stats_view {
	LRX_STATS_VIEW_STAGES, /* per stage: packets/s, vectors/call, ns/packet, drops/s */
	LRX_STATS_VIEW_PORTS,  /* per port and queue: packets/s */
	LRX_STATS_VIEW_LCORES, /* per lcore: packets/s, polls/s, empty and busy share */
};

/* The exit report: ports and queues, lcores, stages (VPP show runtime
 * style), what each stage did, drops by reason. */
void lrx_summary_print(const struct lrx_report *r, FILE *out);
/* The summary as JSON at path; returns 0 or -errno. */
int lrx_summary_write_json(const struct lrx_report *r, const char *path);
/* The summary object into an open writer. */
void lrx_summary_json(const struct lrx_report *r, struct lrx_json *j);
/* maps.c: the stages' maps (lrx_report_fill_maps) as bpftool map dump
 * shows them. "maps": every entry, bytes and, with a layout, the decoded
 * fields ("formatted", and the value's fields by name) */
void lrx_summary_json_maps(const struct lrx_report *r, struct lrx_json *j);
/* The text summary's maps: a line per map, then its entries (at most 16;
 * an array's zero values left out), as columns of fields with a layout */
void lrx_summary_text_maps(const struct lrx_report *r, FILE *out);
/* One entry as a line: "KEY: VALUE", each as name=value fields with a
 * layout, else hex and the integer */
void lrx_map_entry_line(const struct lrx_report_map *m, const uint8_t *key, char *buf,
			size_t len);
/* The layout describes fields inside keys and values of these sizes */
bool lrx_map_layout_fits(const struct lrx_map_layout *l, uint32_t key_size, uint32_t value_size);
/* A map key or value: "0a 00 00 00" (truncated to fit len) */
void lrx_map_hex(char *buf, size_t len, const uint8_t *bytes, uint32_t n);
/* A 4- or 8-byte key or value as an integer (host order, as the program
 * sees it); false for other sizes. */
bool lrx_map_int(const uint8_t *bytes, uint32_t n, uint64_t *value);
/* One line of periodic stats: rates since prev (at prev_seconds), totals
 * t at now. */
void lrx_stats_line(const struct lrx_totals *t, double now, const struct lrx_totals *prev,
		    double prev_seconds, FILE *out);
/* The periodic line's second part: the view over a period (a report
 * minus the one before, lrx_report_sub). */
void lrx_stats_view_line(const struct lrx_report *period, enum lrx_stats_view view,
			 FILE *out);

/* An interleaved run (interleave.c): per lcore each engine's fates and
 * windows, the signals, the bookkeeping; in the JSON the windows. */
bool lrx_interleaved(const struct lrx_report *r);
void lrx_interleave_print(const struct lrx_report *r, FILE *out);
void lrx_interleave_json(const struct lrx_report *r, struct lrx_json *j);

struct lrx_trace;        /* trace.h */
struct lrx_trace_packet;

/* --trace (trace.c): the recorded paths. Event i of a packet as one
 * line: where, verdict, the fields set. */
void lrx_trace_event_line(const struct lrx_trace *t, const struct lrx_trace_packet *tp,
			  unsigned i, char *buf, size_t len);
void lrx_trace_print(const struct lrx_trace *t, FILE *out);
void lrx_trace_json(const struct lrx_trace *t, struct lrx_json *j);

#endif
