/* SPDX-License-Identifier: BSD-3-Clause
 * The tc-ingress stage's maps for the report and telemetry: per-filter
 * and per-action counters (what `tc -s filter show` prints), the bpf
 * filters' program maps, and telemetry's writes into them.
 */
#include <string.h>

#include "tc_ingress_int.h"
#include "ebpf/ebpf.h"
#include "ebpf/ebpf_map_init.h"

/* ---- the report: per-filter counters and the programs' maps --------------
 * Map 0 "filters": key the filter's index in the file (u32), value
 * {runs, packets, bytes} (3 x u64): runs = times the classifier tried it,
 * packets/bytes = times it gave the verdict (tc -s filter show's counts,
 * which this kernel shows for neither cls_bpf nor u32). Then each
 * program's maps, in file order. */
#define TC_FILTERS_VALUE_SIZE 24
static const struct lrx_map_layout tc_filters_layout = {
	.n_fields = 4,
	.fields = {
		{.name = "filter", .offset = 0, .size = 4, .count = 1,
		 .part = LRX_MAP_KEY, .kind = LRX_MAP_UINT},
		{.name = "runs", .offset = 0, .size = 8, .count = 1,
		 .part = LRX_MAP_VALUE, .kind = LRX_MAP_UINT},
		{.name = "pkts", .offset = 8, .size = 8, .count = 1,
		 .part = LRX_MAP_VALUE, .kind = LRX_MAP_UINT},
		{.name = "bytes", .offset = 16, .size = 8, .count = 1,
		 .part = LRX_MAP_VALUE, .kind = LRX_MAP_UINT},
	},
};

/* Map 1 "actions" (when a filter has an action): key the filter's index
 * and the action's place in its list (1, 2...: tc's "order"), value
 * what tc -s shows of the action: Sent pkt and bytes, dropped,
 * overlimits. */
#define TC_ACTIONS_VALUE_SIZE 32
static const struct lrx_map_layout tc_actions_layout = {
	.n_fields = 6,
	.fields = {
		{.name = "filter", .offset = 0, .size = 4, .count = 1,
		 .part = LRX_MAP_KEY, .kind = LRX_MAP_UINT},
		{.name = "order", .offset = 4, .size = 4, .count = 1,
		 .part = LRX_MAP_KEY, .kind = LRX_MAP_UINT},
		{.name = "pkts", .offset = 0, .size = 8, .count = 1,
		 .part = LRX_MAP_VALUE, .kind = LRX_MAP_UINT},
		{.name = "bytes", .offset = 8, .size = 8, .count = 1,
		 .part = LRX_MAP_VALUE, .kind = LRX_MAP_UINT},
		{.name = "dropped", .offset = 16, .size = 8, .count = 1,
		 .part = LRX_MAP_VALUE, .kind = LRX_MAP_UINT},
		{.name = "overlimits", .offset = 24, .size = 8, .count = 1,
		 .part = LRX_MAP_VALUE, .kind = LRX_MAP_UINT},
	},
};

static unsigned tc_action_count(const struct tc_ctx *c)
{
	unsigned n = 0;

	for (unsigned f = 0; f < c->n_filters; f++)
		n += c->filters[f].n_actions;
	return n;
}

/* the action at row *cursor of the "actions" map: its key and counters */
static bool tc_action_row(const struct tc_ctx *c, uint32_t row, uint32_t key[2],
			  uint64_t value[4])
{
	for (unsigned f = 0; f < c->n_filters; f++) {
		if (row >= c->filters[f].n_actions) {
			row -= c->filters[f].n_actions;
			continue;
		}
		const struct tc_action_run *a = &c->run[f].acts[row];
		key[0] = f;
		key[1] = row + 1;
		value[0] = a->packets;
		value[1] = a->bytes;
		value[2] = a->drops;
		value[3] = a->overlimits;
		return true;
	}
	return false;
}

static struct lrx_xdp_map *tc_prog_map(const struct tc_ctx *c, unsigned i)
{
	for (unsigned f = 0; c->run && f < c->n_filters; f++) {
		struct lrx_xdp_prog *prog = c->run[f].prog;
		unsigned n = prog ? lrx_xdp_prog_map_count(prog) : 0;
		if (i < n)
			return lrx_xdp_prog_map_at(prog, i);
		i -= n;
	}
	return NULL;
}

bool tc_map_at(const void *ctx, unsigned i, struct lrx_stage_map *out)
{
	const struct tc_ctx *c = ctx;

	if (i == 0) {
		if (c->n_filters == 0)
			return false;
		*out = (struct lrx_stage_map){ .name = "filters", .type = "array",
					       .key_size = 4,
					       .value_size = TC_FILTERS_VALUE_SIZE,
					       .max_entries = c->n_filters,
					       .layout = &tc_filters_layout };
		return true;
	}
	const unsigned actions = tc_action_count(c);
	if (i == 1 && actions != 0) {
		*out = (struct lrx_stage_map){ .name = "actions", .type = "hash",
					       .key_size = 8,
					       .value_size = TC_ACTIONS_VALUE_SIZE,
					       .max_entries = actions,
					       .layout = &tc_actions_layout };
		return true;
	}
	const struct lrx_xdp_map *m = tc_prog_map(c, i - 1 - (actions != 0));
	if (m == NULL)
		return false;
	*out = (struct lrx_stage_map){ .name = m->name,
				       .type = lrx_xdp_map_type_name(m),
				       .key_size = m->key_size,
				       .value_size = m->value_size,
				       .max_entries = m->max_entries,
				       .layout = m->layout };
	return true;
}

bool tc_map_next(const void *ctx, unsigned i, uint32_t *cursor,
			void *key, void *value)
{
	const struct tc_ctx *c = ctx;

	if (i == 0) {
		if (*cursor >= c->n_filters)
			return false;
		const struct tc_filter_run *r = &c->run[*cursor];
		uint64_t v[3] = { r->runs, r->packets, r->bytes };
		memcpy(key, cursor, 4);
		memcpy(value, v, sizeof(v));
		(*cursor)++;
		return true;
	}
	const unsigned actions = tc_action_count(c);
	if (i == 1 && actions != 0) {
		uint32_t k[2];
		uint64_t v[4];
		if (!tc_action_row(c, *cursor, k, v))
			return false;
		memcpy(key, k, sizeof(k));
		memcpy(value, v, sizeof(v));
		(*cursor)++;
		return true;
	}
	const struct lrx_xdp_map *m = tc_prog_map(c, i - 1 - (actions != 0));
	return m && lrx_xdp_map_next(m, cursor, key, value);
}

/* telemetry's map_update/map_delete: the map of that name of every bpf
 * filter's object, as map_init (the filters table is the stage's own) */
void tc_map_write(void *ctx, struct lrx_stage_map_write *w)
{
	struct tc_ctx *c = ctx;
	unsigned progs = 0;

	for (unsigned f = 0; c->run && f < c->n_filters; f++)
		if (c->run[f].prog && ++progs)
			lrx_bpf_prog_map_write(c->run[f].prog, w);
	if (progs == 0) /* the parameter is still checked */
		lrx_bpf_prog_map_write(NULL, w);
}
