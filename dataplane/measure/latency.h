/* SPDX-License-Identifier: BSD-3-Clause
 * Latency from a packet's RX timestamp to its verdict (sink completion),
 * recorded per lcore into a log-linear histogram when --latency is on.
 *
 * The histogram is HdrHistogram's layout with 2^5 linear sub-buckets per
 * power of two: values below 64 have a bucket each, above that a bucket is
 * 1/32 of its power of two wide, so any value is known to within 3.1%
 * (the reported bucket midpoint to within 1.6%). Values are TSC cycles;
 * above LRX_LATENCY_MAX_TICKS they are clamped (and counted as such).
 * Fixed size, no allocation, no locks: one per lcore, merged at the end.
 */
#ifndef LISTRX_LATENCY_H
#define LISTRX_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_config.h>

struct rte_mbuf;

#define LRX_LATENCY_SUB_BITS 5
#define LRX_LATENCY_MAX_BITS 26 /* 2^26 cycles: 22 ms at 3 GHz */
#define LRX_LATENCY_MAX_TICKS ((UINT64_C(1) << LRX_LATENCY_MAX_BITS) - 1)
#define LRX_LATENCY_BUCKETS \
	((LRX_LATENCY_MAX_BITS - LRX_LATENCY_SUB_BITS + 1) << LRX_LATENCY_SUB_BITS)

struct lrx_latency_hist {
	uint64_t clamped;        /* values above LRX_LATENCY_MAX_TICKS */
	uint64_t counts[LRX_LATENCY_BUCKETS];
};

/* Bucket of a value <= LRX_LATENCY_MAX_TICKS: below 64 the value itself,
 * above it the power of two (shift) and the top 6 bits (32..63). */
static inline unsigned lrx_latency_bucket(uint64_t ticks)
{
	unsigned msb = 63u - (unsigned)__builtin_clzll(ticks | 1);
	unsigned shift = msb > LRX_LATENCY_SUB_BITS ? msb - LRX_LATENCY_SUB_BITS : 0;
	return (shift << LRX_LATENCY_SUB_BITS) + (unsigned)(ticks >> shift);
}

/* n samples of one value */
static inline void lrx_latency_hist_add_n(struct lrx_latency_hist *h, uint64_t ticks, uint64_t n)
{
	/* a stamp ahead of now (TSC skew between cores) counts as 0 */
	ticks = (int64_t)ticks < 0 ? 0 : ticks;
	h->clamped += ticks > LRX_LATENCY_MAX_TICKS ? n : 0;
	ticks = ticks > LRX_LATENCY_MAX_TICKS ? LRX_LATENCY_MAX_TICKS : ticks;
	h->counts[lrx_latency_bucket(ticks)] += n;
}

static inline void lrx_latency_hist_add(struct lrx_latency_hist *h, uint64_t ticks)
{
	lrx_latency_hist_add_n(h, ticks, 1);
}

/* Smallest and largest value of bucket i. */
void lrx_latency_bucket_range(unsigned i, uint64_t *lowest, uint64_t *highest);
uint64_t lrx_latency_hist_count(const struct lrx_latency_hist *h);
/* Value at quantile q (0 < q <= 1, nearest rank): the midpoint of the
 * bucket holding that rank. -1 when the histogram is empty. */
double lrx_latency_hist_quantile(const struct lrx_latency_hist *h, double q);
/* Highest value of the highest non-empty bucket (no sample is above it);
 * -1 when empty. */
double lrx_latency_hist_max(const struct lrx_latency_hist *h);
/* into += from */
void lrx_latency_hist_merge(struct lrx_latency_hist *into,
			    const struct lrx_latency_hist *from);
/* Cycles to nanoseconds (rte_get_tsc_hz); negative (empty) stays -1. */
double lrx_latency_ticks_to_ns(double ticks, uint64_t tsc_hz);

/* One lcore's recorder: the histogram plus what it needs to read stamps. */
struct lrx_latency {
	int ts_offset;             /* rte_dynfield_timestamp */
	uint64_t ts_flag;          /* RTE_MBUF_DYNFLAG_RX_TIMESTAMP */
	/* by ethdev port id; the last entry is for an mbuf->port out of range */
	bool port_tsc[RTE_MAX_ETHPORTS + 1];     /* the port stamps with the TSC */
	uint64_t not_tsc[RTE_MAX_ETHPORTS + 1];  /* stamped, but not by the TSC:
						  * not recorded */
	uint64_t at_exit;          /* completed by the drain after the run: held
				    * until it stopped, not recorded */
	struct lrx_latency_hist hist;
	/* turnaround: TSC from the end of the queue's previous poll to the
	 * end of this one, its transmit, frees and TX cleaning included, a
	 * sample per packet received (lrx_latency_turnaround) */
	struct lrx_latency_hist turnaround;
};

/* Registers (or finds) the RX timestamp dynfield and flag. Returns 0 or
 * -errno. port_tsc is all false: the caller marks the TSC-stamped ports. */
int lrx_latency_init(struct lrx_latency *lat);

/* At sink completion: one rte_rdtsc() for the poll, then for each of the
 * sink's n packets that carries an RX timestamp from a TSC-stamped port,
 * now - stamp into the histogram (stamps of other clocks are counted in
 * not_tsc: a NIC clock is not comparable with the TSC). */
void lrx_latency_record(struct lrx_latency *lat, struct rte_mbuf *const *pkts, uint32_t n);

/* At the end of every poll of a queue (n packets received, 0 too): one
 * rte_rdtsc(); with n > 0 and a previous poll of the queue (*last, the
 * TSC at its end; 0: none), n samples of the TSC since then; *last = now.
 * In a closed loop (a client sends its next request when the reply
 * leaves: request-response with every poll full) that is each request's
 * wait and service, with whatever TX cleaning the loop does between
 * (docs/measuring.md, "Latency"). */
void lrx_latency_turnaround(struct lrx_latency *lat, uint64_t *last, uint16_t n);

#endif
