/* SPDX-License-Identifier: BSD-3-Clause
 * `touch`: reads the first `bytes` bytes of each packet (as a stage that
 * parses headers would) and continues. The sum it keeps makes the reads
 * observable, so the compiler cannot drop them; the packet is not written.
 */
#include <string.h>

#include "base_stages.h"

struct touch_ctx {
	uint64_t sum;       /* counter "sum": folded packet words */
	uint64_t bytes_read; /* counter "bytes_read" */
	uint32_t bytes;
};

static inline lrx_next_t touch_core(struct touch_ctx *tc, struct rte_mbuf *pkt)
{
	const uint8_t *data = rte_pktmbuf_mtod(pkt, const uint8_t *);
	uint32_t len = RTE_MIN(tc->bytes, (uint32_t)rte_pktmbuf_data_len(pkt));
	uint64_t sum = 0;
	uint32_t off = 0;

	for (; off + 8 <= len; off += 8) {
		uint64_t word;
		memcpy(&word, data + off, sizeof(word));
		sum += word;
	}
	for (; off < len; off++)
		sum += data[off];
	tc->sum += sum;
	tc->bytes_read += len;
	return LRX_NEXT_CONTINUE_V;
}

LRX_STAGE_ENTRIES(touch, touch_core)

struct touch_conf {
	uint32_t bytes;
};

static int touch_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct touch_conf *conf = init->conf;
	((struct touch_ctx *)ctx)->bytes = conf->bytes;
	return 0;
}

static const struct lrx_value_key touch_keys[] = {
	LRX_KEY_UINT(struct touch_conf, bytes, "bytes", "64", 0, 65535,
		     "bytes of each packet to read (capped at the first segment)"),
	{ .name = NULL },
};

static const struct lrx_stage_counter touch_counters[] = {
	LRX_STAGE_COUNTER(struct touch_ctx, "sum", sum),
	LRX_STAGE_COUNTER(struct touch_ctx, "bytes_read", bytes_read),
	{ .name = NULL },
};

LRX_STAGE_DEFINE(lrx_stage_touch, struct touch_ctx, struct touch_conf, touch_keys,
		 touch_counters,
	.name = "touch",
	.summary = "reads N bytes of each packet (key bytes), continues",
	.init = touch_init,
	.process_one = lrx_touch_process_one,
	.process_burst = lrx_touch_process_burst,
)
