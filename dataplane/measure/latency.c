/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "latency.h"

void lrx_latency_bucket_range(unsigned i, uint64_t *lowest, uint64_t *highest)
{
	if (i < 2u << LRX_LATENCY_SUB_BITS) {
		*lowest = *highest = i;
		return;
	}
	/* inverse of lrx_latency_bucket: i = shift * 32 + (v >> shift) with
	 * v >> shift in 32..63 */
	unsigned shift = (i >> LRX_LATENCY_SUB_BITS) - 1;
	uint64_t top = i - ((uint64_t)shift << LRX_LATENCY_SUB_BITS);
	*lowest = top << shift;
	*highest = *lowest + (UINT64_C(1) << shift) - 1;
}

uint64_t lrx_latency_hist_count(const struct lrx_latency_hist *h)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < LRX_LATENCY_BUCKETS; i++)
		n += h->counts[i];
	return n;
}

double lrx_latency_hist_quantile(const struct lrx_latency_hist *h, double q)
{
	uint64_t n = lrx_latency_hist_count(h);
	if (n == 0)
		return -1;
	/* nearest rank: the smallest value with at least ceil(q * n) samples
	 * at or below it */
	double want = ceil(q * (double)n);
	uint64_t rank = want < 1 ? 1 : want > (double)n ? n : (uint64_t)want;
	uint64_t seen = 0;
	for (unsigned i = 0; i < LRX_LATENCY_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			uint64_t lo, hi;
			lrx_latency_bucket_range(i, &lo, &hi);
			return ((double)lo + (double)hi) / 2;
		}
	}
	return -1; /* not reached: seen ends at n >= rank */
}

double lrx_latency_hist_max(const struct lrx_latency_hist *h)
{
	for (unsigned i = LRX_LATENCY_BUCKETS; i-- > 0;)
		if (h->counts[i]) {
			uint64_t lo, hi;
			lrx_latency_bucket_range(i, &lo, &hi);
			return (double)hi;
		}
	return -1;
}

void lrx_latency_hist_merge(struct lrx_latency_hist *into,
			    const struct lrx_latency_hist *from)
{
	into->clamped += from->clamped;
	for (unsigned i = 0; i < LRX_LATENCY_BUCKETS; i++)
		into->counts[i] += from->counts[i];
}

double lrx_latency_ticks_to_ns(double ticks, uint64_t tsc_hz)
{
	if (ticks < 0 || tsc_hz == 0)
		return -1;
	return ticks * 1e9 / (double)tsc_hz;
}

int lrx_latency_init(struct lrx_latency *lat)
{
	memset(lat, 0, sizeof(*lat));
	/* the same registration the PMDs make (idempotent): a port that
	 * stamps packets writes this field and sets this flag */
	if (rte_mbuf_dyn_rx_timestamp_register(&lat->ts_offset, &lat->ts_flag) < 0)
		return -rte_errno;
	return 0;
}

void lrx_latency_record(struct lrx_latency *lat, struct rte_mbuf *const *pkts, uint32_t n)
{
	const uint64_t now = rte_rdtsc();
	for (uint32_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		if (!(m->ol_flags & lat->ts_flag))
			continue;
		uint16_t port = RTE_MIN(m->port, (uint16_t)RTE_MAX_ETHPORTS);
		if (!lat->port_tsc[port]) {
			lat->not_tsc[port]++;
			continue;
		}
		uint64_t stamp = *RTE_MBUF_DYNFIELD(m, lat->ts_offset,
						    const rte_mbuf_timestamp_t *);
		lrx_latency_hist_add(&lat->hist, now - stamp);
	}
}

void lrx_latency_turnaround(struct lrx_latency *lat, uint64_t *last, uint16_t n)
{
	const uint64_t now = rte_rdtsc();
	if (n != 0 && *last != 0)
		lrx_latency_hist_add_n(&lat->turnaround, now - *last, n);
	*last = now;
}
