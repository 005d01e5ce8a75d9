/* SPDX-License-Identifier: BSD-3-Clause
 * --trace N: the path of the first N packets through the pipeline, as
 * VPP's `trace add`: per stage the verdict and the metadata fields the
 * stage set, a holding stage's hold and release, and the fate at the sink.
 * Recorded by wrappers put in place of the stages' entry points only
 * while tracing (lrx_pipeline_set_trace), so that the engines run their
 * usual code and a run without --trace has no per-packet cost. Each
 * packet's events are kept in pipeline order, whatever the engine, so
 * every engine gives the same trace for the same input.
 */
#ifndef LISTRX_TRACE_H
#define LISTRX_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "meta.h"
#include "pipeline.h"
#include "stage.h"

#define LRX_TRACE_MAX 4096     /* --trace 1..LRX_TRACE_MAX */
#define LRX_TRACE_EVENTS 16    /* per packet; more are counted, not kept */

enum lrx_trace_event_kind {
	LRX_TRACE_STAGE,    /* the stage returned next */
	LRX_TRACE_RELEASED, /* the (holding) stage released it */
	LRX_TRACE_FATE,     /* it left through the sink with next */
};

struct lrx_trace_event {
	uint8_t kind;            /* enum lrx_trace_event_kind */
	uint8_t stage;
	bool has_meta;
	uint32_t set;            /* bit per metadata field the stage changed */
	lrx_next_t next;
	struct lrx_meta meta;    /* after the stage */
};

struct lrx_trace_packet {
	const struct rte_mbuf *mbuf; /* while in the pipeline; NULL once done */
	const void *owner;           /* the pipeline that received it */
	bool done;
	uint16_t port, queue;
	uint32_t len;
	uint8_t n_events;
	uint32_t lost_events;
	struct lrx_trace_event ev[LRX_TRACE_EVENTS];
};

struct lrx_trace {
	uint32_t limit;
	atomic_uint next_id;     /* ids handed out (may pass limit) */
	unsigned n_stages;
	char stage_names[LRX_PIPELINE_MAX_STAGES][LRX_NAME_LEN];
	struct lrx_trace_packet pkt[];
};

struct lrx_trace *lrx_trace_alloc(uint32_t limit);
void lrx_trace_free(struct lrx_trace *t);
/* The packets traced (at most limit). */
uint32_t lrx_trace_count(const struct lrx_trace *t);

#endif
