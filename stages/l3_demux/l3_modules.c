/* SPDX-License-Identifier: BSD-3-Clause
 * The stage's side of its modules (l3_modules.h): their keys and counters
 * in the stage's tables, their init and fini, and the stage's hooks made
 * of theirs: a hook one module has is the stage's own (no call more than
 * the module's), one several have calls each in L3_MODULES' order.
 */
#include <string.h>

#include <rte_debug.h>

#include "l3_modules.h"

#define L3_MODULE_PTR(m) &l3_##m##_module,
static const struct l3_module *const l3_modules[] = {L3_MODULES(L3_MODULE_PTR)};
#undef L3_MODULE_PTR
#define L3_N_MODULES RTE_DIM(l3_modules)

int l3_modules_init(struct l3_demux *d, const struct l3_demux_conf *conf,
		    const struct lrx_stage_init *init)
{
	for (unsigned i = 0; i < L3_N_MODULES; i++) {
		int rc = l3_modules[i]->init ? l3_modules[i]->init(d, conf, init) : 0;
		while (rc < 0 && i-- > 0)
			if (l3_modules[i]->fini)
				l3_modules[i]->fini(d);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void l3_modules_fini(void *ctx)
{
	for (unsigned i = L3_N_MODULES; i-- > 0;)
		if (l3_modules[i]->fini)
			l3_modules[i]->fini(ctx);
}

/* The modules' hooks, in L3_MODULES' order (filled by
 * l3_modules_register). */
static struct {
	void (*stage_flush)(void *ctx, bool budget_used);
	void (*flush[L3_N_MODULES])(void *ctx, bool budget_used);
	void (*end_run[L3_N_MODULES])(void *ctx);
	uint16_t (*drop[L3_N_MODULES])(void *ctx, struct rte_mbuf **pkts,
				       enum lrx_drop_reason *reasons, uint16_t max);
	uint16_t (*send[L3_N_MODULES])(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	uint16_t (*consume[L3_N_MODULES])(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	uint32_t (*held[L3_N_MODULES])(const void *ctx);
	uint32_t (*mbuf_hold[L3_N_MODULES])(const void *conf, uint32_t mbuf_size);
	unsigned n_flush, n_end_run, n_drop, n_send, n_consume, n_held, n_mbuf_hold;
} l3_hooks;

static void l3_modules_flush(void *ctx, bool budget_used)
{
	l3_hooks.stage_flush(ctx, budget_used);
	for (unsigned i = 0; i < l3_hooks.n_flush; i++)
		l3_hooks.flush[i](ctx, budget_used);
}

static void l3_modules_end_run(void *ctx)
{
	for (unsigned i = 0; i < l3_hooks.n_end_run; i++)
		l3_hooks.end_run[i](ctx);
}

static uint16_t l3_modules_drop(void *ctx, struct rte_mbuf **pkts,
				enum lrx_drop_reason *reasons, uint16_t max)
{
	uint16_t n = 0;
	for (unsigned i = 0; i < l3_hooks.n_drop; i++)
		n += l3_hooks.drop[i](ctx, pkts + n, reasons + n, max - n);
	return n;
}

static uint16_t l3_modules_send(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = 0;
	for (unsigned i = 0; i < l3_hooks.n_send; i++)
		n += l3_hooks.send[i](ctx, pkts + n, max - n);
	return n;
}

static uint16_t l3_modules_consume(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	uint16_t n = 0;
	for (unsigned i = 0; i < l3_hooks.n_consume; i++)
		n += l3_hooks.consume[i](ctx, pkts + n, max - n);
	return n;
}

static uint32_t l3_modules_held(const void *ctx)
{
	uint32_t n = 0;
	for (unsigned i = 0; i < l3_hooks.n_held; i++)
		n += l3_hooks.held[i](ctx);
	return n;
}

static uint32_t l3_modules_mbuf_hold(const void *conf, uint32_t mbuf_size)
{
	uint32_t n = 0;
	for (unsigned i = 0; i < l3_hooks.n_mbuf_hold; i++)
		n += l3_hooks.mbuf_hold[i](conf, mbuf_size);
	return n;
}

/* rows of a NULL-name terminated table after the n in table */
static unsigned l3_rows_add(void *table, unsigned n, unsigned max, const void *rows,
			    size_t row_size)
{
	for (const char *row = rows; row && *(const char *const *)row; row += row_size) {
		RTE_VERIFY(n + 1 < max); /* and the terminator */
		memcpy((char *)table + n++ * row_size, row, row_size);
	}
	return n;
}

#define L3_KEYS_MAX 64
#define L3_COUNTERS_MAX 160
static struct lrx_value_key l3_keys[L3_KEYS_MAX];
static struct lrx_stage_counter l3_counters[L3_COUNTERS_MAX];

void l3_modules_register(struct lrx_stage *stage, const struct lrx_value_key *keys,
			 const struct lrx_stage_counter *counters,
			 void (*flush)(void *ctx, bool budget_used))
{
	unsigned nk = l3_rows_add(l3_keys, 0, L3_KEYS_MAX, keys, sizeof(*keys));
	unsigned nc = l3_rows_add(l3_counters, 0, L3_COUNTERS_MAX, counters,
				  sizeof(*counters));
	for (unsigned i = 0; i < L3_N_MODULES; i++) {
		const struct l3_module *m = l3_modules[i];
		nk = l3_rows_add(l3_keys, nk, L3_KEYS_MAX, m->keys, sizeof(*keys));
		nc = l3_rows_add(l3_counters, nc, L3_COUNTERS_MAX, m->counters,
				 sizeof(*counters));
		if (m->flush)
			l3_hooks.flush[l3_hooks.n_flush++] = m->flush;
		if (m->end_run)
			l3_hooks.end_run[l3_hooks.n_end_run++] = m->end_run;
		if (m->held)
			l3_hooks.held[l3_hooks.n_held++] = m->held;
		if (m->drop)
			l3_hooks.drop[l3_hooks.n_drop++] = m->drop;
		if (m->send)
			l3_hooks.send[l3_hooks.n_send++] = m->send;
		if (m->consume)
			l3_hooks.consume[l3_hooks.n_consume++] = m->consume;
		if (m->mbuf_hold)
			l3_hooks.mbuf_hold[l3_hooks.n_mbuf_hold++] = m->mbuf_hold;
		RTE_VERIFY(!(m->start && stage->start));
		stage->start = m->start ? m->start : stage->start;
	}
	l3_hooks.stage_flush = flush;
	stage->keys = l3_keys;
	stage->counters = l3_counters;
	stage->flush = l3_modules_flush;
#define L3_HOOK(h) (l3_hooks.n_##h == 1 ? l3_hooks.h[0] : l3_hooks.n_##h ? l3_modules_##h : NULL)
	stage->end_run = L3_HOOK(end_run);
	stage->drop = L3_HOOK(drop);
	stage->send = L3_HOOK(send);
	stage->consume = L3_HOOK(consume);
	stage->held = L3_HOOK(held);
	stage->mbuf_hold = L3_HOOK(mbuf_hold);
#undef L3_HOOK
	lrx_stage_register(stage);
}
